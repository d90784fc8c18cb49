"""In-batch InfoNCE: a numpy re-derivation on one device, and two replicas equal to one device."""
import numpy as np
import pytest
import tensorflow as tf

from global_batch import loss_and_gradient
from tfdialemb.core.distribute import make_strategy
from tfdialemb.losses.in_batch_info_nce import in_batch_info_nce


def _numpy_loss(a, p, temperature, symmetric):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    p = p / np.linalg.norm(p, axis=1, keepdims=True)

    def ce(x, y):
        logits = x @ y.T / temperature
        logits -= logits.max(axis=1, keepdims=True)
        return -(np.diag(logits) - np.log(np.exp(logits).sum(axis=1)))

    return (ce(a, p) + ce(p, a)) / 2 if symmetric else ce(a, p)


@pytest.mark.parametrize("symmetric", [False, True])
def test_one_device_matches_numpy(symmetric):
    rng = np.random.default_rng(0)
    a, p = rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(5, 3)).astype(np.float32)
    np.testing.assert_allclose(in_batch_info_nce(a, p, 0.1, symmetric).numpy(),
                               _numpy_loss(a, p, 0.1, symmetric), rtol=1e-5)


@pytest.mark.parametrize("symmetric", [False, True])
def test_two_replicas_compute_the_global_batch_loss_and_gradients(two_replicas, symmetric):
    """Replica r holds rows [4r, 4r+4): gathered negatives, offset labels and routed gradients make
    the summed per-replica losses and gradients those of one device on all 8 rows."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = rng.normal(size=(8, 4)).astype(np.float32)

    w = np.eye(4, dtype=np.float32) + 0.1

    def run(strategy):
        return loss_and_gradient(strategy, (x, y), w, lambda batch, weight: in_batch_info_nce(
            tf.matmul(batch[0], weight), tf.matmul(batch[1], weight), 0.2, symmetric))

    one_loss, one_grad = run(make_strategy("default"))
    two_loss, two_grad = run(two_replicas)
    np.testing.assert_allclose(two_loss, one_loss, rtol=1e-5)
    np.testing.assert_allclose(two_grad, one_grad, atol=1e-5)
    np.testing.assert_allclose(one_loss, _numpy_loss(x @ w, y @ w, 0.2, symmetric).mean(), rtol=1e-5)
