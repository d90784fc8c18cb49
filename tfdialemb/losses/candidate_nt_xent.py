"""NT-Xent over each example's candidate list (DialogueCSE paper Eq. 8)."""
from typing import Optional, Union

import tensorflow as tf

VARIANTS = ("paper", "released")


def candidate_nt_xent(logits: tf.Tensor, positive_index: Union[int, tf.Tensor] = 0,
                      candidate_mask: Optional[tf.Tensor] = None,
                      variant: str = "paper") -> tf.Tensor:
    """Per-example loss [B] from similarity logits [B, A] that already include the temperature.

    "paper" (Eq. 8): -log softmax(logits)[positive]; the caller's mean over examples is Eq. 8's
    1/N Σ_i. "released" (dialogue-cse `calculate_loss`, -reduce_mean(log_softmax * labels) over
    B×A): the same cross-entropy divided by the number of candidates.

    `positive_index`: an int or [B] ints. `candidate_mask` [B, A] (optional) drops padded
    candidates from the softmax and, for "released", from the count; the positive is always
    kept. Computed in float32 whatever the input dtype.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown NT-Xent variant {variant!r}; expected one of {VARIANTS}")
    logits = tf.cast(logits, tf.float32)
    num_candidates = tf.shape(logits)[-1]
    positive_index = tf.broadcast_to(positive_index, tf.shape(logits)[:1])
    labels = tf.one_hot(positive_index, num_candidates, dtype=tf.float32)
    valid = tf.ones_like(logits) if candidate_mask is None else tf.cast(candidate_mask, tf.float32)
    valid = tf.maximum(valid, labels)
    log_probs = tf.nn.log_softmax(tf.where(valid > 0, logits, logits.dtype.min))
    loss = -tf.gather(log_probs, positive_index, axis=-1, batch_dims=1)
    if variant == "released":
        loss /= tf.reduce_sum(valid, axis=-1)
    return loss
