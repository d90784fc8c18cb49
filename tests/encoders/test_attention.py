"""HeadMajorAttention against a numpy re-derivation of masked scaled dot-product attention and
against Keras' own MultiHeadAttention (the einsum path): forward, gradients, dropout draws, inside
Model Garden's block (scores returned, a shorter query range) and in bfloat16."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras
import tiny_bert

from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.encoders.attention import HeadMajorAttention, adopt_head_major_attention
from tfdialemb.encoders.mask_dropout import adopt_mask_dropout, draw_seeds_from

HEADS, KEY_DIM, WIDTH = 3, 4, 10


def _pair(dropout=0.0, attention_axes=None):
    """Keras' layer and a HeadMajorAttention holding the same weights."""
    layers = [tf_keras.layers.MultiHeadAttention(HEADS, KEY_DIM, dropout=dropout, attention_axes=attention_axes)
              for _ in range(2)]
    rank = 4 if attention_axes else 3
    shape = [2, 3, 5, WIDTH] if rank == 4 else [2, 5, WIDTH]
    x = tf.random.stateless_normal(shape, [1, 2])
    for layer in layers:
        layer(x, x)
    layers[1].set_weights(layers[0].get_weights())
    assert adopt_head_major_attention(_Holder(layers[1])) == 1
    assert type(layers[1]) is HeadMajorAttention
    return layers


class _Holder(tf_keras.layers.Layer):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner


def _numpy_attention(layer, x, mask):
    """softmax(q kᵀ / √d + (mask - 1) · ∞) v per head, then the output projection, in float64."""
    w = [np.asarray(v, np.float64) for v in layer.get_weights()]
    wq, bq, wk, bk, wv, bv, wo, bo = w
    x = np.asarray(x, np.float64)
    q = np.einsum("btd,dnh->btnh", x, wq) + bq
    k = np.einsum("btd,dnh->btnh", x, wk) + bk
    v = np.einsum("btd,dnh->btnh", x, wv) + bv
    scores = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(KEY_DIM)
    scores = np.where(mask[:, None, :, :] > 0, scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = np.einsum("bnts,bsnh->btnh", probs, v)
    return np.einsum("btnh,nhd->btd", context, wo) + bo, probs


def test_equals_the_numpy_attention_with_a_padding_mask():
    _, layer = _pair()
    x = tf.random.stateless_normal([2, 5, WIDTH], [3, 4])
    mask = np.ones([2, 5, 5], np.int32)
    mask[0, :, 3:] = 0  # the first sequence's last two tokens are padding
    output, scores = layer(x, x, attention_mask=tf.constant(mask), return_attention_scores=True)
    expected_output, expected_probs = _numpy_attention(layer, x.numpy(), mask)
    np.testing.assert_allclose(output.numpy(), expected_output, atol=2e-6)
    np.testing.assert_allclose(scores.numpy(), expected_probs, atol=2e-6)


def test_equals_keras_einsum_attention_forward_and_gradients():
    keras_layer, layer = _pair()
    x = tf.random.stateless_normal([2, 5, WIDTH], [5, 6])
    mask = tf.constant(np.tril(np.ones([5, 5], np.int32))[None].repeat(2, 0))
    results = []
    for each in (keras_layer, layer):
        with tf.GradientTape() as tape:
            tape.watch(x)
            output = each(x, x, attention_mask=mask)
            loss = tf.reduce_sum(output * tf.range(1.0, WIDTH + 1.0))
        results.append((output, tape.gradient(loss, [x] + each.trainable_variables)))
    np.testing.assert_allclose(results[1][0].numpy(), results[0][0].numpy(), atol=1e-6)
    for ours, theirs in zip(results[1][1], results[0][1]):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-5)


def test_dropout_draws_the_same_masks_as_the_einsum_path():
    """With the same seeded MaskDropout, a training call drops the same attention probabilities."""
    keras_layer, layer = _pair(dropout=0.5)
    x = tf.random.stateless_normal([2, 5, WIDTH], [7, 8])
    outputs = []
    for each in (keras_layer, layer):
        holder = _Holder(each)
        adopt_mask_dropout(holder)
        draw_seeds_from(holder, tf.random.Generator.from_seed(11))
        outputs.append(each(x, x, training=True).numpy())
    np.testing.assert_allclose(outputs[1], outputs[0], atol=1e-6)


def test_other_attention_axes_keep_the_einsum_path():
    keras_layer, layer = _pair(attention_axes=(1, 2))
    x = tf.random.stateless_normal([2, 3, 5, WIDTH], [9, 10])
    np.testing.assert_allclose(layer(x, x).numpy(), keras_layer(x, x).numpy(), atol=1e-6)


@pytest.mark.parametrize("random_init", [True, False])
def test_every_block_of_a_built_encoder_attends_head_major(random_init):
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)
    encoder = Encoder(config, random_init=random_init).build_variables()
    attention = [module for module in encoder._flatten_layers()  # pylint: disable=protected-access
                 if isinstance(module, tf_keras.layers.MultiHeadAttention)]
    assert len(attention) == config.num_layers
    assert all(type(module) is HeadMajorAttention for module in attention)


def test_serialises_as_itself():
    layer = HeadMajorAttention(HEADS, KEY_DIM, dropout=0.1)
    clone = tf_keras.layers.deserialize(tf_keras.layers.serialize(layer))
    assert type(clone) is HeadMajorAttention and clone.get_config() == layer.get_config()


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_a_model_garden_block_gives_the_einsum_blocks_outputs_and_scores(policy, restore_precision):
    """Model Garden's TransformerEncoderBlock as BertEncoderV2 builds it, asked for its attention
    scores and for the first two positions only (`output_range`), in both precision policies."""
    from official.nlp.modeling import layers as nlp_layers  # pylint: disable=import-outside-toplevel

    tf_keras.mixed_precision.set_global_policy(policy)
    blocks = [nlp_layers.TransformerEncoderBlock(HEADS, 16, "relu", return_attention_scores=True) for _ in range(2)]
    x = tf.random.stateless_normal([2, 5, HEADS * KEY_DIM], [11, 12])
    mask = tf.constant(np.tril(np.ones([5, 5], np.float32))[None].repeat(2, 0))
    for block in blocks:
        block([x, mask])
    blocks[1].set_weights(blocks[0].get_weights())
    assert adopt_head_major_attention(_Holder(blocks[1])) == 1
    outputs = [block([x, mask], output_range=2) for block in blocks]
    # bfloat16 keeps 8 significant bits: outputs of size 1-2 differ by a few of its units (7e-3 seen).
    tolerance = 1e-6 if policy == "float32" else 2e-2
    for ours, theirs in zip(outputs[1], outputs[0]):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(tf.cast(ours, tf.float32).numpy(), tf.cast(theirs, tf.float32).numpy(),
                                   atol=tolerance)
