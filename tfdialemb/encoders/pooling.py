"""Sentence embeddings from token states: masked mean (the papers' choice) and [CLS]."""
import tensorflow as tf

POOLING_METHODS = ("mean", "cls")


def masked_mean(sequence: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """Mean of `sequence` [B, T, H] over the positions where `mask` [B, T] is non-zero.

    A row with no valid position returns zeros rather than NaN.
    """
    weights = tf.cast(mask, sequence.dtype)[..., tf.newaxis]
    total = tf.reduce_sum(sequence * weights, axis=-2)
    count = tf.reduce_sum(weights, axis=-2)
    return total / tf.maximum(count, tf.ones_like(count))


def first_token(sequence: tf.Tensor) -> tf.Tensor:
    """The last-layer state of the first ([CLS]) token, without BERT's pooler transform; [0, H]
    for an empty batch, whose padded sequences have no position at all."""
    return tf.reduce_sum(tf.convert_to_tensor(sequence)[..., :1, :], axis=-2)


def pool(sequence: tf.Tensor, mask: tf.Tensor, method: str) -> tf.Tensor:
    if method == "mean":
        return masked_mean(sequence, mask)
    if method == "cls":
        return first_token(sequence)
    raise ValueError(f"unknown pooling {method!r}; expected one of {POOLING_METHODS}")
