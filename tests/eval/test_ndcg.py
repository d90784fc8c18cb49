"""nDCG@k against hand-worked values: binary gains, ties sharing their gain (torchmetrics ≥ 1.2), a
query without a relevant document scoring 0 inside the mean."""
import math

import numpy as np
import pytest

from tfdialemb.eval import ndcg
from tfdialemb.eval.ndcg import ndcg_at_k, retrieval_ndcg

D2, D3, D4, D5 = (1 / math.log2(i) for i in (2, 3, 4, 5))  # discounts of ranks 1..4


def test_distinct_scores_sum_the_discounts_of_relevant_ranks_up_to_k():
    # Ranking: irrelevant, relevant, irrelevant, relevant; with k = 3 the rank-4 hit is cut off.
    assert ndcg_at_k([0.9, 0.8, 0.7, 0.6], [0, 1, 0, 1], k=3) == pytest.approx(D3 / (D2 + D3))
    assert ndcg_at_k([0.9, 0.8, 0.7, 0.6], [0, 1, 0, 1], k=4) == pytest.approx((D3 + D5) / (D2 + D3))
    assert ndcg_at_k([0.6, 0.9, 0.7, 0.8], [0, 1, 0, 1], k=4) == pytest.approx(1.0)


def test_a_tied_group_shares_its_mean_gain_and_is_cut_at_k():
    # Ranks 2-3 tie (one relevant, one not): each gets gain 0.5; k = 2 keeps rank 2 only.
    assert ndcg_at_k([0.9, 0.5, 0.5, 0.1], [0, 1, 0, 1], k=2) == pytest.approx(0.5 * D3 / (D2 + D3))
    # The listing order of tied documents does not matter.
    assert ndcg_at_k([0.9, 0.5, 0.5, 0.1], [0, 0, 1, 1], k=2) == pytest.approx(0.5 * D3 / (D2 + D3))
    # All four tie: every rank gets 1/4 of a gain against the ideal single hit at rank 1.
    assert ndcg_at_k([0.3] * 4, [1, 0, 0, 0], k=4) == pytest.approx(0.25 * (D2 + D3 + D4 + D5))


def test_a_nan_score_is_a_miss():
    # The relevant document scored NaN ranks last of 4: gain at rank 4 against the ideal rank 1.
    assert ndcg_at_k([np.nan, 0.8, 0.7, 0.6], [1, 0, 0, 0], k=4) == pytest.approx(D5 / D2)
    # A non-relevant NaN ranks first, above the relevant 0.9: rank 2.
    assert ndcg_at_k([0.9, np.nan, 0.7, 0.6], [1, 0, 0, 0], k=4) == pytest.approx(D3 / D2)
    # All NaN: the relevant one below every other, however the row is listed.
    assert ndcg_at_k([np.nan] * 3, [0, 1, 0], k=3) == pytest.approx(D4 / D2)


def test_a_query_without_relevant_documents_scores_zero():
    assert ndcg_at_k([0.9, 0.1, 0.5], [0, 0, 0], k=100) == 0.0


def test_retrieval_on_2d_embeddings_against_hand_cosines():
    documents = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    document_labels = np.array([0, 1, 0])
    # Query 0 (label 0) at (0.2, 1): cosines 0.196 (doc 0), 0.981 (doc 1), 0.832 (doc 2): the
    # ranking is doc 1 (irrelevant), doc 2, doc 0. Query 1 (label 1) at (0, 1): doc 1 first.
    # Query 2 has label 2, which no document carries: 0, counted.
    queries = np.array([[0.2, 1.0], [0.0, 1.0], [1.0, 0.0]])
    result = retrieval_ndcg(queries, np.array([0, 1, 2]), documents, document_labels, k=100)
    first = (D3 + D4) / (D2 + D3)
    assert result == pytest.approx({"ndcg@100": (first + 1.0 + 0.0) / 3, "queries": 3,
                                    "queries_without_relevant": 1})
    at_2 = retrieval_ndcg(queries, np.array([0, 1, 2]), documents, document_labels, k=2)
    assert at_2["ndcg@2"] == pytest.approx((D3 / (D2 + D3) + 1.0) / 3)


def test_blocks_of_queries_weigh_by_their_size(monkeypatch):
    rng = np.random.default_rng(0)
    queries, documents = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    query_labels, document_labels = rng.integers(0, 2, 7), np.array([0, 1, 0, 1, 1])
    whole = retrieval_ndcg(queries, query_labels, documents, document_labels, k=3)
    monkeypatch.setattr(ndcg, "_BLOCK_ROWS", 2)
    assert retrieval_ndcg(queries, query_labels, documents, document_labels, k=3) == pytest.approx(whole)
    one_by_one = [ndcg_at_k(documents @ q / np.linalg.norm(documents, axis=1), document_labels == label, k=3)
                  for q, label in zip(queries, query_labels)]
    assert whole["ndcg@3"] == pytest.approx(np.mean(one_by_one))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="relevance must hold only 0 and 1"):
        ndcg_at_k([0.1, 0.2], [2, 0])
    with pytest.raises(ValueError, match="k must be positive"):
        ndcg_at_k([0.1, 0.2], [1, 0], k=0)
    with pytest.raises(ValueError, match="at least 2 documents"):
        retrieval_ndcg(np.ones((1, 2)), [0], np.ones((1, 2)), [0])
