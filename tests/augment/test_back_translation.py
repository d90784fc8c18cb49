"""Back-translation through tiny random OPUS-MT-format directories built here (a sentencepiece model
trained on a few lines, a 1-layer Marian), checked against transformers' `generate` called directly,
one utterance at a time, on the models in memory."""
import io
import json
import os
import re
import shutil

import numpy as np
import pytest
import sentencepiece
import tensorflow as tf
from safetensors import safe_open
from safetensors.numpy import save_file
from transformers import GenerationConfig, MarianConfig, MarianTokenizer, TFMarianMTModel

from tfdialemb.augment.back_translation import BackTranslation
from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.encoders.errors import CheckpointError

pytestmark = pytest.mark.filterwarnings("ignore:Recommended. pip install sacremoses")

CORPUS = ["hello there", "how are you", "i am fine thanks", "what about you", "good morning",
          "book a table for two", "the train leaves at noon", "thank you very much"]
MAX_LENGTH = 6
DIALOGUES = [
    Dialogue("d0", (Turn("user", "hello there", {"intent": "greet"}), Turn("system", "how are you"),
                    Turn("user", "i am fine thanks")), {"domain": "chat"}),
    Dialogue("d1", (Turn("a", "book a table for two, the train leaves at noon"), Turn("b", "hello there"))),
    Dialogue("d2", (Turn("a", "thank you very much"),)),
]
DISTINCT = 5
"""Distinct texts of DIALOGUES (the long one is cut to MAX_LENGTH tokens)."""


def _spm_model():
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS * 3), model_writer=model, vocab_size=40, character_coverage=1.0,
        pad_id=-1, bos_id=-1, eos_id=-1, unk_id=0, hard_vocab_limit=False, minloglevel=2)
    return model.getvalue()


def _write_marian(directory, spm, seed, source_lang, target_lang, extra_tokens=()):
    """An OPUS-MT-format directory (vocab ids: </s>, <unk>, the pieces, `extra_tokens`, <pad>, as
    transformers' Marian converter numbers them) and the TF model written to it. The seeds of the
    fixture give distinct translations of the distinct texts of DIALOGUES, both ways."""
    os.makedirs(directory)
    for name in ("source.spm", "target.spm"):
        with open(os.path.join(directory, name), "wb") as f:
            f.write(spm)
    processor = sentencepiece.SentencePieceProcessor(model_proto=spm)
    vocab = {"</s>": 0, "<unk>": 1}
    for piece in [processor.id_to_piece(i) for i in range(processor.get_piece_size())] + list(extra_tokens):
        vocab.setdefault(piece, len(vocab))
    pad = vocab.setdefault("<pad>", len(vocab))
    with open(os.path.join(directory, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f)
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"source_lang": source_lang, "target_lang": target_lang}, f)
    config = MarianConfig(vocab_size=len(vocab), d_model=16, encoder_layers=1, decoder_layers=1,
                          encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                          decoder_ffn_dim=32, max_position_embeddings=32, pad_token_id=pad, eos_token_id=0,
                          decoder_start_token_id=pad, scale_embedding=True)
    model = TFMarianMTModel(config)
    model(model.dummy_inputs)
    # Weights from `seed` alone (Keras initializers draw from a process-wide state); the position
    # tables stay sinusoidal, the layer norms the identity. A random decoder tends to repeat
    # itself whatever the source: its cross-attention output is scaled up to make it read it.
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        if not re.search(r"embed_positions|layer_norm", weight.name):
            scale = 20.0 if "encoder_attn/out_proj/kernel" in weight.name else 1.0
            weight.assign((scale * rng.normal(size=weight.shape)).astype(np.float32))
    # As OPUS-MT's generation_config.json, less bad_words_ids (slow in eager mode) and with 3 beams:
    # the operation must override the 512 tokens.
    model.generation_config = GenerationConfig(bos_token_id=0, decoder_start_token_id=pad, eos_token_id=0,
                                               forced_eos_token_id=0, max_length=512, num_beams=3,
                                               pad_token_id=pad)
    model.save_pretrained(directory)
    return model


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    """(forward dir, backward dir, forward model, backward model): en→ru and ru→en."""
    root = tmp_path_factory.mktemp("marian")
    spm = _spm_model()
    forward = _write_marian(str(root / "opus-mt-en-ru"), spm, 2, "opus-mt-en", "ru")
    backward = _write_marian(str(root / "opus-mt-ru-en"), spm, 10, "opus-mt-ru", "en")
    return str(root / "opus-mt-en-ru"), str(root / "opus-mt-ru-en"), forward, backward


def _one_at_a_time(directory, model, text, beams, prefix="", max_length=MAX_LENGTH):
    """`text` translated alone by transformers' generate on the model in memory."""
    tokenizer = MarianTokenizer(os.path.join(directory, "source.spm"), os.path.join(directory, "target.spm"),
                                os.path.join(directory, "vocab.json"))
    inputs = tokenizer(prefix + text, truncation=True, max_length=max_length, return_tensors="tf")
    output = model.generate(**inputs, num_beams=beams, do_sample=False, max_length=max_length)
    return tokenizer.decode(output[0], skip_special_tokens=True)


def _one_at_a_time_round_trip(marian, beams, max_length=MAX_LENGTH):
    """{text: (pivot translation, back-translation)} of each distinct text of DIALOGUES."""
    forward_dir, backward_dir, forward, backward = marian
    texts = dict.fromkeys(t.text for d in DIALOGUES for t in d.turns)
    for text in texts:
        pivot = _one_at_a_time(forward_dir, forward, text, beams, max_length=max_length)
        texts[text] = (pivot, _one_at_a_time(backward_dir, backward, pivot, beams, max_length=max_length))
    return texts


def test_batched_beam_search_back_translation_equals_one_utterance_at_a_time(marian, beams=2):
    forward_dir, backward_dir, _, _ = marian
    operation = BackTranslation(f"{forward_dir},{backward_dir}", pivot="ru", translation_beams=beams,
                                translation_batch_size=3, translation_max_length=MAX_LENGTH)
    results = operation.augment(DIALOGUES)
    expected = _one_at_a_time_round_trip(marian, beams)
    # Distinct texts translate to distinct texts both ways: a turn given another's translation would show.
    assert len({pivot for pivot, _ in expected.values()}) == len({back for _, back in expected.values()}) == DISTINCT
    # A blank back-translation keeps the turn's text.
    assert [[t.text for t in r.turns] for r in results] == [[expected[t.text][1] or t.text for t in d.turns]
                                                            for d in DIALOGUES]
    for original, result in zip(DIALOGUES, results):
        assert result.id == original.id
        assert [t.speaker for t in result.turns] == [t.speaker for t in original.turns]
        assert [dict(t.fields) for t in result.turns] == [dict(t.fields) for t in original.turns]
        assert result.labels == {**original.labels, "source_id": original.id, "augmentations": ["translate"]}


def test_greedy_decoding_is_deterministic_and_independent_of_the_batch(marian):
    forward_dir, backward_dir, _, _ = marian
    operation = BackTranslation((forward_dir, backward_dir), translation_beams=1, translation_max_length=MAX_LENGTH)
    first = operation.augment(DIALOGUES)
    operation.batch_size = 3
    assert operation.augment(DIALOGUES[::-1]) == first[::-1]


def test_zero_beams_decode_with_the_models_own_beam_width(marian):
    forward_dir, backward_dir, forward, _ = marian
    operation = BackTranslation([forward_dir, backward_dir], translation_max_length=MAX_LENGTH)
    text = DIALOGUES[0].turns[1].text
    assert operation.forward.translate([text], 0, 4, MAX_LENGTH) == [_one_at_a_time(forward_dir, forward, text, 3)]


def test_a_blank_back_translation_keeps_the_turn_and_the_dialogue_is_still_returned(marian):
    forward_dir, backward_dir, _, _ = marian
    operation = BackTranslation(f"{forward_dir},{backward_dir}", translation_beams=1,
                                translation_max_length=MAX_LENGTH)
    bias = operation.backward.model.bias_layer.bias
    bias.assign(tf.one_hot([0], bias.shape[-1]) * 1e4)  # </s> first: every back-translation is blank
    results = operation.augment(DIALOGUES)
    assert [[t.text for t in r.turns] for r in results] == [[t.text for t in d.turns] for d in DIALOGUES]
    assert all(r.labels["augmentations"] == ["translate"] for r in results)


def test_a_multi_target_forward_model_gets_the_pivot_token(marian, tmp_path):
    _, backward_dir, _, _ = marian
    spm = _spm_model()
    multi_dir = str(tmp_path / "opus-mt-en-mul")
    multi = _write_marian(multi_dir, spm, 5, "opus-mt-en", "mul", extra_tokens=(">>de<<", ">>ru<<"))
    operation = BackTranslation([multi_dir, backward_dir], pivot="ru", translation_beams=1,
                                translation_max_length=MAX_LENGTH)
    assert operation.pivot_token == ">>ru<<"
    text = DIALOGUES[0].turns[0].text
    pivot = _one_at_a_time(multi_dir, multi, text, 1, prefix=">>ru<< ")
    assert operation.forward.translate([text], 1, 4, MAX_LENGTH, ">>ru<<") == [pivot]
    assert pivot not in (_one_at_a_time(multi_dir, multi, text, 1, prefix=">>de<< "),
                         _one_at_a_time(multi_dir, multi, text, 1))
    with pytest.raises(CheckpointError, match=r"opus-mt-en-mul: .*>>fr<< is not one of them \(>>de<<, >>ru<<\)"):
        BackTranslation([multi_dir, backward_dir], pivot="fr")
    with pytest.raises(CheckpointError, match=r"opus-mt-en-mul: translates into several languages"):
        BackTranslation([backward_dir, multi_dir], pivot="ru")


def _pytorch_name(tf_name):
    """MarianMTModel's state-dict name of a TFMarianMTModel variable, by hand:
    tf_marian_mt_model/model/encoder/layers.0/fc1/kernel:0 → model.encoder.layers.0.fc1.weight."""
    name = re.sub(r"^(model\.shared/)+|^tf_marian_mt_model(_\d+)?/", "", tf_name.replace(":0", ""))
    name = re.sub(r"/(kernel|gamma|embeddings)$", "/weight", re.sub(r"/beta$", "/bias", name))
    return name.replace("/", ".") if name != "embeddings" else "model.shared.weight"


def test_a_pytorch_layout_safetensors_directory_reads_without_torch(marian, tmp_path):
    forward_dir, backward_dir, forward, _ = marian
    converted = str(tmp_path / "opus-mt-en-ru")
    shutil.copytree(forward_dir, converted, ignore=shutil.ignore_patterns("tf_model.h5"))
    original = {_pytorch_name(w.name): (w.name, w.numpy()) for w in forward.weights}
    state = {name: np.ascontiguousarray(value.T) if tf_name.endswith("kernel:0") else value
             for name, (tf_name, value) in original.items()}
    assert "model.shared.weight" in state and "model.decoder.layers.0.fc1.weight" in state
    save_file(state, os.path.join(converted, "model.safetensors"), metadata={"format": "pt"})
    read = BackTranslation([converted, backward_dir], translation_beams=1, translation_max_length=MAX_LENGTH)
    texts = [t.text for t in DIALOGUES[2].turns]
    assert read.forward.translate(texts, 1, 4, MAX_LENGTH) == [_one_at_a_time(forward_dir, forward, t, 1)
                                                                for t in texts]
    read_weights = {_pytorch_name(w.name): w.numpy() for w in read.forward.model.weights}
    assert read_weights.keys() == original.keys()
    for name, (_, value) in original.items():
        np.testing.assert_array_equal(read_weights[name], value, err_msg=name)
    fc1 = "model.decoder.layers.0.fc1.weight"
    save_file({**state, fc1: state[fc1][:, :3]}, os.path.join(converted, "model.safetensors"),
              metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match=r"model.safetensors: its weights do not fit config.json"):
        BackTranslation([converted, backward_dir])
    save_file({name: value for name, value in state.items() if name != fc1},
              os.path.join(converted, "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match=r"model.safetensors: lacks 1 weights of the Marian model, e.g. " + fc1):
        BackTranslation([converted, backward_dir])


def test_a_tensorflow_layout_safetensors_directory_reads_too(marian, tmp_path):
    forward_dir, backward_dir, forward, _ = marian
    converted = str(tmp_path / "opus-mt-en-ru")
    shutil.copytree(forward_dir, converted, ignore=shutil.ignore_patterns("tf_model.h5"))
    forward.save_pretrained(converted, safe_serialization=True)
    assert not os.path.exists(os.path.join(converted, "tf_model.h5"))
    with safe_open(os.path.join(converted, "model.safetensors"), framework="numpy") as f:
        assert f.metadata()["format"] == "tf"
    read = BackTranslation([converted, backward_dir])
    original = {_pytorch_name(w.name): w.numpy() for w in forward.weights}
    read_weights = {_pytorch_name(w.name): w.numpy() for w in read.forward.model.weights}
    assert read_weights.keys() == original.keys()
    for name, value in original.items():
        np.testing.assert_array_equal(read_weights[name], value, err_msg=name)


def _without(directory, tmp_path, *names):
    copy = str(tmp_path / os.path.basename(directory))
    shutil.copytree(directory, copy, ignore=shutil.ignore_patterns(*names))
    return copy


def test_missing_or_incomplete_directories_are_named(marian, tmp_path):
    forward_dir, backward_dir, _, _ = marian
    missing = str(tmp_path / "opus-mt-en-xx")
    with pytest.raises(CheckpointError, match=r"opus-mt-en-xx: translation model directory does not exist"):
        BackTranslation([missing, backward_dir])
    no_spm = _without(forward_dir, tmp_path / "a", "target.spm")
    with pytest.raises(CheckpointError, match=r"opus-mt-en-ru: lacks target.spm; found \[.*'source.spm'"):
        BackTranslation([no_spm, backward_dir])
    only_bin = _without(forward_dir, tmp_path / "b", "tf_model.h5")
    open(os.path.join(only_bin, "pytorch_model.bin"), "wb").close()
    with pytest.raises(CheckpointError, match=r"holds only pytorch_model.bin, .*from_pt=True"):
        BackTranslation([only_bin, backward_dir])
    truncated = _without(forward_dir, tmp_path / "d")
    with open(os.path.join(truncated, "tf_model.h5"), "r+b") as f:
        f.truncate(100)
    with pytest.raises(CheckpointError, match=r"opus-mt-en-ru: its weights cannot be read as a Marian model"):
        BackTranslation([truncated, backward_dir])
    no_weights = _without(forward_dir, tmp_path / "c", "tf_model.h5")
    with pytest.raises(CheckpointError, match=r"lacks the weights \(tf_model.h5 or model.safetensors\)"):
        BackTranslation([no_weights, backward_dir])
    with pytest.raises(ValueError, match=r"--translation_models='only_one': expected two OPUS-MT directories"):
        BackTranslation("only_one")
    with pytest.raises(ValueError, match=r"--translation_batch_size=0: must be at least 1"):
        BackTranslation([forward_dir, backward_dir], translation_batch_size=0)


def test_models_that_do_not_go_through_the_pivot_are_refused(marian, tmp_path):
    forward_dir, backward_dir, _, _ = marian
    with pytest.raises(CheckpointError, match=r"opus-mt-en-ru: its target language is 'ru' .* not the pivot 'de'"):
        BackTranslation([forward_dir, backward_dir], pivot="de")
    with pytest.raises(CheckpointError, match=r"opus-mt-en-ru: its source language is 'en' .* not the pivot 'ru'"):
        BackTranslation([forward_dir, forward_dir], pivot="ru")
    into_german = _without(backward_dir, tmp_path, "tokenizer_config.json")
    with open(os.path.join(into_german, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"source_lang": "opus-mt-ru", "target_lang": "de"}, f)
    with pytest.raises(CheckpointError, match=r"opus-mt-en-ru translates from 'en' but .*opus-mt-ru-en back into 'de'"):
        BackTranslation([forward_dir, into_german], pivot="ru")


@pytest.mark.slow
def test_xla_compiled_decoding_equals_one_utterance_at_a_time(marian):
    """Batches of two: padded to 16 tokens, or to the 20-token cap; 4 compiles, some seconds each."""
    forward_dir, backward_dir, _, _ = marian
    expected = _one_at_a_time_round_trip(marian, 2, max_length=20)
    operation = BackTranslation([forward_dir, backward_dir], translation_beams=2, translation_batch_size=2,
                                translation_max_length=20, translation_xla=True)
    assert [[t.text for t in r.turns] for r in operation.augment(DIALOGUES)] == [
        [expected[t.text][1] or t.text for t in d.turns] for d in DIALOGUES]
