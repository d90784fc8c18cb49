"""dial2vec's RoBERTa and T5 baselines: the loaded encoder's masked mean equals the reference
transformers model's mean over input ids assembled here, one dialogue at a time, for either
--dial2vec_plm_input; missing files and weights are named."""
import json
import os
import shutil

import numpy as np
import pytest

import tiny_plm
from tfdialemb.baselines.plm_mean import PlmMeanDialogueEmbedder
from tfdialemb.baselines.transformers_encoder import load_transformers_encoder
from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.encoders import CheckpointError

DIALOGUES = [Dialogue("d0", (Turn("a", "hello world"), Turn("b", "good morning, how are you?"))),
             Dialogue("d1", (Turn("a", "book a taxi"), Turn("b", "to the hotel"), Turn("a", "please"))),
             Dialogue("d2", (Turn("a", "I need help"), Turn("b", "fine thanks")))]


@pytest.fixture(scope="module", name="roberta")
def fixture_roberta(tmp_path_factory):
    return tiny_plm.roberta_dir(tmp_path_factory.mktemp("roberta"))


@pytest.fixture(scope="module", name="t5")
def fixture_t5(tmp_path_factory):
    return tiny_plm.t5_dir(tmp_path_factory.mktemp("t5"))


def _reference_mean(model, ids, position_ids=None, epsilon=0.0):
    """Mean of the reference model's last hidden states over one unpadded sequence."""
    inputs = {"input_ids": np.array([ids])}
    if position_ids is not None:
        inputs["position_ids"] = np.array([position_ids])
    hidden = model(**inputs, training=False).last_hidden_state.numpy()[0].astype(np.float64)
    return hidden.sum(axis=0) / (len(ids) + epsilon)


def _piece_ids(tokenizer, text):
    return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))


@pytest.mark.parametrize("layout", ["paper", "released"])
def test_roberta_mean_equals_the_reference_model(roberta, layout):
    directory, reference = roberta
    encoder = load_transformers_encoder(directory)
    embedder = PlmMeanDialogueEmbedder(encoder, layout, max_length=32)
    tokenizer = encoder.tokenizer
    expected = []
    for dialogue in DIALOGUES:
        texts = [turn.text for turn in dialogue.turns]
        if layout == "paper":   # <s> pieces of the space-joined text </s>, RoBERTa's own positions
            ids = [0] + _piece_ids(tokenizer, " ".join(texts)) + [2]
            expected.append(_reference_mean(reference, ids))
        else:                   # <s> pieces of each turn alone, positions 0..n-1, count + 1e-6
            ids = [0] + [i for text in texts for i in _piece_ids(tokenizer, text)]
            expected.append(_reference_mean(reference, ids, list(range(len(ids))), 1e-6))
        assert embedder.token_ids(dialogue) == ids
    np.testing.assert_allclose(embedder.embed(DIALOGUES, batch_size=2), expected, rtol=1e-4, atol=1e-5)
    assert embedder.embed_views(DIALOGUES[:1]).keys() == {"mean"}


def test_released_roberta_turns_lose_the_space_before_their_first_word(roberta):
    encoder = load_transformers_encoder(roberta[0])
    paper, released = (PlmMeanDialogueEmbedder(encoder, layout, max_length=32).token_ids(DIALOGUES[0])
                       for layout in ("paper", "released"))
    second_turn = 1 + len(encoder.tokenizer.tokenize("hello world"))   # after <s> and turn 1
    assert encoder.tokenizer.convert_ids_to_tokens(paper)[second_turn].startswith("Ġ")   # " good"
    assert not encoder.tokenizer.convert_ids_to_tokens(released)[second_turn].startswith("Ġ")
    truncated = PlmMeanDialogueEmbedder(encoder, "paper", max_length=4).token_ids(DIALOGUES[0])
    assert truncated == paper[:3] + [2]


@pytest.mark.parametrize("layout", ["paper", "released"])
def test_t5_mean_equals_the_reference_encoder(t5, layout):
    directory, reference = t5
    encoder = load_transformers_encoder(directory)
    embedder = PlmMeanDialogueEmbedder(encoder, layout, max_length=64)
    expected = []
    for dialogue in DIALOGUES:
        texts = [turn.text for turn in dialogue.turns]
        if layout == "paper":
            ids = _piece_ids(encoder.tokenizer, " ".join(texts)) + [1]
        else:
            ids = [i for text in texts for i in _piece_ids(encoder.tokenizer, text)] + [1]
        assert embedder.token_ids(dialogue) == ids
        expected.append(_reference_mean(reference, ids, epsilon=0.0 if layout == "paper" else 1e-6))
    np.testing.assert_allclose(embedder.embed(DIALOGUES, batch_size=2), expected, rtol=1e-4, atol=1e-5)


def _broken(source, target, change):
    shutil.copytree(source, target)
    change(str(target))
    return str(target)


def _set_config(directory, **values):
    with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    config.update(values)
    with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)


def _drop_weight(directory):
    from safetensors.numpy import load_file, save_file

    path = os.path.join(directory, "model.safetensors")
    state = load_file(path)
    del state["roberta.encoder.layer.0.output.dense.weight"]
    save_file(state, path)


@pytest.mark.parametrize("change, message", [
    (lambda d: os.remove(os.path.join(d, "config.json")), "no config.json"),
    (lambda d: _set_config(d, model_type="bert"), "model_type 'bert'; this reads roberta or t5"),
    (lambda d: os.rename(os.path.join(d, "model.safetensors"), os.path.join(d, "pytorch_model.bin")),
     "lacks model.safetensors (pytorch_model.bin needs torch"),
    (lambda d: [os.remove(os.path.join(d, n)) for n in ("tokenizer.json", "merges.txt")],
     "lacks the roberta tokenizer (tokenizer.json or vocab.json + merges.txt)"),
    (_drop_weight, "lacks 1 weights of the roberta encoder, e.g. roberta.encoder.layer.0.output.dense.weight"),
    (lambda d: _set_config(d, hidden_size=4), "its weights do not fit config.json"),
])
def test_a_broken_directory_is_named(roberta, tmp_path, change, message):
    directory = _broken(roberta[0], tmp_path / "broken", change)
    with pytest.raises(CheckpointError, match=message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        load_transformers_encoder(directory)


def test_roberta_max_length_is_bounded_by_its_positions(roberta):
    with pytest.raises(ValueError, match="max_length must be an int from 2 to 32"):
        PlmMeanDialogueEmbedder(load_transformers_encoder(roberta[0]), "paper", max_length=33)
