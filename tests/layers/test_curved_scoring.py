"""Triple-encoder scores (triple-encoders Eq. 3-4, Appendix B) against hand-worked values and numpy loops."""
import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.layers import curved_scoring as cs

SQRT_HALF = np.sqrt(0.5)


def _unit(v):
    return v / np.linalg.norm(v)


def _numpy_c3l(b1, b2, after, k_last_rows=None):
    """Eq. 3 as a double loop over (i, j), i < j, j >= h - k."""
    h = len(b1)
    first_row = 0 if k_last_rows is None else h - k_last_rows
    scores = np.zeros(len(after))
    for i in range(h):
        for j in range(max(i + 1, first_row), h):
            mix = (b1[i] + b2[j]) / 2
            scores += [mix @ a / np.linalg.norm(mix) / np.linalg.norm(a) for a in after]
    return scores


def _numpy_maxsim(b1, b2, after, k_last_rows=None):
    """Appendix B in plain Python: per candidate, greedy over mixes by descending cosine."""
    h = len(b1)
    first_row = 0 if k_last_rows is None else h - k_last_rows
    pairs = [(i, j) for j in range(max(first_row, 1), h) for i in range(j)]
    scores = []
    for a in after:
        cosines = [_unit((b1[i] + b2[j]) / 2) @ _unit(a) for i, j in pairs]
        used, added = set(), []
        for p in sorted(range(len(pairs)), key=lambda p: -cosines[p]):
            i, j = pairs[p]
            if i not in used or j not in used:
                added.append(cosines[p])
                used |= {i, j}
        scores.append(np.mean(added) if added else 0.0)
    return np.array(scores)


@pytest.fixture
def vectors():
    rng = np.random.default_rng(3)
    return rng.normal(size=(6, 5)), rng.normal(size=(6, 5)), rng.normal(size=(4, 5))


def test_c3l_hand_worked():
    # One mix, normalize(((1,0) + (0,1)) / 2) = (1, 1)/√2.
    b1 = np.array([[1.0, 0.0], [5.0, 5.0]])
    b2 = np.array([[9.0, 9.0], [0.0, 1.0]])
    after = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]])
    np.testing.assert_allclose(cs.c3l_scores(b1, b2, after).numpy(), [SQRT_HALF, SQRT_HALF, 0.0],
                               atol=1e-12)
    # Three utterances. Row 1: mix (0,1) = (1, 1)/√2. Row 2: mix (0,2) = normalize((1,0) + (1,0))
    # = (1, 0) and mix (1,2) = normalize((5,5) + (1,0)) = (6, 5)/√61.
    b1 = np.array([[1.0, 0.0], [5.0, 5.0], [7.0, 1.0]])
    b2 = np.array([[9.0, 9.0], [0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(
        cs.row_sums(b1, b2).numpy(),
        [[0, 0], [SQRT_HALF, SQRT_HALF], [1 + 6 / 61 ** 0.5, 5 / 61 ** 0.5]], atol=1e-12)
    # The last row alone (k = 1) against (0, 1): 0 + 5/√61.
    np.testing.assert_allclose(cs.c3l_scores(b1, b2, np.array([[0.0, 1.0]]), k_last_rows=1).numpy(),
                               [5 / 61 ** 0.5], atol=1e-12)


def test_c3l_matches_a_numpy_double_loop(vectors):
    b1, b2, after = vectors
    for k in (None, 1, 2, 3, 10):
        np.testing.assert_allclose(cs.c3l_scores(b1, b2, after, k).numpy(),
                                   _numpy_c3l(b1, b2, after, k), atol=1e-10)
    sums = cs.row_sums(b1, b2).numpy()
    for j in range(len(b1)):
        np.testing.assert_allclose(cs.latest_row_sum(b1[:j], b2[j]).numpy(), sums[j], atol=1e-12)
    np.testing.assert_allclose(
        cs.scores_from_row_sums(sums, after, 2).numpy(),
        sums[-2:].sum(0) @ (after / np.linalg.norm(after, axis=1, keepdims=True)).T,
        atol=1e-10)


def test_triangle_pairs_order_and_last_rows():
    assert cs.triangle_pairs(4).numpy().tolist() == [[0, 1], [0, 2], [1, 2], [0, 3], [1, 3],
                                                      [2, 3]]
    assert cs.triangle_pairs(4, 2).numpy().tolist() == [[0, 2], [1, 2], [0, 3], [1, 3], [2, 3]]
    assert cs.triangle_pairs(1).numpy().shape == (0, 2)


def test_maxsim_hand_worked():
    # Cosines with the candidate (1, 0): pair (0,1) 0.9, (0,2) 0.5, (1,2) 0.8. (0,1) is added,
    # (1,2) brings utterance 2 and is added, (0,2) has both used: (0.9 + 0.8) / 2.
    def at(c):
        return [c, np.sqrt(1 - c * c)]

    mixes = np.array([at(0.9), at(0.5), at(0.8)])
    pairs = np.array([[0, 1], [0, 2], [1, 2]], np.int32)
    scores = cs.maxsim_scores_from_mixes(mixes, pairs, np.array([[1.0, 0.0], [0.0, 1.0]]))
    sines = [np.sqrt(1 - c * c) for c in (0.9, 0.5, 0.8)]
    # (0, 1): sines 0.436, 0.866, 0.6 → (0,2) first, then (1,2) (adds 1), (0,1) skipped.
    np.testing.assert_allclose(scores.numpy(), [0.85, (sines[1] + sines[2]) / 2], atol=1e-12)


def test_maxsim_matches_numpy(vectors):
    b1, b2, after = vectors
    for k in (None, 1, 3):
        np.testing.assert_allclose(cs.maxsim_scores(b1, b2, after, k).numpy(),
                                   _numpy_maxsim(b1, b2, after, k), atol=1e-10)
    np.testing.assert_array_equal(cs.maxsim_scores(b1[:1], b2[:1], after).numpy(), np.zeros(4))


def test_bi_encoder_and_planning_scores(vectors):
    b1, b2, after = vectors
    cosines = np.array([[_unit(b) @ _unit(a) for a in after] for b in b2])
    np.testing.assert_allclose(cs.bi_encoder_scores(b2, after).numpy(), cosines.sum(0), atol=1e-12)
    goal = after[0]
    expected = [_unit(c) @ _unit(goal) + np.mean([_unit((h + c) / 2) @ _unit(goal) for h in b1])
                for c in b2]
    np.testing.assert_allclose(cs.planning_scores(b1, b2, goal).numpy(), expected, atol=1e-12)
    # Hand-worked: history (1, 0), candidate (0, 1), goal (1, 0): 0 + cos((1,1)/2, (1,0)).
    np.testing.assert_allclose(
        cs.planning_scores(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]),
                           np.array([1.0, 0.0])).numpy(), [SQRT_HALF], atol=1e-12)


def test_graph_mode_with_dynamic_shapes(vectors):
    b1, b2, after = (v.astype(np.float32) for v in vectors)
    spec = [tf.TensorSpec([None, None], tf.float32)] * 3
    c3l = tf.function(lambda x, y, z: cs.c3l_scores(x, y, z, 2), input_signature=spec)
    maxsim = tf.function(cs.maxsim_scores, input_signature=spec)
    for h in (1, 2, 6):
        np.testing.assert_allclose(c3l(b1[:h], b2[:h], after), _numpy_c3l(b1[:h], b2[:h], after,
                                                                        min(2, h)), atol=1e-5)
        np.testing.assert_allclose(maxsim(b1[:h], b2[:h], after),
                                   _numpy_maxsim(b1[:h], b2[:h], after), atol=1e-5)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2"])
def test_bad_k_last_rows(vectors, k):
    b1, b2, after = vectors
    with pytest.raises(ValueError, match="k_last_rows must be a positive int"):
        cs.c3l_scores(b1, b2, after, k)
