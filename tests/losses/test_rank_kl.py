"""The listwise sorting loss against a numpy re-derivation of KL(targets ‖ softmax(scores)), and the
two target distributions worked by hand."""
import numpy as np
import pytest

from tfdialemb.losses.rank_kl import rank_kl, rank_targets


def _numpy_kl(scores, positions, mask, targets):
    out = []
    for s, pos, m in zip(scores, positions, mask):
        s, pos = np.asarray(s, np.float64)[m], np.asarray(pos, np.float64)[m]
        if targets == "paper":
            p = np.exp(-pos) / np.exp(-pos).sum()
        else:
            n = len(pos)
            p = (n - 1 - pos) / (n - 1)
            p /= p.sum()
        q = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        keep = p > 0
        out.append(np.sum(p[keep] * np.log(p[keep] / q[keep])))
    return np.array(out)


@pytest.mark.parametrize("targets", ["paper", "released"])
def test_matches_numpy_with_shuffled_positions_and_padding(targets):
    scores = np.array([[0.3, -1.2, 2.0, 0.5], [1.0, 0.0, 9.0, -3.0]], np.float32)
    positions = np.array([[2, 0, 3, 1], [1, 0, 2, 3]], np.int32)
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], bool)  # the second dialogue has 2 utterances
    np.testing.assert_allclose(rank_kl(scores, positions, mask, targets).numpy(),
                               _numpy_kl(scores, positions, mask, targets), rtol=1e-5, atol=1e-6)


def test_targets_worked_by_hand():
    positions, mask = np.array([[0, 1, 2, 0]]), np.array([[1, 1, 1, 0]])
    e = np.exp(-np.arange(3.0))
    np.testing.assert_allclose(rank_targets(positions, mask, "paper").numpy(), [list(e / e.sum()) + [0]], rtol=1e-6)
    # linspace(1, 0, 3) = (1, 0.5, 0), normalised.
    np.testing.assert_allclose(rank_targets(positions, mask, "released").numpy(), [[2 / 3, 1 / 3, 0, 0]], rtol=1e-6)


def test_two_utterances_with_equal_scores_by_hand():
    scores, positions, mask = np.zeros([1, 2], np.float32), np.array([[0, 1]]), np.ones([1, 2])
    p = np.array([np.e, 1]) / (np.e + 1)
    np.testing.assert_allclose(rank_kl(scores, positions, mask, "paper").numpy(), [np.sum(p * np.log(2 * p))],
                               rtol=1e-6)
    np.testing.assert_allclose(rank_kl(scores, positions, mask, "released").numpy(), [np.log(2)], rtol=1e-6)


def test_a_perfect_ordering_scores_lower_than_its_reverse():
    positions, mask = np.array([[0, 1, 2, 3]]), np.ones([1, 4])
    right = rank_kl(-np.arange(4.0)[np.newaxis], positions, mask).numpy()
    wrong = rank_kl(np.arange(4.0)[np.newaxis], positions, mask).numpy()
    assert right[0] == pytest.approx(0.0, abs=1e-6) and wrong[0] > 1.0


@pytest.mark.parametrize("targets", ["paper", "released"])
def test_one_utterance_and_empty_dialogues_give_zero_loss_and_finite_gradients(targets):
    """A dialogue of one utterance has one ordering (target [1], as the released `_make_true_ranks`
    gives linspace(1, 0, 1) = [1]) and a padding row has none: both lose 0, and neither sends a NaN
    gradient into the scores (and through them into the encoder)."""
    import tensorflow as tf

    scores = tf.Variable([[0.2, 0.5, 0.0], [0.1, -0.3, 0.4], [0.3, 0.7, -1.0]])
    positions = np.array([[0, 1, 2], [0, 0, 0], [1, 0, 2]], np.int32)
    mask = np.array([[1, 0, 0], [0, 0, 0], [1, 1, 1]], bool)
    np.testing.assert_allclose(rank_targets(positions, mask, targets).numpy()[:2],
                               [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    with tf.GradientTape() as tape:
        losses = rank_kl(scores, positions, mask, targets)
        total = tf.reduce_sum(losses)
    gradient = tape.gradient(total, scores).numpy()
    np.testing.assert_allclose(losses.numpy()[:2], [0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(losses.numpy()[2], _numpy_kl(scores.numpy()[2:], positions[2:], mask[2:], targets)[0],
                               rtol=1e-5)
    assert np.all(np.isfinite(gradient)) and np.allclose(gradient[:2], 0.0)
