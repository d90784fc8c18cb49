"""Continued masked-LM pre-training's trainable model: BERT's MLM head over the encoder (the method is
described in its spec module, `tfdialemb.methods.mlm`)."""
from typing import Dict, Tuple

import tensorflow as tf

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.layers.masked_lm_head import masked_lm_head
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.methods.models.base import Method


class MaskedLanguageModel(Method):
    """BERT's masked-LM head (`tfdialemb.layers.masked_lm_head`) over the encoder, its output
    matrix tied to the encoder's word-embedding table."""

    def __init__(self, encoder: Encoder, **kwargs):
        super().__init__(encoder, **kwargs)
        self.masked_lm = masked_lm_head(encoder)
        ids = tf.zeros([1, 2], tf.int32)
        self({"input_word_ids": ids, "input_mask": tf.ones_like(ids), "masked_lm_positions": ids})

    @property
    def trainable_weights(self):
        """The model's trainable weights without the tied word-embedding table while the encoder's
        embeddings are frozen: the head holds the table too, and would train it otherwise."""
        weights = super().trainable_weights
        if self.encoder.bert.get_embedding_layer().trainable:
            return weights
        table = self.encoder.bert.get_embedding_table()
        return [w for w in weights if w is not table]

    def call(self, inputs, training=None):
        """Logits [B, P, vocab] at `masked_lm_positions` [B, P]."""
        encoder_inputs = {key: inputs[key] for key in ("input_word_ids", "input_mask",
                                                       "input_type_ids") if key in inputs}
        sequence = self.encoder(encoder_inputs, training=training)["sequence_output"]
        return self.masked_lm(sequence, masked_positions=inputs["masked_lm_positions"])

    def per_example_loss(self, batch: Dict[str, tf.Tensor],
                         training: bool) -> Tuple[tf.Tensor, Dict[str, tf.Tensor]]:
        """`masked_lm_losses` of the batch."""
        losses, accuracy = masked_lm_losses(self(batch, training=training), batch)
        return losses, {"masked_lm_accuracy": accuracy}


def masked_lm_losses(logits: tf.Tensor, batch: Dict[str, tf.Tensor]) -> Tuple[tf.Tensor, tf.Tensor]:
    """Each sequence's mean cross-entropy over its predicted positions [B], and its accuracy [B],
    from logits [B, P, vocab] at the batch's `masked_lm_positions`.

    google-research/bert instead averages over every prediction of the batch (weighted sum /
    (sum of weights + 1e-5)), so a sequence weighs by its number of predictions. The training
    loop here averages per-example losses over the global batch, which keeps replicas exact
    without an all-reduce of prediction counts; with masking's 1-10 predictions per sequence,
    tokens of short sequences weigh somewhat more. A sequence with nothing to predict (no
    maskable token) gets loss 0.
    """
    logits = tf.cast(logits, tf.float32)
    labels = batch["masked_lm_ids"]
    weights = tf.cast(batch["masked_lm_weights"], tf.float32)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    count = tf.maximum(tf.reduce_sum(weights, axis=1), 1.0)
    correct = tf.reshape(top_k_hits(tf.reshape(logits, [-1, tf.shape(logits)[-1]]), tf.reshape(labels, [-1]), 1),
                         tf.shape(labels))
    return tf.reduce_sum(cross_entropy * weights, axis=1) / count, tf.reduce_sum(correct * weights, axis=1) / count
