"""Curved contrastive learning (triple-encoders paper 003): the CCL bi-encoder (Sec. 2) and the
C3L triple-encoder (Sec. 3), one architecture.

One shared encoder embeds every text as the masked mean of its last layer, unnormalised, with
nothing frozen (REFERENCE_CODE_NOTES 4.1, 5.1); each text column is encoded as its own padded
batch, as sentence-transformers does. `variant` names the batches the model trains on:

  - "ccl" (`ccl` builder: before, after, target): cos(E([S] [B] u_i), E([A] u_k)) is regressed
    onto 1 - (k-i)/l for positives and 0 for the directional and random hard negatives (Sec. 2).
  - "c3l" (`c3l` builder: b1, b2, after, target): the anchor is the mean
    (E([B1] [S] [B] u_i) + E([B2] [S] [B] u_j)) / 2, regressed onto Eq. 1 for positives and 0
    for the hard negatives of Eq. 2 (REFERENCE_CODE_NOTES 5.2).

Both use `cosine_mse`. Auxiliary NLI objective (Sec. 3): when a batch also carries the keys of
`tfdialemb.data.nli` (merged in by the training command's `auxiliary` hook), each example's
loss adds the `nli_contrastive` loss of one NLI pair. The per-replica NLI batch has the main
batch's size, so the loop's mean over the global batch is the curved MSE plus the NLI loss. The
released code instead alternates the two objectives round-robin, one step each, with a separate
AdamW optimizer and schedule per objective over the same parameters (REFERENCE_CODE_NOTES 5.3);
summing them in one step is this library's choice (one optimizer state, exact resume).
"""
from typing import Dict

import tensorflow as tf

from tfdialemb.data import nli
from tfdialemb.encoders import Encoder
from tfdialemb.losses.cosine_mse import cosine_mse
from tfdialemb.losses.nli_contrastive import nli_contrastive
from tfdialemb.methods.base import Method

VARIANTS = ("ccl", "c3l")
BEFORE_FEATURES = {"ccl": ("before",), "c3l": ("b1", "b2")}
"""The before-space texts whose mean embedding is the anchor (one for CCL, two for C3L)."""
AFTER_FEATURE = "after"


class CurvedContrastiveModel(Method):
    """`per_example_loss` on `ccl` or `c3l` batches (see `variant`), plus NLI pairs if present."""

    def __init__(self, encoder: Encoder, variant: str = "ccl", **kwargs):
        super().__init__(encoder, **kwargs)
        if variant not in VARIANTS:
            raise ValueError(f"unknown curved contrastive variant {variant!r}; expected one of {VARIANTS}")
        self.variant = variant

    def embed(self, batch: Dict[str, tf.Tensor], feature: str, training: bool) -> tf.Tensor:
        """Mean-pooled last layer [B, H] (float32) of the texts `batch[feature]` [B, T]."""
        return self.encoder.embed({"input_word_ids": batch[feature],
                                   "input_mask": batch[f"{feature}_mask"]}, training=training)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        before = BEFORE_FEATURES[self.variant]
        _require(batch, before + (AFTER_FEATURE,), ("target",), f"{self.variant} batches",
                 f"build the examples with the `{self.variant}` builder")
        anchor = tf.add_n([self.embed(batch, f, training) for f in before]) / len(before)
        mse = cosine_mse(anchor, self.embed(batch, AFTER_FEATURE, training), batch["target"])
        metrics = {"mse": mse, "abs_error": tf.sqrt(mse)}
        if nli.FIRST not in batch:
            return mse, metrics
        _require(batch, (nli.FIRST, nli.SECOND), (nli.LABEL,), "NLI batches",
                 "make them with tfdialemb.data.nli.nli_dataset")
        nli_loss = nli_contrastive(self.embed(batch, nli.FIRST, training),
                                   self.embed(batch, nli.SECOND, training), batch[nli.LABEL])
        tf.debugging.assert_equal(
            tf.shape(nli_loss), tf.shape(mse),
            message="the per-replica NLI batch must have the size of the main batch")
        metrics["nli_loss"] = nli_loss
        return mse + nli_loss, metrics


def _require(batch: Dict[str, tf.Tensor], sequences, others, what: str, hint: str) -> None:
    """Fails early, naming the keys, when `batch` lacks a sequence (with its mask) or a value."""
    needed = [k for f in sequences for k in (f, f"{f}_mask")] + list(others)
    missing = [k for k in needed if k not in batch]
    if missing:
        raise ValueError(f"{what} need the keys {missing}, missing from the batch; {hint}")
