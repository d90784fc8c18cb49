"""Extra input embeddings and layer freezing, checked through independent code paths."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig, load_pretrained

IDS = np.array([[2, 20, 21, 22, 3], [2, 30, 31, 3, 0]], np.int32)
MASK = (IDS > 0).astype(np.int32)


def _tiny(**extra):
    return Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(**extra)).build_variables()


def test_role_embedding_adds_like_a_segment_embedding(hf_safetensors_dir):
    """A role row equal to (type row 1 - type row 0) must act exactly like segment id 1.

    BertEncoderV2 adds segment embeddings itself, so this compares the extra-embedding path with
    Model Garden's own embedding sum.
    """
    encoder = load_pretrained(hf_safetensors_dir, role_vocab_size=2).encoder
    types = encoder.bert._type_embedding_layer.embeddings.numpy()
    encoder.extra_embeddings["role_ids"].embeddings.assign(
        np.stack([np.zeros_like(types[0]), types[1] - types[0]])
    )
    with_role = encoder({"input_word_ids": IDS, "input_mask": MASK, "role_ids": np.ones_like(IDS)})
    with_type = encoder({"input_word_ids": IDS, "input_mask": MASK, "input_type_ids": np.ones_like(IDS)})
    np.testing.assert_allclose(
        with_role["sequence_output"].numpy(), with_type["sequence_output"].numpy(), atol=1e-5
    )


def test_turn_ids_change_the_output_and_role_zero_row_is_neutral():
    encoder = _tiny(turn_vocab_size=4)
    base = encoder({"input_word_ids": IDS, "input_mask": MASK})["sequence_output"].numpy()
    turned = encoder({"input_word_ids": IDS, "input_mask": MASK, "turn_ids": IDS % 4})
    assert not np.allclose(base, turned["sequence_output"].numpy())
    encoder.extra_embeddings["turn_ids"].embeddings.assign(tf.zeros([4, 32]))
    zeroed = encoder({"input_word_ids": IDS, "input_mask": MASK, "turn_ids": IDS % 4})
    np.testing.assert_allclose(zeroed["sequence_output"].numpy(), base, atol=1e-6)


def test_extra_ids_without_a_table_are_rejected():
    with pytest.raises(ValueError, match="no role_ids embeddings; set role_vocab_size"):
        _tiny()({"input_word_ids": IDS, "input_mask": MASK, "role_ids": IDS})


def _bert_names(variables, encoder):
    prefix = encoder.bert.name + "/"
    return {v.name.split(prefix, 1)[-1].rsplit(":", 1)[0] for v in variables}


def test_freeze_bottom_freezes_embeddings_and_lower_layers():
    encoder = _tiny(role_vocab_size=2)
    encoder.freeze_bottom(1)
    trainable = _bert_names(encoder.trainable_variables, encoder)
    assert not any(n.startswith(("word_embeddings", "position_embedding", "type_embeddings",
                                 "embeddings/layer_norm", "transformer/layer_0/")) for n in trainable)
    assert sum(n.startswith("transformer/layer_1/") for n in trainable) == 16
    assert any("role_embeddings" in n for n in trainable)
    assert {n.split("/")[0] for n in trainable if "role" not in n} == {"transformer", "pooler_transform"}


def test_frozen_weights_do_not_move_in_a_training_step():
    encoder = _tiny()
    encoder.freeze_bottom(1)
    frozen = {v.name: v.numpy() for v in encoder.non_trainable_variables}
    trainable = {v.name: v.numpy() for v in encoder.trainable_variables}
    optimizer = tf.keras.optimizers.SGD(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(encoder.embed({"input_word_ids": IDS, "input_mask": MASK}, training=True) ** 2)
    grads = tape.gradient(loss, encoder.trainable_variables)
    optimizer.apply_gradients(
        [(g, v) for g, v in zip(grads, encoder.trainable_variables) if g is not None]
    )
    for v in encoder.non_trainable_variables:
        np.testing.assert_array_equal(v.numpy(), frozen[v.name])
    moved = [v.name for v in encoder.trainable_variables if not np.array_equal(v.numpy(), trainable[v.name])]
    assert any("layer_1" in name for name in moved)


def test_negative_freeze_trains_only_the_top_layers():
    """-1 on a 2-layer encoder: the embeddings and layer 0 frozen, as freeze_bottom(1)."""
    encoder = _tiny()
    encoder.freeze_bottom(-1)
    trainable = _bert_names(encoder.trainable_variables, encoder)
    assert {n.split("/")[0] for n in trainable} == {"transformer", "pooler_transform"}
    assert not any(n.startswith("transformer/layer_0/") for n in trainable)
    every = _tiny()
    every.freeze_bottom(-2)
    trainable = _bert_names(every.trainable_variables, every)
    assert any(n.startswith("transformer/layer_0/") for n in trainable)
    assert not any(n.startswith("word_embeddings") for n in trainable)
    with pytest.raises(ValueError, match="cannot freeze -3 layers of a 2-layer encoder"):
        every.freeze_bottom(-3)


def test_freeze_bounds():
    encoder = _tiny()
    encoder.freeze_bottom(0)
    assert len(encoder.non_trainable_variables) == 0
    with pytest.raises(ValueError, match="cannot freeze 3 layers of a 2-layer encoder"):
        encoder.freeze_bottom(3)


def test_keras_config_round_trip():
    encoder = _tiny(turn_vocab_size=3)
    clone = Encoder.from_config(encoder.get_config())
    assert clone.encoder_config == encoder.encoder_config
