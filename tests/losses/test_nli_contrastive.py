"""nli_contrastive (sentence-transformers ContrastiveLoss, Justus-Jonas/imaginaryNLP
imaginaryNLP/trainer.py) against numpy."""
import numpy as np
import pytest

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf

from tfdialemb.losses.nli_contrastive import nli_contrastive


def _pair_at_cosine(cos):
    """Two unit vectors in the plane whose cosine is `cos`."""
    return [1.0, 0.0], [cos, float(np.sqrt(1 - cos ** 2))]


def test_hand_worked_pairs():
    # d = 1 - cos, margin 0.5: 0.5 (y d^2 + (1 - y) relu(0.5 - d)^2).
    cases = [  # (cos, y, loss)
        (1.0, 1.0, 0.0),                  # entailed, identical
        (0.8, 1.0, 0.5 * 0.2 ** 2),       # entailed, d = 0.2 → 0.02
        (0.8, 0.0, 0.5 * 0.3 ** 2),       # contradiction inside the margin → 0.045
        (0.0, 0.0, 0.0),                  # contradiction beyond the margin (d = 1)
        (0.8, 2.0, 0.5 * (2 * 0.2 ** 2 - 0.3 ** 2)),  # released neutral y = 2 → -0.005
    ]
    first, second = zip(*(_pair_at_cosine(c) for c, _, _ in cases))
    got = nli_contrastive(np.array(first, np.float32), np.array(second, np.float32),
                          np.array([y for _, y, _ in cases], np.float32))
    np.testing.assert_allclose(got.numpy(), [loss for _, _, loss in cases], atol=1e-6)
    assert got.numpy()[-1] < 0  # y = 2 is not a binary label: the loss goes negative


def test_matches_numpy_on_random_embeddings_with_any_margin():
    rng = np.random.default_rng(0)
    first, second = rng.normal(size=(2, 10, 6)).astype(np.float32)
    second[:5] = first[:5] + 0.3 * second[:5]  # some close pairs, inside the margin
    label = rng.integers(0, 2, 10).astype(np.float32)
    a, b = first.astype(np.float64), second.astype(np.float64)
    d = 1 - (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    for margin in (0.5, 1.2):
        expected = 0.5 * (label * d ** 2 + (1 - label) * np.maximum(0.0, margin - d) ** 2)
        got = nli_contrastive(first, second, tf.constant(label), margin=margin)
        assert got.dtype == tf.float32
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-7)


def test_margin_must_be_positive():
    with pytest.raises(ValueError, match="margin must be positive"):
        nli_contrastive(np.ones((1, 2), np.float32), np.ones((1, 2), np.float32), [1.0], margin=0.0)
