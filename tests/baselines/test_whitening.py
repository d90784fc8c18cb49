"""BERT-whitening checked with numpy: zero mean, identity covariance, k-truncation, a 2-D case."""
import numpy as np
import pytest

from tfdialemb.baselines.whitening import Whitening


def _correlated(n=500, d=6, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=[n, d]) @ rng.normal(size=[d, d]) + rng.normal(size=d) * 5


def test_whitened_corpus_has_zero_mean_and_identity_covariance():
    x = _correlated()
    whitened = Whitening.fit(x).transform(x)
    assert whitened.shape == x.shape and whitened.dtype == np.float32
    np.testing.assert_allclose(whitened.mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(np.cov(whitened, rowvar=False), np.eye(6), atol=1e-5)


def test_k_keeps_the_directions_of_largest_variance():
    x = _correlated()
    full, first_three = Whitening.fit(x), Whitening.fit(x, k=3)
    assert first_three.dim == 3
    whitened = first_three.transform(x)
    np.testing.assert_allclose(whitened, full.transform(x)[:, :3], atol=1e-5)
    np.testing.assert_allclose(np.cov(whitened, rowvar=False), np.eye(3), atol=1e-5)
    # The kept columns span the covariance's top-3 eigenvectors.
    eigenvalues, eigenvectors = np.linalg.eigh(np.cov(x, rowvar=False))
    top = eigenvectors[:, np.argsort(eigenvalues)[::-1][:3]]
    projection = top @ top.T
    np.testing.assert_allclose(projection @ first_three.kernel, first_three.kernel, atol=1e-8)


def test_hand_worked_two_dimensional_case():
    # Σ = [[10, 6], [6, 10]] / 3: eigenvalue 16/3 along (1, 1), 4/3 along (1, -1); μ = 0.
    x = np.array([[2.0, 2.0], [-2.0, -2.0], [1.0, -1.0], [-1.0, 1.0]])
    whitening = Whitening.fit(x)
    np.testing.assert_allclose(whitening.mean, [0.0, 0.0], atol=1e-12)
    # (2, 2) projects to 4/√2 = 2√2 on (1, 1)/√2, divided by √(16/3): √6 / 2 = √1.5;
    # (1, -1) projects to √2 on (1, -1)/√2, divided by √(4/3): also √1.5.
    expected = np.sqrt(1.5) * np.array([[1, 0], [-1, 0], [0, 1], [0, -1]])
    np.testing.assert_allclose(np.abs(whitening.transform(x)), np.abs(expected), atol=1e-6)
    kept = Whitening.fit(x, k=1).transform(x)
    np.testing.assert_allclose(np.abs(kept[:, 0]), np.sqrt(1.5) * np.array([1, 1, 0, 0]),
                               atol=1e-6)


def test_save_and_load(tmp_path):
    x = _correlated()
    whitening = Whitening.fit(x, k=4)
    whitening.save(str(tmp_path / "whitening.npz"))
    np.testing.assert_array_equal(Whitening.load(str(tmp_path / "whitening.npz")).transform(x),
                                  whitening.transform(x))


def test_directions_without_variance_are_dropped():
    """Like BERT's LayerNorm outputs, points on a hyperplane: one direction has no variance."""
    x = _correlated()
    x = np.concatenate([x, -x.sum(axis=1, keepdims=True)], axis=1)  # coordinates sum to 0
    whitening = Whitening.fit(x)
    assert whitening.dim == 6
    np.testing.assert_allclose(np.cov(whitening.transform(x), rowvar=False), np.eye(6), atol=1e-5)
    with pytest.raises(ValueError, match="has rank 6 < k = 7"):
        Whitening.fit(x, k=7)


def test_too_few_sentences_and_bad_k_are_refused():
    x = _correlated(n=4, d=6)  # rank 3: at most 3 directions can be whitened
    assert Whitening.fit(x).dim == 3
    with pytest.raises(ValueError, match="has rank 3 < k = 4"):
        Whitening.fit(x, k=4)
    with pytest.raises(ValueError, match=r"k must be in \[1, 6\]"):
        Whitening.fit(x, k=7)
    with pytest.raises(ValueError, match="at least 2 embeddings"):
        Whitening.fit(x[:1])
    with pytest.raises(ValueError, match="all equal"):
        Whitening.fit(np.ones([3, 6]))
    with pytest.raises(ValueError, match=r"expected embeddings \[n, 6\]"):
        Whitening.fit(x, k=3).transform(x[:, :5])
