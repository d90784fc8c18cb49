"""Training graphs skip Grappler on a machine without GPUs and keep it with one; a step gives the
same update either way."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tiny_corpus import TOKENIZER
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.losses.cosine_mse import cosine_mse
from tfdialemb.training import graph_options
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer


@pytest.fixture
def restored_options():
    before = tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    yield
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": before})


def test_off_without_gpus_kept_with_them(restored_options, monkeypatch):
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False})
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: ["GPU:0"] if kind == "GPU" else [])
    assert not graph_options.apply_training_graph_options()
    assert not tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [])
    assert graph_options.apply_training_graph_options()
    assert tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]


def _one_step_weights(disable_meta_optimizer: bool):
    """The encoder's weights after one cosine-MSE AdamW step from a fixed start, dropout off."""
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": disable_meta_optimizer})
    tf.keras.utils.set_random_seed(11)
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    first = TOKENIZER(tf.constant(["hello there", "book a taxi please", "fine"]), max_length=16)
    second = TOKENIZER(tf.constant(["how are you", "to the hotel", "thanks a lot"]), max_length=16)
    optimizer = create_optimizer(OptimizerConfig(learning_rate=1e-3, weight_decay=0.01), 10)
    optimizer.build(encoder.trainable_variables)

    @tf.function(autograph=False)
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(cosine_mse(encoder.embed(first, training=False), encoder.embed(second, training=False),
                                             tf.constant([0.1, 0.5, 0.9])))
        grads = tape.gradient(loss, encoder.trainable_variables)
        optimizer.apply_gradients([(g, v) for g, v in zip(grads, encoder.trainable_variables) if g is not None])
        return loss

    loss = step().numpy()
    return loss, [v.numpy() for v in encoder.trainable_variables]


def test_a_step_without_grappler_equals_the_optimised_one(restored_options):
    loss, weights = _one_step_weights(disable_meta_optimizer=True)
    optimised_loss, optimised_weights = _one_step_weights(disable_meta_optimizer=False)
    np.testing.assert_allclose(loss, optimised_loss, rtol=1e-5)
    for mine, theirs in zip(weights, optimised_weights):
        np.testing.assert_allclose(mine, theirs, atol=1e-5)
