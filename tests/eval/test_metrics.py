"""Ranking and correlation metrics against rankings worked out by hand."""
import math

import numpy as np
import pytest

from tfdialemb.eval import metrics

DESCENDING = np.array([4.0, 3.0, 2.0, 1.0])


def test_relevance_0101_in_score_order():
    relevance = np.array([0, 1, 0, 1])
    assert metrics.average_precision(DESCENDING, relevance) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert metrics.reciprocal_rank(DESCENDING, relevance) == 0.5
    assert [metrics.precision_at_k(DESCENDING, relevance, k) for k in (1, 2, 3, 4)] == [
        0.0, 0.5, pytest.approx(1 / 3), 0.5]
    assert [metrics.recall_at_k(DESCENDING, relevance, k) for k in (1, 2, 3, 4)] == [
        0.0, 0.5, 0.5, 1.0]


def test_candidates_are_ranked_by_descending_score_not_input_order():
    scores, relevance = np.array([0.1, 0.9, 0.5, 0.3]), np.array([1, 0, 0, 1])
    np.testing.assert_array_equal(metrics.ranked_relevance(scores, relevance), [0, 0, 1, 1])
    assert metrics.average_precision(scores, relevance) == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert metrics.reciprocal_rank(scores, relevance) == pytest.approx(1 / 3)


def test_precision_divides_by_k_even_past_the_last_candidate():
    """DialogueCSE pads shorter rankings with non-relevant entries."""
    relevance = np.array([1, 0, 1, 0])
    assert metrics.precision_at_k(DESCENDING, relevance, 10) == pytest.approx(2 / 10)
    assert metrics.recall_at_k(DESCENDING, relevance, 10) == 1.0


def test_ties_rank_non_relevant_candidates_first():
    relevance = np.array([1, 1, 0])
    ranked = metrics.ranked_relevance(np.zeros(3), relevance)
    np.testing.assert_array_equal(ranked, [0, 1, 1])
    assert metrics.average_precision(np.zeros(3), relevance) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert metrics.reciprocal_rank(np.zeros(3), relevance) == 0.5
    # Only equal scores are reordered: a strictly higher relevant candidate stays first.
    np.testing.assert_array_equal(
        metrics.ranked_relevance(np.array([2.0, 1.0, 1.0]), np.array([1, 1, 0])), [1, 0, 1])


def test_nan_scores_are_misses_in_every_ranking_metric():
    nan = np.nan
    # The relevant candidate scored NaN ranks last, below the two scored negatives: rank 3.
    scores, relevance = np.array([nan, 0.2, 0.1]), np.array([1, 0, 0])
    np.testing.assert_array_equal(metrics.ranked_relevance(scores, relevance), [0, 0, 1])
    assert metrics.reciprocal_rank(scores, relevance) == pytest.approx(1 / 3)
    assert metrics.average_precision(scores, relevance) == pytest.approx(1 / 3)
    assert metrics.precision_at_k(scores, relevance, 1) == 0.0
    assert metrics.recall_at_k(scores, relevance, 2) == 0.0
    # A negative scored NaN ranks first, above the relevant candidate's 0.9: rank 2.
    scores, relevance = np.array([0.9, nan, 0.1]), np.array([1, 0, 0])
    np.testing.assert_array_equal(metrics.ranked_relevance(scores, relevance), [0, 1, 0])
    assert metrics.reciprocal_rank(scores, relevance) == 0.5
    # All NaN: both relevant candidates last, AP = (1/3 + 2/4) / 2.
    scores, relevance = np.full(4, nan), np.array([1, 0, 1, 0])
    assert metrics.average_precision(scores, relevance) == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert metrics.recall_at_k(scores, relevance, 2) == 0.0


@pytest.mark.parametrize("ties", [metrics.PESSIMISTIC, metrics.OPTIMISTIC])
def test_rank_of_puts_a_nan_truth_last_and_a_nan_rival_above_it(ties):
    nan = np.nan
    assert metrics.rank_of(np.array([nan, 0.5, 0.1, 0.3]), 0, ties) == 4
    assert metrics.rank_of(np.array([0.9, nan, 0.1, nan]), 0, ties) == 3
    assert metrics.rank_of(np.full(5, nan), 2, ties) == 5


def test_rank_of_ties_by_mode():
    scores = np.array([0.5, 0.5, 0.5, 0.9])
    assert metrics.rank_of(scores, 1, metrics.PESSIMISTIC) == 4
    assert metrics.rank_of(scores, 1, metrics.OPTIMISTIC) == 2


def test_a_query_without_relevant_candidates_is_refused_where_undefined():
    scores, relevance = np.array([0.3, 0.2]), np.array([0, 0])
    for metric in (metrics.average_precision, metrics.reciprocal_rank):
        with pytest.raises(ValueError, match="no relevant candidate"):
            metric(scores, relevance)
    with pytest.raises(ValueError, match="no relevant candidate"):
        metrics.recall_at_k(scores, relevance, 1)
    assert metrics.precision_at_k(scores, relevance, 1) == 0.0


def test_bad_ranking_inputs():
    with pytest.raises(ValueError, match="equal 1-D"):
        metrics.average_precision(np.zeros(3), np.array([1, 0]))
    with pytest.raises(ValueError, match="only 0 and 1"):
        metrics.average_precision(np.zeros(2), np.array([2, 0]))
    with pytest.raises(ValueError, match="k must be positive"):
        metrics.precision_at_k(np.zeros(2), np.array([1, 0]), 0)


def test_spearman_by_hand():
    # Ranks 1 2 3 4 against 1 3 2 4: rho = 1 - 6 * (0 + 1 + 1 + 0) / (4 * (16 - 1)) = 0.8.
    assert metrics.spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    # Tied gold values share their mean rank: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4) give
    # Pearson 4.5 / sqrt(4.5 * 5) = sqrt(0.9).
    assert metrics.spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(math.sqrt(0.9))
    # Any increasing map of the predictions leaves it unchanged.
    assert metrics.spearman([1, 2, 3, 4], np.exp([10, 30, 20, 40])) == pytest.approx(0.8)


def test_pearson_by_hand():
    assert metrics.pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert metrics.pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # Deviations (-1, 0, 1) and (-1, -1, 2): 3 / sqrt(2 * 6).
    assert metrics.pearson([1, 2, 3], [0, 0, 3]) == pytest.approx(3 / math.sqrt(12))


def test_correlations_of_constant_or_too_short_inputs():
    assert math.isnan(metrics.spearman([1, 2, 3], [5, 5, 5]))
    assert math.isnan(metrics.pearson([1, 2, 3], [5, 5, 5]))
    with pytest.raises(ValueError, match="at least 2"):
        metrics.spearman([1], [1])
    with pytest.raises(ValueError, match="equal 1-D"):
        metrics.pearson([1, 2, 3], [1, 2])
