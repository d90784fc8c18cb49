"""BERT-flow's Glow: exact inverse, log-determinant against the Jacobian, maximum-likelihood fit."""
import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.baselines.flow import GlowFlow

ARCHITECTURES = [
    # The release's default (additive coupling, reversal), on an odd size: uneven halves.
    dict(dim=9, levels=3, depth=3, width=8, coupling="additive", permutation="reverse"),
    # Glow's affine coupling and LU-parametrised invertible 1x1 convolution.
    dict(dim=6, levels=2, depth=2, width=8, coupling="affine", permutation="lu"),
]


def _random_flow(config, seed=0):
    """An initialised flow whose every variable is perturbed, so no layer is the identity."""
    rng = np.random.default_rng(seed)
    flow = GlowFlow(**config, seed=seed)
    flow.initialize(rng.normal(2.0, 3.0, [32, config["dim"]]).astype(np.float32))
    for variable in flow.trainable_variables:
        variable.assign_add(rng.normal(0.0, 0.03, variable.shape).astype(np.float32))
    return flow, rng


@pytest.mark.parametrize("config", ARCHITECTURES, ids=lambda c: c["coupling"])
def test_inverse_undoes_forward(config):
    flow, rng = _random_flow(config)
    x = rng.normal(2.0, 3.0, [64, config["dim"]]).astype(np.float32)
    z, _ = flow.forward(tf.constant(x))
    assert z.shape == x.shape
    np.testing.assert_allclose(flow.inverse(z).numpy(), x, atol=1e-4)


@pytest.mark.parametrize("config", ARCHITECTURES, ids=lambda c: c["coupling"])
def test_log_determinant_matches_the_jacobian(config):
    """log|det ∂z/∂x| of the Jacobian, by automatic differentiation (exact where finite
    differences would straddle a ReLU kink), equals the layers' summed log-determinants."""
    flow, rng = _random_flow(config, seed=1)
    x = tf.constant(rng.normal(2.0, 3.0, [8, config["dim"]]).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        z, log_det = flow.forward(x)
    jacobian = tape.batch_jacobian(z, x).numpy().astype(np.float64)
    sign, expected = np.linalg.slogdet(jacobian)
    assert (sign != 0).all()
    np.testing.assert_allclose(log_det.numpy(), expected, rtol=1e-5, atol=1e-4)


def _distance_from_standard_normal(z):
    """How far latents are from N(0, I): Frobenius distance of covariance and norm of the mean."""
    return np.linalg.norm(np.cov(z, rowvar=False) - np.eye(z.shape[1])), np.linalg.norm(z.mean(0))


def test_training_lowers_nll_and_gaussianises_correlated_data():
    rng = np.random.default_rng(0)
    dim = 6
    mixing = rng.normal(size=[dim, dim]) * np.linspace(0.3, 3.0, dim)[:, None]
    x = (rng.normal(size=[1024, dim]) @ mixing + 4.0).astype(np.float32)
    # The data's own bits per dimension: the entropy of N(4, mixingᵀ mixing).
    entropy_bits = 0.5 * (dim * np.log(2 * np.pi * np.e)
                          + np.linalg.slogdet(mixing.T @ mixing)[1]) / (dim * np.log(2))

    config = dict(dim=dim, levels=2, depth=2, width=16)
    initial = GlowFlow(**config, seed=0)
    initial.initialize(x[:64])
    trained = GlowFlow(**config, seed=0)
    losses = trained.fit(x, epochs=12, batch_size=64, learning_rate=1e-3, seed=0)

    before = float(np.mean(initial.bits_per_dim(x)))
    after = float(np.mean(trained.bits_per_dim(x)))
    assert losses[-1] < losses[0]
    assert after < before - 0.5
    assert after < entropy_bits + 0.25
    covariance_before, mean_before = _distance_from_standard_normal(initial.transform(x))
    covariance_after, mean_after = _distance_from_standard_normal(trained.transform(x))
    assert covariance_after < 0.5 * covariance_before
    assert mean_after < mean_before


def test_save_and_load_keep_the_latents(tmp_path):
    flow, rng = _random_flow(ARCHITECTURES[1])
    x = rng.normal(size=[5, 6]).astype(np.float32)
    flow.save(str(tmp_path / "flow"))
    loaded = GlowFlow.load(str(tmp_path / "flow"))
    assert loaded.config == flow.config
    np.testing.assert_array_equal(loaded.transform(x), flow.transform(x))


def test_unfitted_flow_refuses_to_transform_and_bad_shapes_are_named():
    flow = GlowFlow(8)
    with pytest.raises(ValueError, match="not fitted"):
        flow.transform(np.zeros([2, 8]))
    with pytest.raises(ValueError, match=r"expected embeddings \[n, 8\]"):
        flow.fit(np.zeros([4, 7]))
    with pytest.raises(ValueError, match="a coupling needs at least 2"):
        GlowFlow(6, levels=3)


def test_a_constant_dimension_trains_without_overflow():
    """all-MiniLM-L6-v2's mean-pooled embeddings have constant dimensions; actnorm keeps them at
    scale 1 instead of 1e6 per step, whose product overflowed the gradients to NaN."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=[256, 8]).astype(np.float32)
    x[:, 3] = 0.25
    flow = GlowFlow(8, levels=2, depth=2, width=8)
    losses = flow.fit(x, epochs=2, batch_size=32)
    assert np.isfinite(losses).all()
    assert np.isfinite(flow.transform(x)).all()
