"""CVC (FGC Eq. 4-5) against a numpy re-derivation; two replicas equal one device."""
import numpy as np
import pytest
import tensorflow as tf

from global_batch import loss_and_gradient
from tfdialemb.core.distribute import make_strategy
from tfdialemb.losses.cross_view_contrast import cross_view_contrast


def _numpy_cvc(z, y, tau, cosine=False):
    """Eq. 5 anchor by anchor: -1/(|class|-1) Σ_{j≠i, same class} log exp(z_i·z_j/τ)/Σ_{r≠i} exp(z_i·z_r/τ)."""
    z = z.astype(np.float64)
    if cosine:
        z = z / np.linalg.norm(z, axis=1, keepdims=True)
    losses = []
    for i in range(len(z)):
        others = [r for r in range(len(z)) if r != i]
        denominator = sum(np.exp(z[i] @ z[r] / tau) for r in others)
        same = [j for j in others if y[j] == y[i]]
        if not same:
            losses.append(0.0)
            continue
        losses.append(-sum(np.log(np.exp(z[i] @ z[j] / tau) / denominator) for j in same) / len(same))
    return np.array(losses)


@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_one_device_matches_numpy(similarity):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(8, 3)).astype(np.float32) * 0.5
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    np.testing.assert_allclose(cross_view_contrast(z, y, 0.5, similarity).numpy(),
                               _numpy_cvc(z, y, 0.5, similarity == "cosine"), rtol=1e-5)


def test_a_batch_with_one_positive_pair_and_a_lonely_vector():
    """One positive pair and its augmentation (class 1: two vectors) among negatives; a vector
    alone in its class gets 0."""
    rng = np.random.default_rng(2)
    z = rng.normal(size=(5, 4)).astype(np.float32)
    y = np.array([1, 1, 0, 0, 2])
    got = cross_view_contrast(z, y, 0.5, "dot").numpy()
    np.testing.assert_allclose(got, _numpy_cvc(z, y, 0.5), rtol=1e-5)
    assert got[4] == 0.0


def test_two_replicas_compute_the_global_batch_loss_and_gradients(two_replicas):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = np.array([1, 1, 0, 0, 1, 0, 1, 0], np.int32)

    w = np.eye(4, dtype=np.float32) * 0.7 + 0.1

    def run(strategy):
        return loss_and_gradient(strategy, (x, y), w, lambda batch, weight: cross_view_contrast(
            tf.matmul(batch[0], weight), batch[1], 0.5, "dot"))

    one_loss, one_grad = run(make_strategy("default"))
    two_loss, two_grad = run(two_replicas)
    np.testing.assert_allclose(two_loss, one_loss, rtol=1e-5)
    np.testing.assert_allclose(two_grad, one_grad, atol=1e-5)
    np.testing.assert_allclose(one_loss, _numpy_cvc(x @ w, y, 0.5).mean(), rtol=1e-5)
