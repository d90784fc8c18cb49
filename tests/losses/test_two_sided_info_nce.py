"""Two-sided in-batch InfoNCE (the context-response loss): a numpy re-derivation of the released
`contrastive_cross` on hand-built unit vectors, and two replicas equal to one device."""
import numpy as np
import tensorflow as tf

from global_batch import loss_and_gradient
from tfdialemb.core.distribute import make_strategy
from tfdialemb.losses.two_sided_info_nce import two_sided_info_nce


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _numpy_loss(contexts, responses, temperature):
    """-log e^{S_ii} / (Σ_j e^{S_ij} + Σ_j e^{S_ji} - e^{S_ii}), S = C Rᵀ / τ, in float64."""
    scores = np.exp(contexts.astype(np.float64) @ responses.astype(np.float64).T / temperature)
    positive = np.diag(scores)
    return -np.log(positive / (scores.sum(axis=1) + scores.sum(axis=0) - positive))


def test_hand_built_pairs_match_the_numpy_loss():
    # Pair 0 matches exactly; pair 1's response is closer to context 2 than to its own context.
    contexts = _unit(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32))
    responses = _unit(np.array([[1, 0, 0], [0, 1, 1], [0.2, 0, 1]], np.float32))
    for temperature in (0.05, 0.5):
        np.testing.assert_allclose(two_sided_info_nce(contexts, responses, temperature).numpy(),
                                   _numpy_loss(contexts, responses, temperature), rtol=1e-5, atol=1e-6)
    # τ = 1, worked by hand for pair 0: row (1, 0, 0.196), column (1, 0, 0) over the other contexts.
    s = 0.2 / np.sqrt(1.04)
    expected = -np.log(np.e / (np.e + 1 + np.exp(s) + 1 + 1))
    np.testing.assert_allclose(two_sided_info_nce(contexts, responses, 1.0).numpy()[0], expected, rtol=1e-6)


def test_random_batch_matches_numpy_and_has_finite_gradients():
    rng = np.random.default_rng(0)
    contexts = tf.Variable(_unit(rng.normal(size=(6, 4))).astype(np.float32))
    responses = _unit(rng.normal(size=(6, 4))).astype(np.float32)
    with tf.GradientTape() as tape:
        losses = two_sided_info_nce(contexts, responses, 0.05)
        total = tf.reduce_sum(losses)
    np.testing.assert_allclose(losses.numpy(), _numpy_loss(contexts.numpy(), responses, 0.05), rtol=1e-5)
    assert np.all(np.isfinite(tape.gradient(total, contexts).numpy()))


def test_two_replicas_compute_the_global_batch_loss_and_gradients(two_replicas):
    """Each replica holds half of the 8 pairs: rows and columns over the gathered batch make the
    summed losses and gradients those of one device."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = rng.normal(size=(8, 4)).astype(np.float32)
    w = np.eye(4, dtype=np.float32) + 0.1

    def run(strategy):
        return loss_and_gradient(strategy, (x, y), w, lambda batch, weight: two_sided_info_nce(
            tf.math.l2_normalize(tf.matmul(batch[0], weight), -1),
            tf.math.l2_normalize(tf.matmul(batch[1], weight), -1), 0.05))

    one_loss, one_grad = run(make_strategy("default"))
    two_loss, two_grad = run(two_replicas)
    np.testing.assert_allclose(two_loss, one_loss, rtol=1e-5)
    np.testing.assert_allclose(two_grad, one_grad, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(one_loss, _numpy_loss(_unit(x @ w), _unit(y @ w), 0.05).mean(), rtol=1e-5)
