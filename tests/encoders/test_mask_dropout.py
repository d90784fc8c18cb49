"""MaskDropout against the dropout definition: drop probability, scale, gradient, seeding."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras
import tiny_bert

from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.encoders.mask_dropout import MaskDropout, drop_probability


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
    np.testing.assert_array_equal(gradient, np.where(outputs.numpy() == 0, 0.0, np.float32(1 / 0.75)))


def test_rates_round_to_multiples_of_two_to_the_minus_16_and_never_to_0_or_1():
    assert drop_probability(0.1) == 6554 / 65536
    assert drop_probability(1e-9) == 1 / 65536
    assert drop_probability(1 - 1e-9) == 65535 / 65536
    for rate in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="dropout rate"):
            drop_probability(rate)


def _masks(global_seed, layer_seed=None, calls=2):
    tf_keras.utils.set_random_seed(global_seed)
    layer = MaskDropout(0.5, seed=layer_seed)
    step = tf.function(lambda x: layer(x, training=True))
    return [step(tf.ones([64, 64])).numpy() for _ in range(calls)]


def test_masks_change_per_call_and_repeat_under_the_same_seeds():
    first, second = _masks(7)
    assert not np.array_equal(first, second)
    for repeat, original in zip(_masks(7), (first, second)):
        np.testing.assert_array_equal(repeat, original)
    assert not np.array_equal(_masks(8)[0], first)
    # A layer's own seed enters its draws, as in Keras' Dropout.
    seeded = _masks(1, layer_seed=3, calls=1)[0]
    np.testing.assert_array_equal(_masks(1, layer_seed=3, calls=1)[0], seeded)
    assert not np.array_equal(_masks(1, layer_seed=4, calls=1)[0], seeded)


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
        assert encoder.bert._embedding_dropout.rate == 0.1
        blocks = encoder.bert.transformer_layers
        for block in blocks:
            assert block._attention_layer._dropout_layer.rate == 0.2
            assert block._attention_dropout.rate == 0.1 and block._output_dropout.rate == 0.1
            assert block._inner_dropout_layer.rate == 0.0  # BERT has none after the GELU
        assert len(dropouts) == 1 + 4 * len(blocks)
        np.testing.assert_array_equal(encoder(inputs, training=False)["sequence_output"].numpy(), before)
        first, second = (encoder(inputs, training=True)["sequence_output"].numpy() for _ in range(2))
        assert not np.allclose(first, second)
