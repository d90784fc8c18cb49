"""A global batch's rows across replicas, for losses with in-batch negatives: each replica scores
its own anchors against the whole global batch, so N replicas at global batch B see the negatives
one device sees at batch B."""
import tensorflow as tf


def gather_across_replicas(tensor: tf.Tensor) -> tf.Tensor:
    """Every replica's `tensor` concatenated along axis 0, in replica order (one device: itself).

    The gather is differentiable: every replica's loss sends gradient back to the replica that
    produced each slice, the local slice included, so summed gradients equal one device's.
    """
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return tensor
    return context.all_gather(tensor, axis=0)


def replica_offset(local_size: tf.Tensor) -> tf.Tensor:
    """Index of this replica's first example in `gather_across_replicas`' output."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return tf.zeros([], tf.int32)
    sizes = context.all_gather(tf.reshape(tf.cast(local_size, tf.int32), [1]), axis=0)
    earlier = tf.range(tf.shape(sizes)[0]) < tf.cast(context.replica_id_in_sync_group, tf.int32)
    return tf.reduce_sum(tf.where(earlier, sizes, 0))
