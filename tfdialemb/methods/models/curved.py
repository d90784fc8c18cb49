"""CCL and C3L's trainable model (curved contrastive learning); the method's description is in
`tfdialemb.methods.curved`."""
from typing import Dict

import tensorflow as tf

from tfdialemb.data import nli
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.losses.cosine_mse import cosine_mse
from tfdialemb.losses.nli_contrastive import nli_contrastive
from tfdialemb.methods.curved import NLI_SCHEDULES
from tfdialemb.methods.models.base import MAIN_OBJECTIVE, Method

VARIANTS = ("ccl", "c3l")
BEFORE_FEATURES = {"ccl": ("before",), "c3l": ("b1", "b2")}
"""The before-space texts whose mean embedding is the anchor (one for CCL, two for C3L)."""
AFTER_FEATURE = "after"
NLI_OBJECTIVE = "nli"


class CurvedContrastiveModel(Method):
    """`per_example_loss` on `ccl` or `c3l` batches (see `variant`), plus NLI pairs if present."""

    def __init__(self, encoder: Encoder, variant: str = "ccl", nli_schedule: str = "sum", **kwargs):
        super().__init__(encoder, **kwargs)
        if variant not in VARIANTS:
            raise ValueError(f"unknown curved contrastive variant {variant!r}; expected one of {VARIANTS}")
        if nli_schedule not in NLI_SCHEDULES:
            raise ValueError(f"unknown NLI schedule {nli_schedule!r}; expected one of {NLI_SCHEDULES}")
        self.variant = variant
        if nli_schedule == "alternate":
            self.objectives = (MAIN_OBJECTIVE, NLI_OBJECTIVE)

    def embed(self, batch: Dict[str, tf.Tensor], feature: str, training: bool) -> tf.Tensor:
        """Mean-pooled last layer [B, H] (float32) of the texts `batch[feature]` [B, T]."""
        return self.encoder.embed({"input_word_ids": batch[feature],
                                   "input_mask": batch[f"{feature}_mask"]}, training=training)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        """The curved MSE, plus the NLI loss when the batch carries NLI pairs (the `sum` schedule)."""
        mse, metrics = self._curved_loss(batch, training)
        if nli.FIRST not in batch:
            return mse, metrics
        nli_loss, nli_metrics = self._nli_loss(batch, training)
        tf.debugging.assert_equal(
            tf.shape(nli_loss), tf.shape(mse),
            message="the per-replica NLI batch must have the size of the main batch")
        return mse + nli_loss, {**metrics, **nli_metrics}

    def objective_loss(self, objective: str, batch: Dict[str, tf.Tensor], training: bool):
        """Under `alternate`, the curved MSE alone, then the NLI loss alone; under `sum`, the one
        objective is `per_example_loss`."""
        if objective == NLI_OBJECTIVE:
            return self._nli_loss(batch, training)
        if objective != MAIN_OBJECTIVE:
            raise ValueError(f"{type(self).__name__} has no objective {objective!r}")
        if NLI_OBJECTIVE not in self.objectives:
            return self.per_example_loss(batch, training)
        return self._curved_loss(batch, training)

    def _nli_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        _require(batch, (nli.FIRST, nli.SECOND), (nli.LABEL,), "NLI batches",
                 "make them with tfdialemb.data.nli.nli_dataset")
        nli_loss = nli_contrastive(self.embed(batch, nli.FIRST, training),
                                   self.embed(batch, nli.SECOND, training), batch[nli.LABEL])
        return nli_loss, {"nli_loss": nli_loss}

    def _curved_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        before = BEFORE_FEATURES[self.variant]
        _require(batch, before + (AFTER_FEATURE,), ("target",), f"{self.variant} batches",
                 f"build the examples with the `{self.variant}` builder")
        anchor = tf.add_n([self.embed(batch, f, training) for f in before]) / len(before)
        mse = cosine_mse(anchor, self.embed(batch, AFTER_FEATURE, training), batch["target"])
        return mse, {"mse": mse, "abs_error": tf.sqrt(mse)}


def _require(batch: Dict[str, tf.Tensor], sequences, others, what: str, hint: str) -> None:
    """Fails early, naming the keys, when `batch` lacks a sequence (with its mask) or a value."""
    needed = [k for f in sequences for k in (f, f"{f}_mask")] + list(others)
    missing = [k for k in needed if k not in batch]
    if missing:
        raise ValueError(f"{what} need the keys {missing}, missing from the batch; {hint}")
