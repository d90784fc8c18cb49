"""InfoNCE with in-batch negatives, gathered across replicas.

The objective of contrastive learning with dialogue augmentations (the augmentation thesis: a
dialogue and its augmented view; the released code's symmetric form): anchor i's positive is
positives[i], every other row of the *global* batch is a negative. FGC's cross-view contrast is
supervised by class instead (`cross_view_contrast`).
"""
import tensorflow as tf

from tfdialemb.distribute import gather_across_replicas, replica_offset


def in_batch_info_nce(anchors: tf.Tensor, positives: tf.Tensor, temperature: float,
                      symmetric: bool = False, gather: bool = True) -> tf.Tensor:
    """Per-example loss [local B] from anchors and positives [local B, d] (L2-normalised here).

    loss_i = -log exp(cos(a_i, p_i)/τ) / Σ_j exp(cos(a_i, p_j)/τ) over the global batch j;
    `symmetric` adds the same with the roles of anchors and positives swapped (halved sum).
    Under a strategy, the label of local anchor i is this replica's offset + i, so the gathered
    layout [replica 0's rows, replica 1's rows, ...] and the labels always agree. Without
    `gather`, j runs over the replica's own rows only (PyTorch DDP code without an all-gather).
    """
    anchors = tf.math.l2_normalize(tf.cast(anchors, tf.float32), axis=-1)
    positives = tf.math.l2_normalize(tf.cast(positives, tf.float32), axis=-1)
    local = tf.shape(anchors)[0]
    labels = (replica_offset(local) if gather else 0) + tf.range(local)
    negatives = gather_across_replicas if gather else tf.identity
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels, tf.matmul(anchors, negatives(positives), transpose_b=True) / temperature)
    if symmetric:
        reverse = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels, tf.matmul(positives, negatives(anchors), transpose_b=True) / temperature)
        loss = (loss + reverse) / 2.0
    return loss
