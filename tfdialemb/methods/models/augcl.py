"""augcl's trainable model: the encoder, pooled and contrasted over pairs of dialogue views (the
method is described in its spec module, `tfdialemb.methods.augcl`)."""
from typing import Dict, Optional

import tensorflow as tf
import tf_keras

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.pooling import POOLING_METHODS, pool
from tfdialemb.losses.augmentation_contrast import augcl_loss
from tfdialemb.losses.choices import RELEASED_TEMPERATURE
from tfdialemb.methods.augcl import EMB_DROPOUT
from tfdialemb.methods.models.base import Method


class AugclModel(Method):
    """`per_example_loss` on `contrastive_pairs` batches: `dialogues` [B, 2, T] (x, y) with mask
    and `swap` [B]."""

    def __init__(self, encoder: Encoder, pooling: str = "cls", loss_variant: str = "released",
                 temperature: float = RELEASED_TEMPERATURE, emb_dropout: float = EMB_DROPOUT,
                 gather_negatives: bool = True, process_batch: Optional[int] = None, **kwargs):
        """`process_batch`: negatives only within each group of that many consecutive rows of the
        global batch (the released run's per-process batches, `--augcl_batch=released`)."""
        super().__init__(encoder, **kwargs)
        if pooling not in POOLING_METHODS:
            raise ValueError(f"augcl pooling must be one of {POOLING_METHODS}, got {pooling!r}")
        if not 0 <= emb_dropout < 1:
            raise ValueError(f"emb_dropout must be in [0, 1), got {emb_dropout}")
        self.pooling = pooling
        self.loss_variant = loss_variant
        self.temperature = temperature
        self.gather_negatives = gather_negatives
        self.process_batch = process_batch
        self.embedding_dropout = tf_keras.layers.Dropout(emb_dropout, dtype="float32")

    def embed(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """float32 [N, H] pooled embeddings of packed dialogues [N, T]."""
        states = self.encoder({"input_word_ids": ids, "input_mask": mask}, training=training)["sequence_output"]
        return pool(tf.cast(states, tf.float32), mask, self.pooling)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        ids, mask = batch["dialogues"], batch["dialogues_mask"]
        length = tf.shape(ids)[-1]
        pooled = self.embed(tf.reshape(ids, [-1, length]), tf.reshape(mask, [-1, length]), training)
        # The released code drops out embedding units before normalising (F.dropout, training only).
        pooled = tf.reshape(self.embedding_dropout(pooled, training=training), [tf.shape(ids)[0], 2, -1])
        losses = augcl_loss(pooled[:, 0], pooled[:, 1], batch["swap"] > 0, self.loss_variant,
                            self.temperature, self.gather_negatives or self.process_batch is not None,
                            self.process_batch)
        return losses, {}
