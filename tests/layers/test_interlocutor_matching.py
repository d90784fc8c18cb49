"""dial2vec Eq. 1-3 (interlocutor_matching) against numpy loops."""
import numpy as np
import pytest

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf

from tfdialemb.layers.interlocutor_matching import (
    DEFAULT_WINDOW, cross_representations, self_cross_similarity, self_representations, turn_window)


def _np_cross(states, roles, turns, mask, window, num_roles):
    """Ẽ^{p_r}[n, i] = Σ_j C^{p_r}[i, j] Ê^{p_r}[j], C^{p_r}[i, j] = <Ê^{rest}[i], Ê^{p_r}[j]>
    with C[i, j] = 0 where |T(i) - T(j)| > w, one loop per index."""
    n_seq, length, hidden = states.shape
    out = np.zeros((n_seq, num_roles, length, hidden))
    for n in range(n_seq):
        for r in range(num_roles):
            own = np.array([states[n, j] * (mask[n, j] and roles[n, j] == r)
                            for j in range(length)], dtype=np.float64)
            rest = np.array([states[n, i] * (mask[n, i] and roles[n, i] != r)
                             for i in range(length)], dtype=np.float64)
            for i in range(length):
                for j in range(length):
                    if window is not None and abs(turns[n, i] - turns[n, j]) > window:
                        continue
                    out[n, r, i] += np.dot(rest[i], own[j]) * own[j]
    return out


def _np_similarity(states, roles, turns, mask, window, num_roles):
    cross = _np_cross(states, roles, turns, mask, window, num_roles)
    sims = np.zeros((states.shape[0], num_roles))
    for n in range(states.shape[0]):
        for r in range(num_roles):
            own_rows = [t for t in range(states.shape[1]) if mask[n, t] and roles[n, t] == r]
            rest_rows = [t for t in range(states.shape[1]) if mask[n, t] and roles[n, t] != r]
            own = np.mean(states[n, own_rows], axis=0) if own_rows else np.zeros(states.shape[2])
            pooled = (np.mean(cross[n, r, rest_rows], axis=0) if rest_rows
                      else np.zeros(states.shape[2]))
            norm = np.linalg.norm(own) * np.linalg.norm(pooled)
            sims[n, r] = np.dot(own, pooled) / norm if norm > 0 else 0.0
    return sims


def _dialogue(turn_roles, turn_lengths, pad):
    """roles, turns and mask of one sequence: turn k has turn_lengths[k] tokens, then `pad`
    padding tokens (role 0, turn 0, like the data pipeline)."""
    roles = sum(([role] * size for role, size in zip(turn_roles, turn_lengths)), []) + [0] * pad
    turns = sum(([k] * size for k, size in enumerate(turn_lengths)), []) + [0] * pad
    mask = [1] * sum(turn_lengths) + [0] * pad
    return np.array(roles), np.array(turns), np.array(mask)


def _batch(specs, hidden=4, seed=0):
    rows = [_dialogue(*spec) for spec in specs]
    length = max(len(row[0]) for row in rows)
    fit = lambda a: np.pad(a, (0, length - len(a)))  # noqa: E731
    roles, turns, mask = (np.stack([fit(row[k]) for row in rows]) for k in range(3))
    states = np.random.default_rng(seed).normal(size=(len(specs), length, hidden))
    return states.astype(np.float32), roles, turns, mask


TWO_PARTY = [([0, 1, 0, 1, 0, 1], [2, 3, 1, 2, 2, 1], 2),
             ([1, 0, 1, 0], [3, 1, 2, 2], 3)]


def test_self_representations_zero_the_other_rows():
    states = np.random.default_rng(1).normal(size=(2, 5, 3)).astype(np.float32)
    mask = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 1]])
    got = self_representations(states, mask).numpy()
    for n in range(2):
        for t in range(5):
            expected = states[n, t] if mask[n, t] else np.zeros(3)
            np.testing.assert_array_equal(got[n, t], expected)


def test_two_party_cross_representations_with_padding_and_window():
    states, roles, turns, mask = _batch(TWO_PARTY)
    for window in (0, 1, 2, None):
        got = cross_representations(states, roles, turns, mask, window=window).numpy()
        expected = _np_cross(states, roles, turns, mask, window, 2)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_two_party_is_eq_2_3_as_matrices():
    """C^{p1} = Ê^{p2} Ê^{p1ᵀ} = (C^{p2})ᵀ, Ẽ^p = C^p Ê^p (no window), p1 = role 0."""
    states, roles, turns, mask = _batch(TWO_PARTY[:1])
    e = states[0].astype(np.float64)
    m1 = ((roles[0] == 0) & (mask[0] > 0)).astype(np.float64)[:, None]
    m2 = ((roles[0] == 1) & (mask[0] > 0)).astype(np.float64)[:, None]
    c1 = (e * m2) @ (e * m1).T
    c2 = (e * m1) @ (e * m2).T
    np.testing.assert_allclose(c1, c2.T)
    got = cross_representations(states, roles, turns, mask, window=None).numpy()[0]
    np.testing.assert_allclose(got[0], c1 @ (e * m1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], c2 @ (e * m2), rtol=1e-5, atol=1e-5)


def test_cross_representation_lives_on_the_other_interlocutors_tokens():
    states, roles, turns, mask = _batch(TWO_PARTY)
    got = cross_representations(states, roles, turns, mask).numpy()
    for r in range(2):
        outside = (roles == r) | (mask == 0)
        assert np.all(got[:, r][outside] == 0)


def test_padding_contributes_nothing():
    states, roles, turns, mask = _batch(TWO_PARTY)
    noisy = states.copy()
    noisy[mask == 0] = 1e3
    noisy_roles = np.where(mask > 0, roles, 1)
    for fn in (cross_representations, self_cross_similarity):
        np.testing.assert_allclose(fn(noisy, noisy_roles, turns, mask).numpy(),
                                   fn(states, roles, turns, mask).numpy(), rtol=1e-6, atol=1e-6)


def test_turns_farther_than_the_window_contribute_nothing():
    # Turns 0..5 alternate roles; with w = 1 the role-0 tokens of turn 0 only see turn 1.
    states, roles, turns, mask = _batch([([0, 1, 0, 1, 0, 1], [2, 2, 2, 2, 2, 2], 0)])
    far = np.isin(turns, [3, 5])
    moved = states.copy()
    moved[far] += np.random.default_rng(2).normal(size=moved[far].shape).astype(np.float32)
    turn0 = turns[0] == 0
    near = cross_representations(states, roles, turns, mask, window=1).numpy()[0, 1, turn0]
    moved_near = cross_representations(moved, roles, turns, mask, window=1).numpy()[0, 1, turn0]
    np.testing.assert_allclose(moved_near, near, rtol=1e-6)
    assert np.abs(near).sum() > 0
    unlimited = cross_representations(moved, roles, turns, mask, window=None).numpy()
    assert not np.allclose(unlimited[0, 1, turn0], near)
    np.testing.assert_allclose(
        cross_representations(moved, roles, turns, mask, window=5).numpy(), unlimited)


def test_turn_window_matrix():
    turns = np.array([[0, 0, 1, 3, 4]])
    got = turn_window(turns, 1).numpy()[0]
    for i in range(5):
        for j in range(5):
            assert got[i, j] == float(abs(turns[0, i] - turns[0, j]) <= 1)
    np.testing.assert_array_equal(turn_window(turns, None).numpy(), np.ones((1, 5, 5)))
    with pytest.raises(ValueError):
        turn_window(turns, -1)


def test_interlocutor_with_a_single_turn():
    specs = [([0, 0, 1, 0, 0], [2, 1, 3, 2, 1], 1)]
    states, roles, turns, mask = _batch(specs, seed=3)
    for window in (1, DEFAULT_WINDOW):
        np.testing.assert_allclose(
            cross_representations(states, roles, turns, mask, window=window).numpy(),
            _np_cross(states, roles, turns, mask, window, 2), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(self_cross_similarity(states, roles, turns, mask).numpy(),
                               _np_similarity(states, roles, turns, mask, DEFAULT_WINDOW, 2),
                               rtol=1e-5, atol=1e-6)


def test_three_speakers_one_vs_rest():
    specs = [([0, 1, 2, 0, 2, 1, 0], [2, 1, 2, 1, 3, 2, 1], 2),
             ([2, 2, 0, 1, 0], [1, 2, 2, 3, 1], 4)]
    states, roles, turns, mask = _batch(specs, seed=4)
    for window in (1, None):
        np.testing.assert_allclose(
            cross_representations(states, roles, turns, mask, window, num_roles=3).numpy(),
            _np_cross(states, roles, turns, mask, window, 3), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(
            self_cross_similarity(states, roles, turns, mask, window, num_roles=3).numpy(),
            _np_similarity(states, roles, turns, mask, window, 3), rtol=1e-5, atol=1e-6)


def test_a_third_role_without_tokens_leaves_the_two_party_result():
    states, roles, turns, mask = _batch(TWO_PARTY)
    two = cross_representations(states, roles, turns, mask, num_roles=2).numpy()
    three = cross_representations(states, roles, turns, mask, num_roles=3).numpy()
    np.testing.assert_allclose(three[:, :2], two, rtol=1e-6)
    assert np.all(three[:, 2] == 0)
    sims = self_cross_similarity(states, roles, turns, mask, num_roles=3).numpy()
    np.testing.assert_array_equal(sims[:, 2], 0.0)


def test_similarity_matches_numpy_and_ignores_the_pooling_count():
    states, roles, turns, mask = _batch(TWO_PARTY, seed=5)
    got = self_cross_similarity(states, roles, turns, mask, window=2).numpy()
    np.testing.assert_allclose(got, _np_similarity(states, roles, turns, mask, 2, 2),
                               rtol=1e-5, atol=1e-6)
    # Averaging both representations over all T rows instead gives the same cosine.
    cross = _np_cross(states, roles, turns, mask, 2, 2)
    for n in range(len(states)):
        for r in range(2):
            own = (states[n] * ((roles[n] == r) & (mask[n] > 0))[:, None]).mean(0)
            pooled = cross[n, r].mean(0)
            cosine = own @ pooled / np.linalg.norm(own) / np.linalg.norm(pooled)
            np.testing.assert_allclose(got[n, r], cosine, rtol=1e-5)


def test_float16_states_are_computed_in_float32():
    states, roles, turns, mask = _batch(TWO_PARTY, hidden=8, seed=6)
    large = (states * 40).astype(np.float16)
    got = cross_representations(large, roles, turns, mask)
    assert got.dtype == tf.float32
    expected = _np_cross(large.astype(np.float64), roles, turns, mask, DEFAULT_WINDOW, 2)
    assert np.abs(expected).max() > np.finfo(np.float16).max
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4)


def test_gradients_are_finite_even_for_an_absent_interlocutor():
    specs = TWO_PARTY + [([0, 0, 0], [2, 1, 2], 2)]
    states, roles, turns, mask = _batch(specs, seed=7)
    variable = tf.Variable(states)
    with tf.GradientTape() as tape:
        sims = self_cross_similarity(variable, roles, turns, mask, num_roles=2)
        total = tf.reduce_sum(sims)
    grad = tape.gradient(total, variable).numpy()
    assert np.all(np.isfinite(grad))
    assert np.abs(grad[:2]).sum() > 0
    assert np.all(grad[mask == 0] == 0)
    np.testing.assert_array_equal(sims.numpy()[2, 1], 0.0)
