"""Strategy selection, and two logical CPU replicas computing what one device computes."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.core.distribute import is_chief, make_strategy
from tfdialemb.encoders import Encoder, EncoderConfig

IDS = np.array([[2, 20, 21, 3, 0], [2, 30, 31, 32, 3], [2, 40, 3, 0, 0], [2, 22, 23, 24, 3]], np.int32)
MASK = (IDS > 0).astype(np.int32)


def test_auto_is_one_device_without_gpus():
    strategy = make_strategy("auto")
    assert strategy.num_replicas_in_sync == 1
    assert is_chief(strategy)


def test_mirrored_over_two_logical_cpus(two_replicas):
    strategy = two_replicas
    assert strategy.num_replicas_in_sync == 2
    assert make_strategy("auto", devices=["/cpu:0", "/cpu:1"]).num_replicas_in_sync == 2


def test_multi_worker_needs_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="needs the TF_CONFIG environment variable"):
        make_strategy("multi_worker")
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not valid JSON"):
        make_strategy("multi_worker")
    with pytest.raises(ValueError, match="unknown strategy 'tpu'"):
        make_strategy("tpu")


def _gradients(strategy):
    """Sum over the global batch of squared mean-pooled embeddings, gradients all-reduced."""
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.0, attention_dropout=0.0)
    with strategy.scope():
        tf.keras.utils.set_random_seed(7)
        encoder = Encoder(config).build_variables()
    dataset = tf.data.Dataset.from_tensor_slices({"input_word_ids": IDS, "input_mask": MASK}).batch(4)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

    def step(inputs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(encoder.embed(inputs, training=True) ** 2) / 4.0
        grads = tape.gradient(loss, encoder.trainable_variables)
        # The BERT pooler is unused by mean pooling and gets no gradient.
        return loss, [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
                      for g, v in zip(grads, encoder.trainable_variables)]

    loss, grads = strategy.run(tf.function(step), args=(batch,))
    loss = strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)
    grads = [strategy.reduce(tf.distribute.ReduceOp.SUM, g, axis=None) for g in grads]
    return loss.numpy(), [g.numpy() for g in grads]


def test_two_replicas_give_the_single_device_loss_and_gradients(two_replicas):
    one_loss, one_grads = _gradients(make_strategy("default"))
    two_loss, two_grads = _gradients(two_replicas)
    np.testing.assert_allclose(two_loss, one_loss, rtol=1e-5)
    for a, b in zip(two_grads, one_grads):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=1e-4)
