"""The thesis' projector against numpy: normalize(x W1 W2), bias-free, orthogonally initialised,
dropout only while training, float32 under mixed precision."""
import numpy as np
import tf_keras

from tfdialemb.layers.projector import Projector


def test_projection_matches_numpy_and_is_unit_length():
    projector = Projector(3, dropout=0.5)
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    out = projector(x, training=False).numpy()
    linear, projection = (w.numpy() for w in projector.weights)
    assert [w.shape for w in projector.weights] == [(5, 5), (5, 3)]  # no bias
    expected = x @ linear @ projection
    np.testing.assert_allclose(out, expected / np.linalg.norm(expected, axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(linear.T @ linear, np.eye(5), atol=1e-5)  # orthogonal initialisation
    assert not np.allclose(projector(x, training=True).numpy(), out)     # dropout while training


def test_float32_under_mixed_precision(restore_precision):
    tf_keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        projector = Projector(2, dropout=0.0)
        out = projector(np.ones([1, 3], np.float16))
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
    assert out.dtype == "float32"
