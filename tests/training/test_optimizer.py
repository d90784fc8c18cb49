"""The optimizer's schedules, by hand-worked values."""
import pytest

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
