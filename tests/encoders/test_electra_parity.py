"""ELECTRA discriminators (Table 2 of FGC) load through the same loader as BERT: BertEncoderV2 with
a separate embedding width holds the function of transformers' TFElectraModel."""
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import EncoderConfig, load_pretrained
from tfdialemb.encoders.config import ConfigError

EMBEDDING = 16
CONFIG = dict(tiny_bert.HF_CONFIG, model_type="electra", architectures=["ElectraForPreTraining"],
              embedding_size=EMBEDDING)
IDS = np.array([[2, 20, 21, 22, 23, 24, 25, 26, 3], [2, 30, 31, 32, 3, 0, 0, 0, 0]], np.int32)
MASK = (np.arange(IDS.shape[1]) < np.array([[9], [5]])).astype(np.int32)
TYPES = np.array([[0, 0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0, 0]], np.int32)


def _electra_state(seed=0):
    """A discriminator's PyTorch state dict: BERT's layers, E-wide embeddings and their projection
    to the hidden size, no pooler, and the discriminator head (which the encoder ignores)."""
    rng = np.random.default_rng(seed)
    hidden = CONFIG["hidden_size"]
    bert = tiny_bert.random_pytorch_state(seed, tiny_bert.HF_CONFIG)
    state = {f"electra.{k}": v for k, v in bert.items() if not k.startswith(("embeddings.", "pooler."))}

    def rand(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    state.update({
        "electra.embeddings.word_embeddings.weight": rand(CONFIG["vocab_size"], EMBEDDING),
        "electra.embeddings.position_embeddings.weight": rand(CONFIG["max_position_embeddings"], EMBEDDING),
        "electra.embeddings.token_type_embeddings.weight": rand(CONFIG["type_vocab_size"], EMBEDDING),
        "electra.embeddings.LayerNorm.weight": 1 + rand(EMBEDDING, scale=0.1),
        "electra.embeddings.LayerNorm.bias": rand(EMBEDDING, scale=0.1),
        "electra.embeddings_project.weight": rand(hidden, EMBEDDING),
        "electra.embeddings_project.bias": rand(hidden),
        "discriminator_predictions.dense.weight": rand(hidden, hidden),
        "discriminator_predictions.dense.bias": rand(hidden),
        "discriminator_predictions.dense_prediction.weight": rand(1, hidden),
        "discriminator_predictions.dense_prediction.bias": rand(1),
    })
    return state


@pytest.fixture(scope="module")
def reference(tiny_state):
    """transformers' TFElectraForPreTraining holding the state, by transformers' own loading code."""
    from transformers import ElectraConfig, TFElectraForPreTraining
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    state = _electra_state()
    model = TFElectraForPreTraining(ElectraConfig(**{k: v for k, v in CONFIG.items() if k != "architectures"}))
    model, info = load_pytorch_state_dict_in_tf2_model(model, state, output_loading_info=True)
    assert not info["missing_keys"] and not info["mismatched_keys"], info
    return state, model


def _ours(directory):
    encoder = load_pretrained(directory).encoder
    assert encoder.encoder_config.embedding_size == EMBEDDING
    return encoder({"input_word_ids": IDS, "input_mask": MASK, "input_type_ids": TYPES},
                   training=False)["sequence_output"].numpy()


def _expected(model):
    hidden = model.electra(input_ids=IDS, attention_mask=MASK, token_type_ids=TYPES, training=False)
    return hidden.last_hidden_state.numpy()


def test_safetensors_discriminator_matches_transformers(tmp_path, reference):
    state, model = reference
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path, state, config=CONFIG)
    valid = MASK.astype(bool)
    np.testing.assert_allclose(_ours(directory)[valid], _expected(model)[valid], atol=1e-5, rtol=0)


def test_tf_h5_discriminator_matches_transformers(tmp_path, reference):
    _, model = reference
    directory = tiny_bert.write_hf_h5_dir(tmp_path, model)
    valid = MASK.astype(bool)
    np.testing.assert_allclose(_ours(directory)[valid], _expected(model)[valid], atol=1e-5, rtol=0)


def test_config_reads_the_embedding_width_and_refuses_other_model_types():
    assert EncoderConfig.from_huggingface(CONFIG).embedding_size == EMBEDDING
    assert EncoderConfig.from_huggingface(dict(CONFIG, embedding_size=CONFIG["hidden_size"])).embedding_size == 0
    assert EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).embedding_size == 0
    with pytest.raises(ConfigError, match="model_type is 'roberta'; supported: bert, electra"):
        EncoderConfig.from_huggingface(dict(CONFIG, model_type="roberta"))


def test_freezing_the_embeddings_freezes_their_projection(tmp_path, reference):
    state, _ = reference
    encoder = load_pretrained(tiny_bert.write_hf_safetensors_dir(tmp_path, state, config=CONFIG)).encoder
    encoder.freeze_bottom(1)
    trainable = {v.name for v in encoder.trainable_variables}
    assert not any("embedding_projection" in name for name in trainable)


def test_google_tf1_discriminator_with_a_written_config_matches_transformers(tmp_path, tiny_state):
    """google-research/electra's names (`electra/…`, `electra/embeddings_project`, a generator
    beside the discriminator) and a bert_config.json with `embedding_size`; Google's "gelu" is the
    tanh approximation, transformers' gelu_new."""
    from transformers import ElectraConfig, TFElectraModel
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    state = _electra_state(seed=2)
    bert_named = {k[len("electra."):]: v for k, v in state.items() if k.startswith("electra.")}
    no_pooler = {"pooler.dense.weight": np.zeros([32, 32], np.float32), "pooler.dense.bias": np.zeros([32], np.float32)}
    tensors = {name.replace("bert/", "electra/", 1): value  # an ELECTRA discriminator has no pooler
               for name, value in tiny_bert.google_names(dict(bert_named, **no_pooler), 2).items()
               if "pooler" not in name}
    tensors["electra/embeddings_project/kernel"] = state["electra.embeddings_project.weight"].T
    tensors["electra/embeddings_project/bias"] = state["electra.embeddings_project.bias"]
    tensors["generator/embeddings_project/kernel"] = np.zeros([EMBEDDING, 8], np.float32)
    tensors["discriminator_predictions/dense/kernel"] = np.zeros([32, 32], np.float32)
    names = sorted(tensors)
    tf.raw_ops.SaveV2(prefix=os.path.join(str(tmp_path), "model.ckpt"), tensor_names=names,
                      shape_and_slices=[""] * len(names), tensors=[tensors[n] for n in names])
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt"\n')
    google_config = {k: v for k, v in CONFIG.items()
                     if k not in ("architectures", "model_type", "layer_norm_eps", "position_embedding_type")}
    (tmp_path / "bert_config.json").write_text(json.dumps(google_config))
    tiny_bert.write_vocab(str(tmp_path))
    reference = TFElectraModel(ElectraConfig(**dict({k: v for k, v in CONFIG.items() if k != "architectures"},
                                                    hidden_act="gelu_new")))
    reference, info = load_pytorch_state_dict_in_tf2_model(
        reference, {k: v for k, v in state.items() if k.startswith("electra.")}, output_loading_info=True)
    assert not info["missing_keys"], info
    expected = reference(input_ids=IDS, attention_mask=MASK, token_type_ids=TYPES, training=False)
    valid = MASK.astype(bool)
    np.testing.assert_allclose(_ours(str(tmp_path))[valid], expected.last_hidden_state.numpy()[valid], atol=1e-5)
