"""Cosine similarity: between embedding matrices (numpy, for evaluation) and between paired rows
(TensorFlow, for losses and layers)."""
import numpy as np
import tensorflow as tf


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of every row of `a` [n, d] with every row of `b` [m, d]; zero rows give 0."""
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def paired_cosine(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
    """cos(a_n, b_n) [...] of paired rows a, b [..., H], in float32; a zero row gives 0."""
    a = tf.math.l2_normalize(tf.cast(a, tf.float32), axis=-1)
    b = tf.math.l2_normalize(tf.cast(b, tf.float32), axis=-1)
    return tf.reduce_sum(a * b, axis=-1)
