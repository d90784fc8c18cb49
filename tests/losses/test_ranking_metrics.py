"""In-batch accuracy@k and the sorting quality on hand-worked cases."""
import numpy as np

from tfdialemb.losses.ranking_metrics import sorting_quality, top_k_hits


def test_top_k_hits_by_hand():
    scores = np.array([
        [0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6],   # the positive (0) is best: hit at 1 and 5
        [0.8, 0.5, 0.9, 0.7, 0.6, 0.1, 0.2],   # 1 scores 0.5, four score higher: miss at 1, hit at 5
        [0.9, 0.8, 0.1, 0.7, 0.6, 0.5, 0.4],   # 2 is last of 7: six higher, miss at 5
    ], np.float32)
    labels = np.array([0, 1, 2])
    np.testing.assert_array_equal(top_k_hits(scores, labels, 1).numpy(), [1, 0, 0])
    np.testing.assert_array_equal(top_k_hits(scores, labels, 5).numpy(), [1, 1, 0])


def test_top_k_hits_ranks_ties_against_the_truth_and_nan_as_a_miss():
    nan = np.nan
    scores = np.array([
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],   # all tied: the six others rank above 3: miss at 1 and 5
        [0.9, 0.9, 0.1, 0.2, 0.3, 0.4, 0.5],   # one tie with 0: rank 2, miss at 1, hit at 5
        [nan, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6],   # the truth scored NaN: a miss whatever k
        [0.9, nan, 0.1, 0.2, 0.3, 0.4, 0.5],   # a NaN candidate counts above the truth: rank 2
        [nan, nan, nan, nan, nan, nan, nan],   # a diverged model: every row a miss
    ], np.float32)
    labels = np.array([3, 0, 0, 0, 2])
    np.testing.assert_array_equal(top_k_hits(scores, labels, 1).numpy(), [0, 0, 0, 0, 0])
    np.testing.assert_array_equal(top_k_hits(scores, labels, 5).numpy(), [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(top_k_hits(scores, labels, 7).numpy(), [1, 1, 0, 1, 0])


def _quality(predicted_order, n=None):
    """sorting_quality when the utterances at true positions `predicted_order` are predicted in that
    order (padded to n with masked rows)."""
    k = len(predicted_order)
    n = n or k
    positions = np.arange(n)
    scores = np.zeros(n, np.float32)
    scores[list(predicted_order)] = -np.arange(k, dtype=np.float32)  # earlier in the order: higher
    mask = np.arange(n) < k
    return float(sorting_quality(scores[np.newaxis], positions[np.newaxis], mask[np.newaxis]).numpy()[0])


def test_sorting_quality_on_hand_worked_permutations():
    assert _quality([0, 1, 2, 3]) == 1.0
    assert _quality([3, 2, 1, 0]) == 0.0
    assert np.isclose(_quality([1, 0, 2, 3]), 1 - 1 / 6)       # one transposition of 6 pairs
    assert np.isclose(_quality([2, 0, 1]), 1 - 2 / 3)          # (2, 0) and (2, 1) inverted
    assert np.isclose(_quality([1, 3, 0, 2]), 1 - 3 / 6)       # (1, 0), (3, 0), (3, 2)
    assert np.isclose(_quality([1, 0], n=4), 0.0)              # padding rows do not count


def test_sorting_quality_of_shuffled_inputs_ties_and_nan():
    # Utterances stored shuffled: true positions (2, 0, 1); scores order them 0, 1, 2 exactly.
    positions = np.array([[2, 0, 1]])
    assert sorting_quality(np.array([[0.1, 0.9, 0.5]]), positions, np.ones([1, 3])).numpy()[0] == 1.0
    # Constant scores: every pair tied is inverted, whatever order the inputs came in.
    assert sorting_quality(np.zeros([1, 4]), np.array([[0, 1, 2, 3]]), np.ones([1, 4])).numpy()[0] == 0.0
    # One tie of 6 pairs (positions 1 and 2 score alike): 1 - 1/6.
    tied = sorting_quality(np.array([[4.0, 3.0, 3.0, 1.0]]), np.array([[0, 1, 2, 3]]), np.ones([1, 4]))
    assert np.isclose(tied.numpy()[0], 1 - 1 / 6)
    # A NaN score inverts the 3 pairs it is in: 1 - 3/6; all NaN: 0.
    one_nan = sorting_quality(np.array([[4.0, np.nan, 2.0, 1.0]]), np.array([[0, 1, 2, 3]]), np.ones([1, 4]))
    assert np.isclose(one_nan.numpy()[0], 1 - 3 / 6)
    assert sorting_quality(np.full([1, 4], np.nan), np.array([[0, 1, 2, 3]]), np.ones([1, 4])).numpy()[0] == 0.0
