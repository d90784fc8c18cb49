"""Cosine similarity: between embedding matrices (numpy, for evaluation) and between paired rows
(TensorFlow, for losses and layers), and the unit-length rows whose dot products are cosines.
TensorFlow loads with the first call of a TensorFlow function, so the numpy functions (and
`tfdialemb.util`, `search --help`) start without it."""
import numpy as np


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of every row of `a` [n, d] with every row of `b` [m, d]; zero rows give 0."""
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def paired_cosine(a, b):
    """cos(a_n, b_n) [...] of paired rows a, b [..., H] (tf.Tensor), in float32; a zero row gives 0."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    return tf.reduce_sum(l2_normalized(a) * l2_normalized(b), axis=-1)


def l2_normalized(embeddings):
    """Each row (tf.Tensor) scaled to unit L2 norm, in float32 (an all-zero row stays zero)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    return tf.math.l2_normalize(tf.cast(embeddings, tf.float32), axis=-1)
