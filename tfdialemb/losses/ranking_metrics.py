"""In-graph ranking metrics, per example, so the training loop reports them beside the loss and
evaluation computes them the same way.

  - `top_k_hits`: whether the true candidate is among the k best-scored of its row: the in-batch
    accuracy@k of the augmentation thesis' context-response model (appendix 1.1 reports
    accuracy@5 = 0.955; voorhs/dialogue-augmentation mylib/learners/accuracy.py
    `all_accuracies`), and at k = 1 the training accuracy of every method that picks a positive
    among candidates or a token among the vocabulary.
  - `sorting_quality`: 1 - the normalised number of transpositions of the listwise sorting model
    (appendix 1.2 reports 0.96): the utterances ordered by predicted score, the inversions of
    their true positions divided by the most possible, n(n-1)/2 (released
    mylib/modeling/listwise/ranker.py `SortingMetric`).

Both rank pessimistically, as `tfdialemb.eval.metrics` does: a tie goes against the model and a
NaN score is a miss, so a model that scores everything alike, or a diverged one whose scores are
all NaN, never looks good (the released code leaves ties to `torch.topk` and `argsort`, under
which constant or NaN scores can rank the truth first).
"""
import tensorflow as tf


def top_k_hits(scores: tf.Tensor, labels: tf.Tensor, k: int) -> tf.Tensor:
    """1.0 where `labels[i]`'s score is among the k highest of row i of `scores` [B, N], else 0.0 [B].

    Every other candidate that does not score strictly lower than the true one counts as ranked
    above it (a tie, or a NaN on either side), and a true candidate scored NaN or infinite is a miss."""
    scores = tf.cast(scores, tf.float32)
    true = tf.gather(scores, labels, batch_dims=1)
    # Candidates not strictly below the truth, the truth itself among them when it is finite.
    not_below = tf.reduce_sum(tf.cast(tf.logical_not(scores < true[:, tf.newaxis]), tf.int32), axis=1)
    return tf.cast(tf.logical_and(not_below - 1 < k, tf.math.is_finite(true)), tf.float32)


def sorting_quality(scores: tf.Tensor, positions: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """1 - inversions / (n(n-1)/2) per dialogue [B], from predicted `scores` [B, N] (higher: earlier),
    the true `positions` [B, N] of the utterances in their dialogue and `mask` [B, N] (1: a real
    utterance). A pair of utterances is in order only when the earlier one scores strictly higher:
    a tie or a NaN score inverts it, so constant scores give 0, not the order the utterances came
    in. A dialogue of fewer than two utterances has nothing to order and gets 1."""
    scores = tf.cast(scores, tf.float32)
    valid = tf.cast(mask, tf.bool)
    pairs = tf.logical_and(valid[:, :, tf.newaxis], valid[:, tf.newaxis, :])
    # Pairs (i, j) with i truly before j; inverted unless i scores higher.
    before = tf.logical_and(pairs, positions[:, :, tf.newaxis] < positions[:, tf.newaxis, :])
    in_order = scores[:, :, tf.newaxis] > scores[:, tf.newaxis, :]
    inversions = tf.reduce_sum(tf.cast(tf.logical_and(before, tf.logical_not(in_order)), tf.float32), axis=[1, 2])
    n = tf.reduce_sum(tf.cast(valid, tf.float32), axis=1)
    most = n * (n - 1.0) / 2.0
    return tf.where(most > 0, 1.0 - inversions / tf.maximum(most, 1.0), 1.0)
