"""candidate_nt_xent (DialogueCSE Eq. 8 and the released calculate_loss) against numpy."""
import numpy as np
import pytest

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf

from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent


def _np_log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def _logits(seed=0, shape=(4, 5)):
    return np.random.default_rng(seed).normal(scale=3.0, size=shape).astype(np.float32)


def test_paper_is_minus_log_softmax_at_the_positive():
    logits = _logits()
    expected = np.array([-np.log(np.exp(row[0]) / np.exp(row).sum()) for row in logits])
    np.testing.assert_allclose(candidate_nt_xent(logits).numpy(), expected, rtol=1e-5)


def test_positive_index_per_example():
    logits = _logits()
    index = np.array([0, 3, 1, 4])
    expected = -_np_log_softmax(logits.astype(np.float64))[np.arange(4), index]
    got = candidate_nt_xent(logits, positive_index=tf.constant(index)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    got = candidate_nt_xent(logits, positive_index=2).numpy()
    np.testing.assert_allclose(got, -_np_log_softmax(logits.astype(np.float64))[:, 2], rtol=1e-5)


def test_released_is_the_tf1_mean_over_batch_and_candidates():
    logits = _logits()
    labels = np.zeros_like(logits)
    labels[:, 0] = 1.0
    per_example = candidate_nt_xent(logits, variant="released").numpy()
    np.testing.assert_allclose(
        per_example, candidate_nt_xent(logits).numpy() / logits.shape[1], rtol=1e-6)
    # dialogue-cse model/dse_cl_bert.py calculate_loss: -reduce_mean(log_softmax * labels).
    tf1_loss = -np.mean(_np_log_softmax(logits.astype(np.float64)) * labels)
    np.testing.assert_allclose(per_example.mean(), tf1_loss, rtol=1e-5)


def test_candidate_mask_drops_padded_candidates():
    logits = _logits()
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 1, 1, 0, 0]])
    paper = candidate_nt_xent(logits, candidate_mask=mask).numpy()
    released = candidate_nt_xent(logits, candidate_mask=mask, variant="released").numpy()
    for b in range(4):
        kept = logits[b][mask[b] > 0].astype(np.float64)
        expected = -_np_log_softmax(kept)[0]
        np.testing.assert_allclose(paper[b], expected, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(released[b], expected / mask[b].sum(), rtol=1e-5, atol=1e-7)


def test_the_positive_is_kept_even_if_masked():
    logits = _logits()
    mask = np.ones_like(logits)
    mask[:, 0] = 0
    np.testing.assert_allclose(candidate_nt_xent(logits, candidate_mask=mask).numpy(),
                               candidate_nt_xent(logits).numpy(), rtol=1e-6)


def test_float16_logits_give_float32_loss():
    logits = _logits()
    loss = candidate_nt_xent(tf.constant(logits, tf.float16))
    assert loss.dtype == tf.float32
    expected = -_np_log_softmax(logits.astype(np.float16).astype(np.float64))[:, 0]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)


def test_large_logits_are_stable():
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 0.0]], np.float32)
    np.testing.assert_allclose(candidate_nt_xent(logits).numpy(), [0.0, 2e4], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("variant", ["paper", "released"])
def test_gradient_is_softmax_minus_label_over_valid_candidates(variant):
    logits = tf.constant(_logits())
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 1, 1, 0, 0]],
                    np.float32)
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = tf.reduce_sum(candidate_nt_xent(logits, candidate_mask=mask, variant=variant))
    grad = tape.gradient(loss, logits).numpy()
    expected = np.zeros_like(grad)
    for b in range(4):
        kept = mask[b] > 0
        probs = np.exp(_np_log_softmax(logits.numpy()[b][kept].astype(np.float64)))
        probs[0] -= 1.0
        expected[b, kept] = probs / (mask[b].sum() if variant == "released" else 1.0)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-7)


def test_unknown_variant():
    with pytest.raises(ValueError, match="variant"):
        candidate_nt_xent(_logits(), variant="simcse")
