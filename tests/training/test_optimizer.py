"""The optimizer's schedules, by hand-worked values."""
import math

import pytest
import tensorflow as tf

from tfdialemb.methods.spec import get_method
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer, learning_rate_schedule


def test_released_dialoguecse_optimiser_goes_with_the_released_scoring():
    """wrapper_bert.py: lr = max(5e-5 · 0.98^(step/10000), 1e-5), continuous; global-norm clip 3."""
    spec = get_method("mge")
    assert spec.optimizer_settings(spec.resolve({})) == {}
    settings = spec.optimizer_settings(spec.resolve({"mge_variant": "released"}))
    config = OptimizerConfig(learning_rate=5e-5, **settings)
    schedule = learning_rate_schedule(config, total_steps=100)
    for step, expected in ((0, 5e-5), (5000, 5e-5 * 0.98 ** 0.5), (10000, 4.9e-5), (1_000_000, 1e-5)):
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-5)
    assert create_optimizer(config, total_steps=100).global_clipnorm == 3.0


def test_released_augcl_optimiser_is_the_one_cycle_schedule():
    """mylib/learners/generic.py `one_cycle_lr` re-derived: warm-up floor(0.1 · total) steps,
    lr = max_lr · (1 - 0.45 (1 + cos(π s / w))) then max_lr · (0.1 + 0.45 (1 + cos(π (s - w) / (T - w)))),
    max_lr 1e-5; AMSGrad, weight decay on everything but biases."""
    spec = get_method("augcl")
    assert spec.optimizer_settings(spec.resolve({})) == {}
    settings = spec.optimizer_settings(spec.resolve({"augcl_optimizer": "released"}))
    config = OptimizerConfig(**{"learning_rate": 3e-6, "weight_decay": 0.01, **settings})
    schedule = learning_rate_schedule(config, total_steps=105)  # warm-up: floor(10.5) = 10 steps
    expected = {0: 1e-6, 5: 5.5e-6, 10: 1e-5, 10 + 95 / 2: 5.5e-6, 105: 1e-6,
                3: 1e-5 * (1 - 0.45 * (1 + math.cos(math.pi * 0.3)))}
    for step, value in expected.items():
        assert float(schedule(step)) == pytest.approx(value, rel=1e-5), step
    optimizer = create_optimizer(config, total_steps=105)
    assert optimizer.amsgrad
    bias, layer_norm = tf.Variable(0.0, name="dense/bias"), tf.Variable(0.0, name="layer_norm/gamma")
    assert optimizer._use_weight_decay(layer_norm) and not optimizer._use_weight_decay(bias)
