"""In-graph metrics of the augmentation thesis' two auxiliary models, per example, so the training
loop reports them beside the loss and evaluation computes them the same way.

  - `top_k_hits`: in-batch accuracy@k of the context-response model (appendix 1.1 reports
    accuracy@5 = 0.955): whether the true response is among the k best-scored responses of the
    batch (voorhs/dialogue-augmentation mylib/learners/accuracy.py `all_accuracies`).
  - `sorting_quality`: 1 - the normalised number of transpositions of the listwise sorting model
    (appendix 1.2 reports 0.96): the utterances ordered by predicted score, the inversions of
    their true positions divided by the most possible, n(n-1)/2 (released
    mylib/modeling/listwise/ranker.py `SortingMetric`).
"""
import tensorflow as tf


def top_k_hits(scores: tf.Tensor, labels: tf.Tensor, k: int) -> tf.Tensor:
    """1.0 where `labels[i]`'s score is among the k highest of row i of `scores` [B, N], else 0.0 [B].

    A candidate scoring exactly as the true one does not push it down (the released code leaves
    ties to `torch.topk`)."""
    scores = tf.cast(scores, tf.float32)
    true = tf.gather(scores, labels, batch_dims=1)
    above = tf.reduce_sum(tf.cast(scores > true[:, tf.newaxis], tf.int32), axis=1)
    return tf.cast(above < k, tf.float32)


def sorting_quality(scores: tf.Tensor, positions: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """1 - inversions / (n(n-1)/2) per dialogue [B], from predicted `scores` [B, N] (higher: earlier),
    the true `positions` [B, N] of the utterances in their dialogue and `mask` [B, N] (1: a real
    utterance). An inversion is a pair of utterances ordered one way by position and the other by
    score; a pair with equal scores counts half, the expectation of the released argsort's arbitrary
    tie-break, so constant scores give 0.5, not the order the utterances came in. A dialogue of
    fewer than two utterances has nothing to order and gets 1."""
    scores = tf.cast(scores, tf.float32)
    valid = tf.cast(mask, tf.bool)
    pairs = tf.logical_and(valid[:, :, tf.newaxis], valid[:, tf.newaxis, :])
    # Pairs (i, j) with i truly before j; inverted when j scores higher, half when they tie.
    before = tf.logical_and(pairs, positions[:, :, tf.newaxis] < positions[:, tf.newaxis, :])
    score_i, score_j = scores[:, :, tf.newaxis], scores[:, tf.newaxis, :]
    inverted = tf.cast(score_j > score_i, tf.float32) + 0.5 * tf.cast(tf.equal(score_j, score_i), tf.float32)
    inversions = tf.reduce_sum(tf.where(before, inverted, 0.0), axis=[1, 2])
    n = tf.reduce_sum(tf.cast(valid, tf.float32), axis=1)
    most = n * (n - 1.0) / 2.0
    return tf.where(most > 0, 1.0 - inversions / tf.maximum(most, 1.0), 1.0)
