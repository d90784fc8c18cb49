"""Retrieval nDCG@k: held-out queries against fitted documents by cosine, relevant = same label.

Thesis Sec. 4.4 ("dialogue retrieval", nDCG@100); the released benchmark
(mylib/embedding_benchmarks/retrieval.py) scores `X_val @ X_train.T` of L2-normalised embeddings
with torchmetrics' `RetrievalNormalizedDCG(top_k=100)`, relevant = the two dialogues share a domain.
Its semantics, which this module keeps (torchmetrics v1.2-v1.4, the releases of the thesis' time:
src/torchmetrics/functional/retrieval/ndcg.py and retrieval/base.py, a translation of
scikit-learn's `ndcg_score`, which computes it here):

- binary gains, DCG@k = Σ_{i ≤ k} rel_i / log2(i + 1) over the ranking by descending score,
  divided by the ideal DCG@k (relevant documents first);
- tied scores share their gain: each position of a tied group gets the group's mean relevance
  (torchmetrics `_tie_average_dcg`, since PR #2031 "Fix tie breaking in ndcg metric"), so the
  order documents are listed in never matters; a group crossing rank k counts only its
  positions up to k;
- a query without a relevant document scores 0 and stays in the mean (`empty_target_action="neg"`,
  the default); `queries_without_relevant` counts them;
- a NaN score is a miss, as everywhere a rank is taken (`tfdialemb.eval.metrics.pessimistic_scores`):
  a relevant document scored NaN ranks below every scored one, a non-relevant one above.
"""
from typing import Dict

import numpy as np

from tfdialemb.eval.metrics import pessimistic_scores
from tfdialemb.core.similarity import cosine_matrix

THESIS_K = 100
_BLOCK_ROWS = 512


def ndcg_at_k(scores: np.ndarray, relevance: np.ndarray, k: int = THESIS_K) -> float:
    """nDCG@k of one query: `scores` [n] of its documents, `relevance` [n] 0/1; 0 when none is
    relevant."""
    scores, relevance = np.asarray(scores, np.float64), np.asarray(relevance)
    if scores.shape != relevance.shape or scores.ndim != 1 or len(scores) < 2:
        raise ValueError(f"scores {scores.shape} and relevance {relevance.shape} must be equal 1-D, "
                         "with at least 2 documents")
    return _mean_ndcg(scores[None], relevance[None], k)


def _mean_ndcg(scores: np.ndarray, relevance: np.ndarray, k: int) -> float:
    from sklearn.metrics import ndcg_score  # pylint: disable=import-outside-toplevel

    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    if not np.isin(relevance, (0, 1)).all():
        raise ValueError("relevance must hold only 0 and 1")
    scores = pessimistic_scores(scores, relevance)
    finite = scores[np.isfinite(scores)]
    # scikit-learn takes finite scores only: the infinities become values just past the finite ones.
    scores = np.clip(scores, finite.min() - 1.0, finite.max() + 1.0) if finite.size else np.sign(scores)
    return float(ndcg_score(relevance.astype(np.int64), scores, k=k))


def retrieval_ndcg(query_x: np.ndarray, query_codes: np.ndarray, document_x: np.ndarray,
                   document_codes: np.ndarray, k: int = THESIS_K) -> Dict[str, float]:
    """Mean nDCG@k of every query row over all document rows by cosine, relevant = same code.

    Returns {"ndcg@k": mean over all queries, "queries", "queries_without_relevant"}; queries are
    scored in blocks of 512 so memory stays at 512 × documents.
    """
    query_x, document_x = np.asarray(query_x, np.float64), np.asarray(document_x, np.float64)
    query_codes, document_codes = np.asarray(query_codes), np.asarray(document_codes)
    if query_x.ndim != 2 or document_x.ndim != 2 or query_x.shape[1] != document_x.shape[1]:
        raise ValueError(f"embeddings must be [N, H] with one H, got {query_x.shape} and {document_x.shape}")
    if len(query_x) != len(query_codes) or len(document_x) != len(document_codes) or not len(query_x):
        raise ValueError(f"{len(query_x)} queries with {len(query_codes)} labels and {len(document_x)} "
                         f"documents with {len(document_codes)} labels; need at least one query")
    if len(document_x) < 2:
        raise ValueError(f"retrieval needs at least 2 documents, got {len(document_x)}")
    total = 0.0
    for start in range(0, len(query_x), _BLOCK_ROWS):
        scores = cosine_matrix(query_x[start:start + _BLOCK_ROWS], document_x)
        relevance = query_codes[start:start + _BLOCK_ROWS, None] == document_codes[None, :]
        total += _mean_ndcg(scores, relevance, k) * len(scores)
    without = int((~np.isin(query_codes, document_codes)).sum())
    return {f"ndcg@{k}": total / len(query_x), "queries": len(query_x), "queries_without_relevant": without}
