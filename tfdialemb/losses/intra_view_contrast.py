"""FGC's instance-view contrast (IVC, FGC Eq. 2-3): each pair's representation against its own
augmentation, among the four views of one context only (no in-batch negatives)."""
import tensorflow as tf

from tfdialemb.losses.choices import ANCHORS

VIEWS = ("positive", "augmented_positive", "negative", "augmented_negative")
"""The order of the four cross-encoder passes of one context, (c, r+), (c, r̄+), (c, r−), (c, r̄−)."""


def intra_view_contrast(views: tf.Tensor, temperature: float, anchors: str = "original") -> tf.Tensor:
    """Per-context loss [B] from projections `views` [B, 4, d] in the order of VIEWS.

    l(z, z̄) = -log exp(cos(z, z̄)/τ) / Σ_{z_k ≠ z} exp(cos(z, z_k)/τ), z_k over the other three
    views of the same context (Eq. 3); the context's term is the sum of l over its ANCHORS[anchors]
    pairs: l(z+, z̄+) + l(z−, z̄−) as Eq. 3 writes it, plus l(z̄+, z+) + l(z̄−, z−) for "all".
    Eq. 3 sums these over the batch: the caller scales, the training loop averages per context.
    """
    if anchors not in ANCHORS:
        raise ValueError(f"unknown IVC anchors {anchors!r}; expected one of {tuple(ANCHORS)}")
    anchor_views, partner_views = zip(*ANCHORS[anchors])
    views = tf.math.l2_normalize(tf.cast(views, tf.float32), axis=-1)
    logits = tf.einsum("bvd,bwd->bvw", views, views) / temperature
    # Each anchor's row without the anchor itself in its softmax.
    rows = tf.where(tf.one_hot(anchor_views, len(VIEWS)) > 0, -1e9, tf.gather(logits, anchor_views, axis=1))
    log_probability = tf.nn.log_softmax(rows, axis=-1)  # [B, anchors, 4]
    return -tf.reduce_sum(log_probability * tf.one_hot(partner_views, len(VIEWS)), axis=[1, 2])
