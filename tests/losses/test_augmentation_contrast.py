"""augcl's loss against numpy re-derivations of the released code and the thesis formula, on one
device and on two replicas (negatives gathered, or each replica's own as the released DDP run)."""
import numpy as np
import pytest
import tensorflow as tf

from global_batch import loss_and_gradient
from tfdialemb.core.distribute import make_strategy
from tfdialemb.losses.augmentation_contrast import augcl_loss


def _normalise(v):
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _cross_entropy_rows(logits):
    """-log softmax(logits)[i, i] per row."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    return -(np.diag(shifted) - np.log(np.exp(shifted).sum(axis=1)))


def _released(x, y, swap, tau=0.1):
    """dialogue_encoder.py `_contrastive_step` + loss.py `contrastive_symmetric`, per row: the
    batch mean of the result is F.cross_entropy(S, I) + F.cross_entropy(S.T, I)."""
    x, y = _normalise(x), _normalise(y)
    x, y = np.where(swap[:, None], y, x), np.where(swap[:, None], x, y)
    scores = x @ y.T / tau
    return _cross_entropy_rows(scores) + _cross_entropy_rows(scores.T)


def _thesis(x, y):
    """Thesis Sec. 3.2: -log exp(cos(x_i, y_i)) / Σ_z exp(cos(x_i, z))."""
    return _cross_entropy_rows(_normalise(x) @ _normalise(y).T)


RNG = np.random.default_rng(0)
X, Y = RNG.normal(size=(6, 4)).astype(np.float32), RNG.normal(size=(6, 4)).astype(np.float32)
SWAP = np.array([True, False, False, True, True, False])


def test_released_loss_matches_numpy_and_sums_both_directions():
    got = augcl_loss(X, Y, SWAP, "released").numpy()
    np.testing.assert_allclose(got, _released(X, Y, SWAP), rtol=1e-5)
    # The batch mean is the released sum of the two mean cross-entropies (not their average).
    scores = _normalise(np.where(SWAP[:, None], Y, X)) @ _normalise(np.where(SWAP[:, None], X, Y)).T / 0.1
    assert got.mean() == pytest.approx(_cross_entropy_rows(scores).mean() + _cross_entropy_rows(scores.T).mean(),
                                       rel=1e-5)
    # The swap changes which rows meet as negatives.
    assert not np.allclose(got, _released(X, Y, np.zeros(6, bool)))


def test_thesis_loss_is_one_direction_without_temperature_or_swap():
    got = augcl_loss(X, Y, SWAP, "thesis").numpy()
    np.testing.assert_allclose(got, _thesis(X, Y), rtol=1e-5)
    np.testing.assert_allclose(augcl_loss(X, Y, ~SWAP, "thesis").numpy(), got, rtol=1e-6)


def _run(strategy, variant, gather):
    w = np.eye(4, dtype=np.float32) + 0.1
    return loss_and_gradient(strategy, (X, Y, SWAP), w, lambda batch, weight: augcl_loss(
        tf.matmul(batch[0], weight), tf.matmul(batch[1], weight), batch[2], variant, gather=gather))


@pytest.mark.parametrize("variant", ["released", "thesis"])
def test_two_replicas_gathering_negatives_equal_one_device(two_replicas, variant):
    one_loss, one_grad = _run(make_strategy("default"), variant, gather=True)
    two_loss, two_grad = _run(two_replicas, variant, gather=True)
    np.testing.assert_allclose(two_loss, one_loss, rtol=1e-5)
    np.testing.assert_allclose(two_grad, one_grad, atol=1e-5)
    w = np.eye(4, dtype=np.float32) + 0.1
    reference = _released(X @ w, Y @ w, SWAP) if variant == "released" else _thesis(X @ w, Y @ w)
    np.testing.assert_allclose(one_loss, reference.mean(), rtol=1e-5)


def test_without_gathering_each_replica_contrasts_its_own_rows(two_replicas):
    """Replica r holds rows [3r, 3r + 3): its loss is the released loss of those rows alone."""
    loss, _ = _run(two_replicas, "released", gather=False)
    w = np.eye(4, dtype=np.float32) + 0.1
    halves = [_released(X[r] @ w, Y[r] @ w, SWAP[r]) for r in (slice(0, 3), slice(3, 6))]
    np.testing.assert_allclose(loss, np.concatenate(halves).mean(), rtol=1e-5)
    assert not np.isclose(loss, _released(X @ w, Y @ w, SWAP).mean(), rtol=1e-3)


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown augcl loss 'both'"):
        augcl_loss(X, Y, SWAP, "both")


def test_released_process_groups_contrast_each_group_of_rows_alone_by_hand():
    """--augcl_batch=released: negatives only within each group of consecutive rows (the DDP
    processes). Unit rows e1, e2, e1, e2 at temperature 1, one direction (thesis): in a group of two
    the true pair scores 1 against one 0, loss log(1 + 1/e); over all four it meets 1 twice and 0
    twice, loss log(2 + 2/e)."""
    rows = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], np.float32)
    swap = np.zeros(4, bool)
    np.testing.assert_allclose(augcl_loss(rows, rows, swap, "thesis", group_size=2).numpy(),
                               [np.log(1 + 1 / np.e)] * 4, rtol=1e-6)
    np.testing.assert_allclose(augcl_loss(rows, rows, swap, "thesis").numpy(), [np.log(2 + 2 / np.e)] * 4,
                               rtol=1e-6)


def test_released_process_groups_on_two_replicas_equal_one_device(two_replicas):
    """Groups of 3 rows gathered across two replicas of 3 rows, or on one device of 6: each row's
    loss is the released loss of its own group, the mean over all 6 (DDP's averaged gradients)."""
    w = np.eye(4, dtype=np.float32) + 0.1
    halves = [_released(X[r] @ w, Y[r] @ w, SWAP[r]) for r in (slice(0, 3), slice(3, 6))]
    for strategy in (make_strategy("default"), two_replicas):
        loss, _ = loss_and_gradient(strategy, (X, Y, SWAP), w, lambda batch, weight: augcl_loss(
            tf.matmul(batch[0], weight), tf.matmul(batch[1], weight), batch[2], "released", group_size=3))
        np.testing.assert_allclose(loss, np.concatenate(halves).mean(), rtol=1e-5)
