"""Domain-adaptive post-training (mlm_nsp): the examples, the masked pairs the pipeline makes, the
loss recomputed from the encoder's outputs, and the next-sentence head read from each checkpoint
layout against transformers' TFBertForPreTraining."""
import os

import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.encoders import CheckpointError, Encoder, EncoderConfig, load_pretrained
from tfdialemb.encoders.pretraining_heads import NSP_HEAD, load_head, read_head
from tfdialemb.methods.mlm_nsp import MlmNspSpec
from tfdialemb.methods.models.mlm_nsp import PostTrainingModel, next_sentence_variables
from tfdialemb.methods.spec import TrainingRun
from tiny_corpus import TOKENIZER, utterance_pool

OWN = ["hello", "how are you", "fine thanks", "book a taxi"]
OTHER = ["good morning", "need hotel", "the cafe"]
HIDDEN = tiny_bert.HF_CONFIG["hidden_size"]


def test_every_turn_follows_its_history_or_a_random_utterance_half_the_time():
    dialogue = Dialogue("d0", tuple(Turn("ab"[i % 2], t) for i, t in enumerate(OWN)))
    builder = make_builder("mlm_nsp", {"short_context_prob": 0.0})
    labels = []
    for seed in range(30):
        examples = list(builder.examples(dialogue, 0, np.random.default_rng(seed), utterance_pool(OWN, OTHER)))
        assert [e["context"] for e in examples] == [OWN[:1], OWN[:2], OWN[:3]]
        for k, example in enumerate(examples, start=1):
            if example["next_sentence_labels"] == 0:
                assert example["next"] == OWN[k]
            else:
                assert example["next_sentence_labels"] == 1 and example["next"] in OTHER
            labels.append(example["next_sentence_labels"])
    assert 0.3 < np.mean(labels) < 0.7
    short = make_builder("mlm_nsp", {"short_context_prob": 1.0})
    shortened = False
    for seed in range(20):
        examples = short.examples(dialogue, 0, np.random.default_rng(seed), utterance_pool(OWN, OTHER))
        for k, example in enumerate(examples, start=1):
            context = example["context"]
            assert 1 <= len(context) <= k and context == OWN[k - len(context):k]  # the latest turns
            shortened |= len(context) < k
    assert shortened


def test_the_pipeline_packs_and_masks_pairs(tmp_path, hf_safetensors_dir):
    dialogues = [Dialogue("d0", tuple(Turn("ab"[i % 2], t) for i, t in enumerate(OWN))),
                 Dialogue("d1", tuple(Turn("ab"[i % 2], t) for i, t in enumerate(OTHER)))]
    write_dialogues(dialogues, str(tmp_path / "train.jsonl"))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"), make_builder("mlm_nsp"), TOKENIZER,
          BuildOptions(max_length=32, num_shards=1))
    spec = MlmNspSpec()
    params = spec.resolve({"mask_prob": 0.3})
    stored = next(iter(make_dataset(str(tmp_path / "built"), 5, training=False)))
    batch = next(iter(spec.batches(make_dataset(str(tmp_path / "built"), 5, training=False), TOKENIZER, params,
                                   TrainingRun(hf_safetensors_dir, 5, 32, 0))))
    eot = TOKENIZER.token_id("[EOT]")
    for row in range(5):
        n = int(batch["input_mask"][row].numpy().sum())
        ids = batch["input_word_ids"][row, :n].numpy().copy()
        positions = batch["masked_lm_positions"][row].numpy()
        weights = batch["masked_lm_weights"][row].numpy()
        for position, original, weight in zip(positions, batch["masked_lm_ids"][row].numpy(), weights):
            if weight:
                ids[position] = original
        turns = [t for t in stored["context"][row].numpy() if t.any()]
        expected = [TOKENIZER.cls_id]
        for turn in turns:
            expected += [i for i in turn[1:] if i not in (0, TOKENIZER.sep_id)] + [eot]
        first = len(expected) + 1
        nxt = stored["next"][row].numpy()
        expected += [TOKENIZER.sep_id] + [i for i in nxt[1:] if i not in (0, TOKENIZER.sep_id)] + [eot, TOKENIZER.sep_id]
        assert ids.tolist() == expected
        assert batch["input_type_ids"][row, :n].numpy().tolist() == [0] * first + [1] * (n - first)
        chosen = positions[weights > 0]
        assert not {int(expected[p]) for p in chosen} & {TOKENIZER.cls_id, TOKENIZER.sep_id}
        assert int(batch["next_sentence_labels"][row]) == int(stored["next_sentence_labels"][row])


def test_loss_is_masked_lm_plus_next_sentence_cross_entropy():
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.0, attention_dropout=0.0)
    tf.keras.utils.set_random_seed(5)
    model = PostTrainingModel(Encoder(config))
    batch = {
        "input_word_ids": np.array([[2, 4, 20, 4, 3, 21, 3], [2, 4, 3, 30, 3, 0, 0]], np.int32),
        "input_mask": np.array([[1] * 7, [1] * 5 + [0, 0]], np.int32),
        "input_type_ids": np.array([[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 0, 0]], np.int32),
        "masked_lm_positions": np.array([[1, 3], [1, 0]], np.int32),
        "masked_lm_ids": np.array([[21, 22], [30, 0]], np.int32),
        "masked_lm_weights": np.array([[1, 1], [1, 0]], np.float32),
        "next_sentence_labels": np.array([0, 1], np.int32),
    }
    losses, metrics = model.per_example_loss(batch, training=False)
    outputs = model.encoder({k: batch[k] for k in ("input_word_ids", "input_mask", "input_type_ids")})
    pooled = outputs["pooled_output"].numpy()
    kernel, bias = model.next_sentence.kernel.numpy(), model.next_sentence.bias.numpy()
    logits = pooled @ kernel + bias
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nsp = -log_probs[[0, 1], batch["next_sentence_labels"]]
    np.testing.assert_allclose(metrics["next_sentence_loss"].numpy(), nsp, rtol=1e-5)
    np.testing.assert_allclose(losses.numpy(), metrics["masked_lm_loss"].numpy() + nsp, rtol=1e-5)
    mlm_logits = model(batch, training=False).numpy().astype(np.float64)
    mlm_log_probs = mlm_logits - np.log(np.exp(mlm_logits).sum(-1, keepdims=True))
    ce = -np.take_along_axis(mlm_log_probs, batch["masked_lm_ids"][..., None], axis=-1)[..., 0]
    np.testing.assert_allclose(metrics["masked_lm_loss"].numpy(), [(ce[0, 0] + ce[0, 1]) / 2, ce[1, 0]], rtol=1e-5)


IDS = np.array([[2, 20, 4, 22, 3, 25, 26, 3], [2, 30, 3, 32, 3, 0, 0, 0]], np.int32)
MASK = (np.arange(8) < np.array([[8], [5]])).astype(np.int32)
TYPES = np.array([[0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0]], np.int32)


def _pretraining_reference(tiny_state, hidden_act="gelu"):
    from transformers import BertConfig, TFBertForPreTraining
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    rng = np.random.default_rng(11)
    state = {"bert." + k: v for k, v in tiny_state.items()}
    state.update({
        "cls.predictions.transform.dense.weight": rng.normal(size=(HIDDEN, HIDDEN)).astype(np.float32) * 0.1,
        "cls.predictions.transform.dense.bias": np.zeros(HIDDEN, np.float32),
        "cls.predictions.transform.LayerNorm.weight": np.ones(HIDDEN, np.float32),
        "cls.predictions.transform.LayerNorm.bias": np.zeros(HIDDEN, np.float32),
        "cls.predictions.bias": np.zeros(tiny_bert.HF_CONFIG["vocab_size"], np.float32),
        "cls.seq_relationship.weight": rng.normal(size=(2, HIDDEN)).astype(np.float32),
        "cls.seq_relationship.bias": np.array([0.3, -0.2], np.float32),
    })
    model = TFBertForPreTraining(BertConfig(**dict(tiny_bert.HF_CONFIG, hidden_act=hidden_act)))
    model, info = load_pytorch_state_dict_in_tf2_model(model, state, output_loading_info=True)
    assert not info["missing_keys"] and not info["mismatched_keys"], info
    return state, model


def _our_next_sentence_logits(directory):
    model = PostTrainingModel(load_pretrained(directory).encoder)
    assert load_head(next_sentence_variables(model), NSP_HEAD, directory)
    pooled = model.encoder({"input_word_ids": IDS, "input_mask": MASK, "input_type_ids": TYPES})["pooled_output"]
    return model.next_sentence(pooled).numpy()


def _reference_logits(model):
    return model(input_ids=IDS, attention_mask=MASK, token_type_ids=TYPES,
                 training=False).seq_relationship_logits.numpy()


def test_next_sentence_head_of_safetensors_and_tf_h5_matches_transformers(tmp_path, tiny_state):
    state, reference = _pretraining_reference(tiny_state)
    expected = _reference_logits(reference)
    (tmp_path / "st").mkdir()
    (tmp_path / "h5").mkdir()
    safetensors_dir = tiny_bert.write_hf_safetensors_dir(tmp_path / "st", state)
    np.testing.assert_allclose(_our_next_sentence_logits(safetensors_dir), expected, atol=1e-5)
    h5_dir = tiny_bert.write_hf_h5_dir(tmp_path / "h5", reference)
    np.testing.assert_allclose(_our_next_sentence_logits(h5_dir), expected, atol=1e-5)


def test_next_sentence_head_of_a_google_checkpoint(tmp_path, tiny_state):
    state, reference = _pretraining_reference(tiny_state, hidden_act="gelu_new")
    directory = tmp_path / "google"
    directory.mkdir()
    tiny_bert.write_google_dir(directory, tiny_state, with_optimizer_slots=False)
    tensors = tiny_bert.google_names(tiny_state, tiny_bert.HF_CONFIG["num_hidden_layers"])
    tensors["cls/seq_relationship/output_weights"] = state["cls.seq_relationship.weight"]  # [2, hidden]
    tensors["cls/seq_relationship/output_bias"] = state["cls.seq_relationship.bias"]
    names = sorted(tensors)
    tf.raw_ops.SaveV2(prefix=os.path.join(str(directory), "bert_model.ckpt"), tensor_names=names,
                      shape_and_slices=[""] * len(names), tensors=[tensors[n] for n in names])
    np.testing.assert_allclose(_our_next_sentence_logits(str(directory)), _reference_logits(reference), atol=1e-5)


def test_a_plain_bert_has_no_next_sentence_head(hf_safetensors_dir):
    assert read_head(hf_safetensors_dir, NSP_HEAD) is None
    model = PostTrainingModel(load_pretrained(hf_safetensors_dir).encoder)
    assert not load_head(next_sentence_variables(model), NSP_HEAD, hf_safetensors_dir)


def test_a_mis_shaped_next_sentence_head_names_the_tensor(tmp_path, tiny_state):
    state, _ = _pretraining_reference(tiny_state)
    state["cls.seq_relationship.weight"] = np.zeros([3, HIDDEN], np.float32)
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path, state)
    model = PostTrainingModel(load_pretrained(directory).encoder)
    with pytest.raises(CheckpointError, match=r"kernel: checkpoint \(32, 3\)"):
        load_head(next_sentence_variables(model), NSP_HEAD, directory)


def test_a_response_selection_file_gives_only_its_positive_lines(tmp_path):
    from tfdialemb.converters.response_selection import convert_response_selection
    from tfdialemb.dialogue import ErrorPolicy

    raw = tmp_path / "train.txt"
    raw.write_text("1\thello\thow are you\tfine thanks\n0\thello\thow are you\tneed hotel\n", encoding="utf-8")
    positive, negative = convert_response_selection(str(raw), ErrorPolicy("fail"), block_size=2)
    builder = make_builder("mlm_nsp", {"short_context_prob": 0.0})
    rng, pool = np.random.default_rng(0), utterance_pool(OWN, OTHER)
    assert not list(builder.examples(negative, 1, rng, pool))
    assert [e["context"] for e in builder.examples(positive, 0, rng, pool)] == [["hello"], ["hello", "how are you"]]
