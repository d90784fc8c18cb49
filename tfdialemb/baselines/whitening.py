r"""BERT-whitening (Su et al. 2021, "Whitening Sentence Representations for Better Semantics and
Faster Retrieval"), a baseline of DialogueCSE's Table 2.

From the sentence embeddings x of a corpus: μ = mean(x), Σ = cov(x) (N − 1 normalisation, numpy's
`np.cov` as in bojone/BERT-whitening), SVD Σ = U Λ Uᵀ, W = U Λ^{-1/2}; an embedding becomes
x̃ = (x − μ) W[:, :k]. The whitened corpus has mean 0 and identity covariance; keeping the first k
columns keeps the k directions of largest variance (the paper's dimensionality reduction).

Directions without variance cannot be whitened, and BERT's have some: its last layer ends in a
LayerNorm, so every token vector, and every mean of them, lies on one hyperplane (all-MiniLM-L6-v2's
mean-pooled utterances: 3 of 384 eigenvalues at 1e-18 of the largest, the next at 4e-4). Su's
code divides by the rounding noise there, turning those coordinates into unit-variance noise; by
default we keep the directions whose eigenvalue exceeds numpy's rank tolerance, d · ε · λ_max.
"""
import dataclasses
from typing import Optional

import numpy as np

from tfdialemb.core.files import atomic_open


@dataclasses.dataclass(frozen=True)
class Whitening:
    """x̃ = (x − mean) @ kernel; `kernel` [d, k] holds W's first k columns."""

    mean: np.ndarray
    kernel: np.ndarray

    @property
    def dim(self) -> int:
        """k, the size of a whitened embedding."""
        return self.kernel.shape[1]

    @classmethod
    def fit(cls, embeddings: np.ndarray, k: Optional[int] = None) -> "Whitening":
        """Estimates μ and W from `embeddings` [n, d]; keeps `k` columns of W, by default as many
        as the covariance's rank r (at most n − 1, so fit on more sentences than dimensions).
        """
        embeddings = np.asarray(embeddings, np.float64)
        if embeddings.ndim != 2 or len(embeddings) < 2:
            raise ValueError(
                f"whitening needs at least 2 embeddings [n, d], got {embeddings.shape}")
        n, d = embeddings.shape
        if k is not None and not 1 <= k <= d:
            raise ValueError(f"the whitened size k must be in [1, {d}], got {k}")
        mean = embeddings.mean(axis=0)
        u, s, _ = np.linalg.svd(np.cov(embeddings, rowvar=False))
        rank = int((s > s[0] * d * np.finfo(np.float64).eps).sum())
        if rank == 0:
            raise ValueError(f"the {n} embeddings are all equal: nothing to whiten")
        k = rank if k is None else k
        if k > rank:
            raise ValueError(
                f"the covariance of {n} embeddings of size {d} has rank {rank} < k = {k}: keep at "
                f"most {rank} dimensions (or fit on more sentences if n ≤ d)")
        return cls(mean, u[:, :k] / np.sqrt(s[:k]))

    def transform(self, embeddings: np.ndarray) -> np.ndarray:
        """Whitened embeddings [n, k] float32."""
        embeddings = np.asarray(embeddings, np.float64)
        if embeddings.ndim != 2 or embeddings.shape[1] != len(self.mean):
            raise ValueError(f"expected embeddings [n, {len(self.mean)}], got {embeddings.shape}")
        return ((embeddings - self.mean) @ self.kernel).astype(np.float32)

    def save(self, path: str) -> None:
        """Writes `mean` and `kernel` to an .npz file, atomically."""
        with atomic_open(path, "wb") as f:
            np.savez(f, mean=self.mean, kernel=self.kernel)

    @classmethod
    def load(cls, path: str) -> "Whitening":
        with np.load(path) as arrays:
            return cls(arrays["mean"], arrays["kernel"])
