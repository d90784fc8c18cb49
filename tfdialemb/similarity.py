"""Cosine similarity between embeddings, and nearest-neighbour search over them."""
import numpy as np


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of every row of `a` [n, d] with every row of `b` [m, d]; zero rows give 0."""
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def nearest_neighbours(embeddings: np.ndarray, k: int):
    """For each row, the indices and cosines of its k most similar other rows."""
    cosine = cosine_matrix(embeddings, embeddings)
    np.fill_diagonal(cosine, -np.inf)
    order = np.argsort(-cosine, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(cosine, order, axis=1)
