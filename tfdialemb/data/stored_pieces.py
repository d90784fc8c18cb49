"""The word pieces of built sequences, back from the `[CLS] pieces [SEP]` rows a build stores.

Methods that pack several texts into one input at batch time (a cross-encoder's context and
response, after augmentation or masking) read the pieces of each stored text with these.
"""
import tensorflow as tf


def stored_pieces(ids: tf.Tensor, mask: tf.Tensor) -> tf.RaggedTensor:
    """The word pieces a build stored as `[CLS] pieces [SEP]` rows of `ids` [B, T]: [B, (pieces)]."""
    lengths = tf.reduce_sum(tf.cast(mask, tf.int64), axis=-1)
    rows = tf.RaggedTensor.from_tensor(tf.cast(ids, tf.int32), lengths=lengths)
    positions = tf.ragged.range(rows.row_starts() + 1, rows.row_starts() + tf.maximum(lengths - 1, 1))
    return positions.with_values(tf.gather(rows.values, positions.values))


def stored_turns(ids: tf.Tensor, mask: tf.Tensor) -> tf.RaggedTensor:
    """[B, (turns), (pieces)] from a stored sequence list `ids` [B, N, T] (empty rows are padding)."""
    shape = tf.shape(ids)
    flat_ids, flat_mask = tf.reshape(ids, [-1, shape[2]]), tf.reshape(mask, [-1, shape[2]])
    present = tf.reduce_any(flat_mask > 0, axis=-1)
    turns = stored_pieces(tf.boolean_mask(flat_ids, present), tf.boolean_mask(flat_mask, present))
    counts = tf.reduce_sum(tf.cast(tf.reshape(present, shape[:2]), tf.int64), axis=1)
    return tf.RaggedTensor.from_row_lengths(turns, counts)
