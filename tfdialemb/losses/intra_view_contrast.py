"""FGC's instance-view contrast (IVC, FGC Eq. 2-3): each pair's representation against its own
augmentation, among the four views of one context only (no in-batch negatives)."""
import tensorflow as tf

VIEWS = ("positive", "augmented_positive", "negative", "augmented_negative")
"""The order of the four cross-encoder passes of one context, (c, r+), (c, r̄+), (c, r−), (c, r̄−)."""


def intra_view_contrast(views: tf.Tensor, temperature: float) -> tf.Tensor:
    """Per-context loss [B] from projections `views` [B, 4, d] in the order of VIEWS.

    l(z, z̄) = -log exp(cos(z, z̄)/τ) / Σ_{z_k ≠ z} exp(cos(z, z_k)/τ), z_k over the other three
    views of the same context (Eq. 2); the context's term of Eq. 3 is l(z+, z̄+) + l(z−, z̄−).
    Eq. 3 sums these over the batch: the caller scales, the training loop averages per context.
    """
    views = tf.math.l2_normalize(tf.cast(views, tf.float32), axis=-1)
    logits = tf.einsum("bvd,bwd->bvw", views, views) / temperature
    # Anchors z+ (view 0) and z− (view 2), each without itself in its softmax.
    rows = tf.where(tf.constant([[True, False, False, False], [False, False, True, False]]),
                    -1e9, logits[:, 0::2])
    log_probability = tf.nn.log_softmax(rows, axis=-1)
    return -(log_probability[:, 0, 1] + log_probability[:, 1, 3])
