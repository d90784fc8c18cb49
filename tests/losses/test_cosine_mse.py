"""cosine_mse (triple-encoders Sec. 2, Eq. 1; sentence-transformers CosineSimilarityLoss) against numpy."""
import numpy as np

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf

from tfdialemb.losses.cosine_mse import cosine_mse
from tfdialemb.core.similarity import cosine_matrix, paired_cosine


def _rows(seed, shape=(6, 8)):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def test_hand_worked_pair():
    # cos([3, 4], [4, 3]) = 24 / 25; target 0.8 → (0.96 - 0.8)^2 = 0.0256.
    got = cosine_mse(np.array([[3.0, 4.0]], np.float32), np.array([[4.0, 3.0]], np.float32),
                     np.array([0.8], np.float32))
    np.testing.assert_allclose(got.numpy(), [0.0256], rtol=1e-5)


def test_matches_numpy_mse_of_cosine_per_example():
    anchor, other = _rows(0), _rows(1)
    target = np.random.default_rng(2).uniform(0, 1, 6).astype(np.float32)
    a, b = anchor.astype(np.float64), other.astype(np.float64)
    cos = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    got = cosine_mse(anchor, other, target)
    assert got.dtype == tf.float32 and got.shape == (6,)
    np.testing.assert_allclose(got.numpy(), (cos - target) ** 2, rtol=1e-5, atol=1e-7)


def test_triple_anchor_is_the_unnormalised_mean():
    # Eq. 1: cos((u1 + u2) / 2, v); with |u1| >> |u2| the mean leans towards u1, unlike the mean
    # of the normalised vectors.
    u1, u2, v = (np.array([[10.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[1.0, 1.0]]))
    mix = (u1 + u2) / 2
    expected = ((mix @ v.T).item() / np.linalg.norm(mix) / np.linalg.norm(v) - 0.5) ** 2
    got = cosine_mse(tf.constant(mix, tf.float32), tf.constant(v, tf.float32), [0.5])
    np.testing.assert_allclose(got.numpy(), [expected], rtol=1e-5)


def test_paired_cosine_is_the_diagonal_of_cosine_matrix_and_zero_rows_give_zero():
    a, b = _rows(3), _rows(4)
    a[2] = 0.0
    np.testing.assert_allclose(paired_cosine(a, b).numpy(), np.diag(cosine_matrix(a, b)),
                               rtol=1e-5, atol=1e-6)
    assert paired_cosine(a, b).numpy()[2] == 0.0


def test_half_precision_inputs_give_float32_losses():
    anchor, other = _rows(5), _rows(6)
    got = cosine_mse(tf.constant(anchor, tf.float16), tf.constant(other, tf.float16),
                     tf.zeros([6]))
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), cosine_mse(anchor, other, tf.zeros([6])).numpy(),
                               atol=2e-3)
