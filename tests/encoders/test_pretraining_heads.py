"""The masked-LM head read from each checkpoint layout predicts what transformers' head predicts."""
import logging
import os

import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import CheckpointError, load_pretrained
from tfdialemb.encoders.pretraining_heads import MLM_HEAD, read_head
from tfdialemb.layers.masked_lm_head import load_masked_lm_head
from tfdialemb.methods.models.mlm import MaskedLanguageModel

IDS = np.array([[2, 20, 4, 22, 23, 4, 25, 26, 3], [2, 30, 4, 32, 3, 0, 0, 0, 0]], np.int32)
MASK = (np.arange(IDS.shape[1]) < np.array([[9], [5]])).astype(np.int32)
POSITIONS = np.array([[2, 5, 7], [1, 2, 0]], np.int32)
HIDDEN, VOCAB = tiny_bert.HF_CONFIG["hidden_size"], tiny_bert.HF_CONFIG["vocab_size"]


@pytest.fixture(scope="module")
def head():
    return tiny_bert.random_mlm_head()


def _full_state(tiny_state, head, nsp=False):
    return tiny_bert.with_heads(tiny_state, head, nsp)


def _reference(model_class, state, **config):
    return tiny_bert.transformers_model(state, dict(tiny_bert.HF_CONFIG, **config), model_class.__name__)


def _reference_logits(model):
    out = model(input_ids=IDS, attention_mask=MASK, training=False)
    logits = out.logits if hasattr(out, "logits") else out.prediction_logits
    return np.take_along_axis(logits.numpy(), POSITIONS[..., None], axis=1)


def _ours(directory):
    model = MaskedLanguageModel(load_pretrained(directory).encoder)
    assert load_masked_lm_head(model.masked_lm, directory)
    inputs = {"input_word_ids": IDS, "input_mask": MASK, "masked_lm_positions": POSITIONS}
    return model(inputs, training=False).numpy()


def test_safetensors_head_matches_transformers(tmp_path, tiny_state, head):
    from transformers import TFBertForMaskedLM

    state = _full_state(tiny_state, head)
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path, state)
    reference = _reference(TFBertForMaskedLM, state)
    np.testing.assert_allclose(_ours(directory), _reference_logits(reference), atol=1e-5, rtol=0)


def _write_google_dir_with_head(directory, tiny_state, head):
    """google-research/bert's names for the encoder and `cls/predictions/*` (kernel [in, out])."""
    tiny_bert.write_google_dir(directory, tiny_state, with_optimizer_slots=False)
    tensors = tiny_bert.google_names(tiny_state, tiny_bert.HF_CONFIG["num_hidden_layers"])
    prefix = "cls/predictions/"
    tensors.update({
        prefix + "transform/dense/kernel": head["cls.predictions.transform.dense.weight"].T,
        prefix + "transform/dense/bias": head["cls.predictions.transform.dense.bias"],
        prefix + "transform/LayerNorm/gamma": head["cls.predictions.transform.LayerNorm.weight"],
        prefix + "transform/LayerNorm/beta": head["cls.predictions.transform.LayerNorm.bias"],
        prefix + "output_bias": head["cls.predictions.bias"],
    })
    names = sorted(tensors)
    tf.raw_ops.SaveV2(prefix=os.path.join(str(directory), "bert_model.ckpt"), tensor_names=names,
                      shape_and_slices=[""] * len(names), tensors=[tensors[n] for n in names])
    return str(directory)


def test_google_tf1_head_matches_transformers_gelu_new(tmp_path, tiny_state, head):
    from transformers import TFBertForMaskedLM

    directory = _write_google_dir_with_head(tmp_path, tiny_state, head)
    # Google's TF1 BERT uses the tanh GELU in the head's transform too: transformers' gelu_new.
    reference = _reference(TFBertForMaskedLM, _full_state(tiny_state, head), hidden_act="gelu_new")
    np.testing.assert_allclose(_ours(directory), _reference_logits(reference), atol=1e-5, rtol=0)


def test_tf_h5_of_a_pretraining_model_matches_transformers(tmp_path, tiny_state, head):
    from transformers import TFBertForPreTraining

    reference = _reference(TFBertForPreTraining, _full_state(tiny_state, head, nsp=True))
    directory = tiny_bert.write_hf_h5_dir(tmp_path, reference)
    np.testing.assert_allclose(_ours(directory), _reference_logits(reference), atol=1e-5, rtol=0)


def test_tf_h5_of_a_masked_lm_model_holds_the_head(tmp_path, tiny_state, head):
    from transformers import TFBertForMaskedLM

    reference = _reference(TFBertForMaskedLM, _full_state(tiny_state, head))
    weights = read_head(tiny_bert.write_hf_h5_dir(tmp_path, reference), MLM_HEAD)
    np.testing.assert_array_equal(weights["transform/dense/kernel"],
                                  head["cls.predictions.transform.dense.weight"].T)
    np.testing.assert_array_equal(weights["output_bias"], head["cls.predictions.bias"])
    np.testing.assert_array_equal(weights["transform/LayerNorm/beta"],
                                  head["cls.predictions.transform.LayerNorm.bias"])


def test_old_names_gamma_beta_and_decoder_bias(tmp_path, tiny_state, head):
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias",
                                                                         "LayerNorm.beta"): v
               for k, v in head.items() if k != "cls.predictions.bias"}
    renamed["cls.predictions.decoder.bias"] = head["cls.predictions.bias"]
    weights = read_head(tiny_bert.write_hf_safetensors_dir(
        tmp_path, _full_state(tiny_state, renamed)), MLM_HEAD)
    np.testing.assert_array_equal(weights["transform/LayerNorm/gamma"],
                                  head["cls.predictions.transform.LayerNorm.weight"])
    np.testing.assert_array_equal(weights["output_bias"], head["cls.predictions.bias"])


def test_plain_bert_model_has_no_head_and_the_head_starts_fresh(hf_safetensors_dir, caplog):
    assert read_head(hf_safetensors_dir, MLM_HEAD) is None
    model = MaskedLanguageModel(load_pretrained(hf_safetensors_dir).encoder)
    bias = model.masked_lm.bias.numpy()
    with caplog.at_level(logging.WARNING):
        assert not load_masked_lm_head(model.masked_lm, hf_safetensors_dir)
    assert "no masked-LM head" in caplog.text
    np.testing.assert_array_equal(model.masked_lm.bias.numpy(), bias)


def test_partial_head_names_what_is_missing(tmp_path, tiny_state):
    # tiny_bert's run_pretraining-like checkpoint keeps only cls/predictions/output_bias.
    directory = tiny_bert.write_google_dir(tmp_path, tiny_state)
    model = MaskedLanguageModel(load_pretrained(directory).encoder)
    with pytest.raises(CheckpointError, match=r"missing 4 tensors: transform/LayerNorm/beta.*transform/dense/kernel"):
        load_masked_lm_head(model.masked_lm, directory)


def test_mis_shaped_head_names_the_tensor(tmp_path, tiny_state, head):
    wrong = dict(head, **{"cls.predictions.bias": np.zeros(VOCAB + 1, np.float32)})
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path, _full_state(tiny_state, wrong))
    model = MaskedLanguageModel(load_pretrained(directory).encoder)
    with pytest.raises(CheckpointError, match=rf"output_bias: checkpoint \({VOCAB + 1},\)"):
        load_masked_lm_head(model.masked_lm, directory)


def test_pretraining_model_directory_holds_both_heads(tmp_path, hf_safetensors_dir):
    """A tfdialemb directory written with the method model (as `python -m tfdialemb.pretrain`
    writes its checkpoints) holds the heads it trains; one of `save_pretrained` holds none."""
    from tfdialemb.encoders.checkpoint import checkpoint_directory, save_pretrained
    from tfdialemb.encoders.pretraining_heads import NSP_HEAD
    from tfdialemb.methods.models.mlm_nsp import PostTrainingModel

    pretrained = load_pretrained(hf_safetensors_dir)
    model = PostTrainingModel(pretrained.encoder)
    model.masked_lm.bias.assign(np.arange(VOCAB, dtype=np.float32))
    model.next_sentence.kernel.assign(np.full([HIDDEN, 2], 0.5, np.float32))
    directory = str(tmp_path / "pretrained")
    with checkpoint_directory(directory, model.encoder, pretrained.tokenizer, number=7, model=model):
        pass
    masked_lm = read_head(directory, MLM_HEAD)
    assert sorted(masked_lm) == sorted(MLM_HEAD.tensors)
    np.testing.assert_array_equal(masked_lm["output_bias"], np.arange(VOCAB))
    np.testing.assert_array_equal(masked_lm["transform/dense/kernel"], model.masked_lm.dense.kernel.numpy())
    np.testing.assert_array_equal(read_head(directory, NSP_HEAD)["kernel"], np.full([HIDDEN, 2], 0.5))
    assert read_head(save_pretrained(model.encoder, pretrained.tokenizer, str(tmp_path / "encoder_only")),
                     MLM_HEAD) is None
