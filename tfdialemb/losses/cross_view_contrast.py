"""FGC's category-view contrast (CVC, FGC Eq. 4-5): supervised contrast between the classes of
the global batch, positive pairs and their augmentations against negative pairs and theirs."""
import tensorflow as tf

from tfdialemb.losses.cross_replica import gather_across_replicas, replica_offset
from tfdialemb.losses.choices import SIMILARITIES


def cross_view_contrast(vectors: tf.Tensor, classes: tf.Tensor, temperature: float,
                        similarity: str = "cosine") -> tf.Tensor:
    """Per-vector loss [local n] from `vectors` [local n, d] of classes [local n] (ints).

    ℓ_i = -1/(N−1) Σ_{j≠i, ȳ_j=ȳ_i} log exp(s(z_i, z_j)/τ) / Σ_{r≠i} exp(s(z_i, z_r)/τ) over the
    global batch (Eq. 5), with N − 1 read as the number of other vectors of i's class (SupCon's
    |P(i)|; N − 1 itself in the paper's balanced batch) and s the cosine, as SupCon, which Eq. 5
    copies, normalises its projections (`similarity="dot"`: the dot product as Eq. 5 is written,
    which collapses FGC's representation; docs/methods/fgc.md). Eq. 5 sums ℓ_i over the batch:
    the caller scales.
    A vector alone in its class has no positive and gets 0. Under a strategy the vectors and
    classes of every replica are gathered; gradients flow to the replica that made each slice.
    """
    if similarity not in SIMILARITIES:
        raise ValueError(f"unknown similarity {similarity!r}; expected one of {SIMILARITIES}")
    vectors = tf.cast(vectors, tf.float32)
    if similarity == "cosine":
        vectors = tf.math.l2_normalize(vectors, axis=-1)
    classes = tf.cast(classes, tf.int32)
    everyone = gather_across_replicas(vectors)
    every_class = gather_across_replicas(classes)
    local = tf.shape(vectors)[0]
    own = replica_offset(local) + tf.range(local)
    logits = tf.matmul(vectors, everyone, transpose_b=True) / temperature  # [local, global]
    is_self = tf.equal(own[:, tf.newaxis], tf.range(tf.shape(everyone)[0])[tf.newaxis, :])
    log_probability = tf.nn.log_softmax(tf.where(is_self, -1e9, logits), axis=-1)
    same = tf.equal(classes[:, tf.newaxis], every_class[tf.newaxis, :]) & ~is_self
    count = tf.reduce_sum(tf.cast(same, tf.float32), axis=-1)
    total = tf.reduce_sum(tf.where(same, log_probability, 0.0), axis=-1)
    return -tf.math.divide_no_nan(total, count)
