"""The augmentation thesis' contrastive loss over pairs of dialogue views (augcl), per example.

Two variants:
  - "released" (voorhs/dialogue-augmentation mylib/learners/dialogue_encoder.py
    `_contrastive_step` with mylib/learners/loss.py `contrastive_symmetric`): x and y
    L2-normalised, x_i and y_i swapped in the rows where `swap` holds (the code's
    `torch.randn(B) > 0`, "to prevent from learning grammatics"), S = x yᵀ / τ (τ = 0.1), and
    CE(S, I) + CE(Sᵀ, I), each a mean over the batch. The loss of row i is therefore
    CE_i(S) + CE_i(Sᵀ): its batch mean is the released sum of the two means, twice
    `in_batch_info_nce(symmetric=True)`, which halves that sum.
  - "thesis" (thesis Sec. 3.2): L = -log exp(sim(x, y)) / Σ_z exp(sim(x, z)) with sim the cosine,
    z the batch's y: one direction, no temperature, x the anchor (no swap).
Negatives are the global batch's rows (`gather`), or each replica's own rows (`gather=False`), or
those of the anchor's group of `group_size` consecutive rows, the released run's per-process
batches on any number of replicas.
"""
from typing import Optional

import tensorflow as tf

from tfdialemb.losses.choices import RELEASED_TEMPERATURE, VARIANTS
from tfdialemb.losses.in_batch_info_nce import in_batch_info_nce


def augcl_loss(x: tf.Tensor, y: tf.Tensor, swap: tf.Tensor, variant: str = "released",
               temperature: float = RELEASED_TEMPERATURE, gather: bool = True,
               group_size: Optional[int] = None) -> tf.Tensor:
    """Per-example loss [local B] of view embeddings x, y [local B, d] (normalised here) and
    `swap` [local B] bool (used by "released" only); `temperature` is the released τ."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown augcl loss {variant!r}; expected one of {VARIANTS}")
    if variant == "thesis":
        return in_batch_info_nce(x, y, 1.0, gather=gather, group_size=group_size)
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    swap = tf.cast(swap, tf.bool)[:, tf.newaxis]
    anchors, positives = tf.where(swap, y, x), tf.where(swap, x, y)
    return 2.0 * in_batch_info_nce(anchors, positives, temperature, symmetric=True, gather=gather,
                                   group_size=group_size)
