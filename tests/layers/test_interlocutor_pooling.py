"""dial2vec Eq. 4 (interlocutor_pooling) and the masks m^{p_r} against numpy loops."""
import numpy as np
import pytest

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf

from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.layers.interlocutor_pooling import interlocutor_pooling, role_masks


def _np_pooling(states, roles, mask, num_roles):
    out = np.zeros((states.shape[0], states.shape[2]))
    for n in range(states.shape[0]):
        for r in range(num_roles):
            rows = [t for t in range(states.shape[1]) if mask[n, t] and roles[n, t] == r]
            if rows:
                out[n] += sum(states[n, t] for t in rows) / len(rows)
    return out


STATES = np.random.default_rng(0).normal(size=(3, 6, 4)).astype(np.float32)
ROLES = np.array([[0, 0, 1, 1, 1, 0], [1, 0, 0, 0, 0, 0], [0, 2, 1, 2, 0, 1]])
MASK = np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])


def test_role_masks():
    got = role_masks(ROLES, MASK, 3).numpy()
    for n in range(3):
        for r in range(3):
            for t in range(6):
                assert got[n, r, t] == float(MASK[n, t] == 1 and ROLES[n, t] == r)
    with pytest.raises(ValueError):
        role_masks(ROLES, MASK, 0)


def test_two_party_with_padding_and_a_single_token_interlocutor():
    two = np.where(ROLES < 2, ROLES, 0)
    noisy = STATES.copy()
    noisy[MASK == 0] = 1e3
    np.testing.assert_allclose(interlocutor_pooling(noisy, two, MASK).numpy(),
                               _np_pooling(STATES, two, MASK, 2), rtol=1e-5, atol=1e-6)


def test_three_speakers_and_an_absent_one():
    np.testing.assert_allclose(interlocutor_pooling(STATES, ROLES, MASK, num_roles=3).numpy(),
                               _np_pooling(STATES, ROLES, MASK, 3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(interlocutor_pooling(STATES, ROLES, MASK, num_roles=4).numpy(),
                               interlocutor_pooling(STATES, ROLES, MASK, num_roles=3).numpy())


def test_one_interlocutor_is_the_plain_mean():
    zeros = np.zeros_like(ROLES)
    np.testing.assert_allclose(interlocutor_pooling(STATES, zeros, MASK).numpy(),
                               masked_mean(STATES, MASK).numpy(), rtol=1e-6)


def test_gradients_are_finite():
    variable = tf.Variable(STATES)
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(interlocutor_pooling(variable, ROLES, MASK, num_roles=3) ** 2)
    grad = tape.gradient(total, variable).numpy()
    assert np.all(np.isfinite(grad))
    assert np.all(grad[MASK == 0] == 0)
    assert np.abs(grad).sum() > 0
