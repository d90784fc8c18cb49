"""MaskDropout against the dropout definition: drop probability, scale, gradient, seeding."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.layers.mask_dropout import MaskDropout, adopt_mask_dropout


@pytest.mark.parametrize("rate, dtype", [(0.1, tf.float32), (0.1, tf.bfloat16), (0.02, tf.float32)])
def test_drops_round_rate_in_65536_and_scales_the_rest(rate, dtype):
    """Over a million elements the dropped share lies within 5 binomial standard deviations of
    round(rate · 2^16) / 2^16, and every kept element is x · 1 / (1 - rate), both in the dtype."""
    layer = MaskDropout(rate, dtype=dtype.name)
    inputs = tf.fill([1000, 999], tf.constant(3.0, dtype))  # an odd element count: one half-word unused
    outputs = layer(inputs, training=True)
    assert outputs.dtype == dtype
    outputs = outputs.numpy().astype(np.float64)
    expected_rate = round(rate * 65536) / 65536
    dropped = np.mean(outputs == 0)
    assert abs(dropped - expected_rate) < 5 * np.sqrt(expected_rate * (1 - expected_rate) / outputs.size)
    kept = tf.constant(3.0, dtype) * tf.constant(1 / (1 - rate), dtype)
    assert set(np.unique(outputs)) == {0.0, float(kept)}


def test_identity_outside_training_and_at_rate_zero():
    inputs = tf.random.normal([4, 7])
    np.testing.assert_array_equal(MaskDropout(0.3)(inputs, training=False).numpy(), inputs.numpy())
    np.testing.assert_array_equal(MaskDropout(0.0)(inputs, training=True).numpy(), inputs.numpy())


def test_gradient_is_the_mask_times_the_scale():
    """d(dropout(x))/dx is 1 / (1 - rate) where kept, 0 where dropped: the output divided by x."""
    inputs = tf.random.uniform([50, 40], 1.0, 2.0)
    layer = MaskDropout(0.25)
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        outputs = layer(inputs, training=True)
    gradient = tape.gradient(outputs, inputs).numpy()
    np.testing.assert_allclose(gradient, outputs.numpy() / inputs.numpy(), rtol=1e-6)
    assert set(np.unique(gradient).tolist()) == {0.0, float(np.float32(1 / 0.75))}


def test_masks_change_per_call_and_repeat_under_the_same_global_seed():
    def two_masks():
        tf_keras.utils.set_random_seed(7)
        layer = MaskDropout(0.5)
        step = tf.function(lambda x: layer(x, training=True))
        ones = tf.ones([64, 64])
        return step(ones).numpy(), step(ones).numpy()

    first, second = two_masks()
    assert not np.array_equal(first, second)
    again = two_masks()
    np.testing.assert_array_equal(first, again[0])
    np.testing.assert_array_equal(second, again[1])


def test_the_encoder_drops_with_mask_dropout_at_bert_rates():
    """Every Dropout of BERT is a MaskDropout, also when BERT is built by its first call, at
    BERT's rates: attention probabilities at the attention rate; embeddings, the attention output
    and the feed-forward output at the hidden rate (Hugging Face's BertEmbeddings, BertSelfOutput,
    BertOutput); inference is unchanged and training draws differ per call."""
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.1, attention_dropout=0.2)
    ids = tf.constant([[2, 20, 21, 3]])
    inputs = {"input_word_ids": ids, "input_mask": tf.ones_like(ids)}
    for encoder in (Encoder(config).build_variables(), Encoder(config)):
        before = encoder(inputs, training=False)["sequence_output"].numpy()
        dropouts = [module for module in encoder.bert.submodules if isinstance(module, tf_keras.layers.Dropout)]
        assert dropouts and all(type(module) is MaskDropout for module in dropouts)
        rates = {module.name: module.rate for module in dropouts}
        assert rates.pop("embedding_dropout") == 0.1
        blocks = encoder.bert.transformer_layers
        for block in blocks:
            assert block._attention_layer._dropout_layer.rate == 0.2
            assert block._attention_dropout.rate == 0.1 and block._output_dropout.rate == 0.1
            assert block._inner_dropout_layer.rate == 0.0  # BERT has none after the GELU
        assert len(dropouts) == 1 + 4 * len(blocks)
        assert adopt_mask_dropout(encoder.bert) == 0
        np.testing.assert_array_equal(encoder(inputs, training=False)["sequence_output"].numpy(), before)
        first, second = (encoder(inputs, training=True)["sequence_output"].numpy() for _ in range(2))
        assert not np.allclose(first, second)
