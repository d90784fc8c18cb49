"""dial2vec Eq. 5-6 (interlocutor_nt_xent) against numpy loops."""
import numpy as np
import pytest

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf

from tfdialemb.layers.interlocutor_matching import self_cross_similarity
from tfdialemb.losses.interlocutor_nt_xent import interlocutor_nt_xent


def _np_loss(sims, tau, interlocutor_mask=None):
    batch, samples, roles = sims.shape
    out = np.zeros(batch)
    for b in range(batch):
        for r in range(roles):
            if interlocutor_mask is not None and not interlocutor_mask[b, r]:
                continue
            denominator = sum(np.exp(sims[b, j, r] / tau) for j in range(samples))
            out[b] -= np.log(np.exp(sims[b, 0, r] / tau) / denominator)
    return out


def _sims(seed=0, shape=(3, 10, 2)):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def test_paper_sums_interlocutors_with_tau_0_2():
    sims = _sims()
    np.testing.assert_allclose(interlocutor_nt_xent(sims).numpy(), _np_loss(sims, 0.2),
                               rtol=1e-5)
    np.testing.assert_allclose(interlocutor_nt_xent(sims, temperature=0.5).numpy(),
                               _np_loss(sims, 0.5), rtol=1e-5)


def test_three_interlocutors_and_a_mask():
    sims = _sims(1, (4, 5, 3))
    mask = np.array([[1, 1, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0]])
    np.testing.assert_allclose(interlocutor_nt_xent(sims).numpy(), _np_loss(sims, 0.2),
                               rtol=1e-5)
    np.testing.assert_allclose(interlocutor_nt_xent(sims, interlocutor_mask=mask).numpy(),
                               _np_loss(sims, 0.2, mask), rtol=1e-5)


def test_released_is_calc_loss():
    """network.py calc_loss: -mean(log_softmax(logit_r) * labels) - mean(log_softmax(logit_q)
    * labels) over B×10, labels one-hot at 0."""
    sims = _sims(2)
    per_example = interlocutor_nt_xent(sims, variant="released").numpy()
    np.testing.assert_allclose(per_example, _np_loss(sims, 0.2) / 10, rtol=1e-5)
    labels = np.zeros((3, 10))
    labels[:, 0] = 1.0
    calc_loss = 0.0
    for r in range(2):
        logits = sims[:, :, r].astype(np.float64) / 0.2
        log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        calc_loss -= np.mean(log_softmax * labels)
    np.testing.assert_allclose(per_example.mean(), calc_loss, rtol=1e-5)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        interlocutor_nt_xent(_sims(), temperature=0.0)
    with pytest.raises(ValueError):
        interlocutor_nt_xent(_sims(), variant="other")


def test_gradients_from_states_are_finite():
    # 2 dialogues × 3 samples, two interlocutors; sample 2 of dialogue 1 lacks role 1.
    rng = np.random.default_rng(3)
    roles = np.tile(np.array([0, 0, 1, 1, 0, 1, 0, 0]), (6, 1))
    roles[5] = 0
    turns = np.tile(np.array([0, 0, 1, 1, 2, 3, 4, 0]), (6, 1))
    mask = np.tile(np.array([1, 1, 1, 1, 1, 1, 1, 0]), (6, 1))
    states = tf.Variable(rng.normal(size=(6, 8, 4)).astype(np.float32))
    with tf.GradientTape() as tape:
        sims = self_cross_similarity(states, roles, turns, mask, window=2)
        loss = tf.reduce_mean(interlocutor_nt_xent(tf.reshape(sims, [2, 3, 2])))
    grad = tape.gradient(loss, states).numpy()
    assert np.all(np.isfinite(grad)) and np.abs(grad).sum() > 0
    np.testing.assert_allclose(loss.numpy(), _np_loss(sims.numpy().reshape(2, 3, 2), 0.2).mean(),
                               rtol=1e-5)
