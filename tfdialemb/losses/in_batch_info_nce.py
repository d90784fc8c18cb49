"""InfoNCE with in-batch negatives, gathered across replicas.

The objective of contrastive learning with dialogue augmentations (the augmentation thesis: a
dialogue and its augmented view; the released code's symmetric form): anchor i's positive is
positives[i], every other row of the *global* batch is a negative. FGC's cross-view contrast is
supervised by class instead (`cross_view_contrast`).
"""
from typing import Optional

import tensorflow as tf

from tfdialemb.losses.cross_replica import gather_across_replicas, replica_offset


def in_batch_info_nce(anchors: tf.Tensor, positives: tf.Tensor, temperature: float,
                      symmetric: bool = False, gather: bool = True, group_size: Optional[int] = None) -> tf.Tensor:
    """Per-example loss [local B] from anchors and positives [local B, d] (L2-normalised here).

    loss_i = -log exp(cos(a_i, p_i)/τ) / Σ_j exp(cos(a_i, p_j)/τ) over the global batch j;
    `symmetric` adds the same with the roles of anchors and positives swapped (halved sum).
    Under a strategy, the label of local anchor i is this replica's offset + i, so the gathered
    layout [replica 0's rows, replica 1's rows, ...] and the labels always agree. Without
    `gather`, j runs over the replica's own rows only (PyTorch DDP code without an all-gather).
    With `group_size`, j runs over the anchor's own group of that many consecutive rows of the
    (gathered) batch: the per-process batches of a DDP run, on any number of replicas.
    """
    anchors = tf.math.l2_normalize(tf.cast(anchors, tf.float32), axis=-1)
    positives = tf.math.l2_normalize(tf.cast(positives, tf.float32), axis=-1)
    local = tf.shape(anchors)[0]
    labels = (replica_offset(local) if gather else 0) + tf.range(local)
    negatives = gather_across_replicas if gather else tf.identity
    all_positives = negatives(positives)
    outside = None
    if group_size is not None:
        # Pairs outside an anchor's group are pushed out of its softmax.
        others = tf.range(tf.shape(all_positives)[0])
        outside = tf.where(labels[:, tf.newaxis] // group_size == others[tf.newaxis] // group_size, 0.0, -1e9)

    def cross_entropy(rows, columns):
        logits = tf.matmul(rows, columns, transpose_b=True) / temperature
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits if outside is None else logits + outside)

    loss = cross_entropy(anchors, all_positives)
    if symmetric:
        loss = (loss + cross_entropy(positives, negatives(anchors))) / 2.0
    return loss
