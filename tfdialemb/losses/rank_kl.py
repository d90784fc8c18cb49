"""Listwise sorting loss: KL divergence from the true-rank distribution to the softmax of the scores.

The augmentation thesis (appendix 1.2): the predicted ranks pass through a softmax and the model
minimises the KL divergence between that output and target probabilities, "the softmax over the
utterances' true ranks, i.e. -i for the i-th utterance of the dialogue". The direction is the
released one (voorhs/dialogue-augmentation mylib/modeling/listwise/ranker.py `SortingLoss`:
`KLDivLoss(reduction="batchmean")(log_softmax(scores), targets)`), KL(targets ‖ softmax(scores)):

    loss_b = Σ_i p_i (log p_i - log q_i),   q = softmax(s) over the dialogue's utterances,

summed over a dialogue's utterances and averaged over dialogues, with 0 · log 0 = 0. Targets:
  - "paper": p = softmax(-i) over the utterance positions i = 0 .. n-1;
  - "released": p ∝ linspace(1, 0, n), the released `_make_true_ranks` (the last utterance gets 0).
"""
import tensorflow as tf

TARGETS = ("paper", "released")


def rank_targets(positions: tf.Tensor, mask: tf.Tensor, targets: str = "paper") -> tf.Tensor:
    """Target probabilities [B, N] of utterances at true `positions` [B, N] (0 first) where `mask`
    [B, N] marks the real ones; padding gets 0."""
    valid = tf.cast(mask, tf.bool)
    position = tf.cast(positions, tf.float32)
    if targets == "paper":
        # -1e9, not -inf, off the mask: a row without utterances stays finite (all zeros).
        logits = tf.where(valid, -position, -1e9)
        return tf.where(valid, tf.nn.softmax(logits, axis=-1), 0.0)
    if targets == "released":
        n = tf.reduce_sum(tf.cast(valid, tf.float32), axis=-1, keepdims=True)
        # A one-utterance dialogue gets [1], as `_make_true_ranks` gives it (linspace(1, 0, 1) = [1]).
        weight = tf.where(valid, tf.where(n > 1.0, (n - 1.0 - position) / tf.maximum(n - 1.0, 1.0), 1.0), 0.0)
        return tf.math.divide_no_nan(weight, tf.reduce_sum(weight, axis=-1, keepdims=True))
    raise ValueError(f"unknown sorting targets {targets!r}; expected one of {TARGETS}")


def rank_kl(scores: tf.Tensor, positions: tf.Tensor, mask: tf.Tensor, targets: str = "paper") -> tf.Tensor:
    """KL(rank_targets ‖ softmax(scores)) per dialogue [B] from `scores` [B, N] over the real
    utterances of `mask` [B, N]."""
    valid = tf.cast(mask, tf.bool)
    target = rank_targets(positions, mask, targets)
    log_predicted = tf.nn.log_softmax(tf.where(valid, tf.cast(scores, tf.float32), -1e9), axis=-1)
    log_target = tf.math.log(tf.where(target > 0, target, 1.0))
    return tf.reduce_sum(tf.where(target > 0, target * (log_target - log_predicted), 0.0), axis=-1)
