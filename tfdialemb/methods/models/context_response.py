"""The context-response similarity model's trainable model; the method's description is in
`tfdialemb.methods.context_response`."""
from typing import Dict

import tensorflow as tf

from tfdialemb.data.context_response_pairs import CONTEXT, RESPONSE
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.layers.projector import Projector
from tfdialemb.losses.cross_replica import gather_across_replicas, replica_offset
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.losses.two_sided_info_nce import two_sided_info_nce
from tfdialemb.methods.context_response import REPORTED_K
from tfdialemb.methods.models.base import Method


class ContextResponseModel(Method):
    """`per_example_loss` on pairs drawn by `tfdialemb.data.context_response_pairs`."""

    def __init__(self, encoder: Encoder, context: int = 3, projection_size: int = 256,
                 projector_dropout: float = 0.1, temperature: float = 0.05, **kwargs):
        super().__init__(encoder, **kwargs)
        if context < 1 or temperature <= 0:
            raise ValueError(f"context and temperature must be positive, got {context} and {temperature}")
        self.context = context
        # Training keeps the k below its global batch (`ContextResponseSpec.after_build`): a batch of
        # k pairs or fewer has every candidate in the top k, and the traced step leaves its size open.
        self.reported_k = REPORTED_K
        self.projection_size = projection_size
        self.temperature = temperature
        width = encoder.encoder_config.hidden_size
        self.context_projector = Projector(projection_size, projector_dropout, name="context_projector")
        self.context_projector.build([None, context * width])
        self.response_projector = Projector(projection_size, projector_dropout, name="response_projector")
        self.response_projector.build([None, width])

    def embed_contexts(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Unit context vectors [B, projection] of `context` utterance slots `ids` [B, context, T]
        (empty slots all-zero)."""
        if ids.shape[1] is not None and ids.shape[1] != self.context:
            raise ValueError(f"contexts have {ids.shape[1]} utterance slots; this model takes {self.context}")
        utterances = masked_mean(tf.cast(self.encoder.encode_rows(ids, mask, training), tf.float32),
                                 mask)
        return self.project_contexts(utterances, training=training)

    def project_contexts(self, utterances: tf.Tensor, training=None) -> tf.Tensor:
        """Unit context vectors [B, projection] of the utterance vectors [B, context, hidden] of
        `embed_utterances` in the context's slots (empty slots zero)."""
        width = self.encoder.encoder_config.hidden_size
        return self.context_projector(tf.reshape(utterances, [-1, self.context * width]), training=training)

    def embed_utterances(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Mean-pooled vectors [B, hidden] of utterances `ids` [B, T]: what fills a context slot and
        what the response projector reads."""
        return self.encoder.embed({"input_word_ids": ids, "input_mask": mask}, training=training)

    def embed_responses(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Unit response vectors [B, projection] of `ids` [B, T]."""
        return self.response_projector(self.embed_utterances(ids, mask, training), training=training)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        contexts = self.embed_contexts(batch[CONTEXT], batch[f"{CONTEXT}_mask"], training)
        responses = self.embed_responses(batch[RESPONSE], batch[f"{RESPONSE}_mask"], training)
        losses = two_sided_info_nce(contexts, responses, self.temperature)
        local = tf.shape(contexts)[0]
        scores = tf.matmul(contexts, gather_across_replicas(responses), transpose_b=True)
        labels = replica_offset(local) + tf.range(local)
        candidates = scores.shape[1]  # the global batch, when the trace knows it
        return losses, {f"accuracy@{k}": top_k_hits(scores, labels, k) for k in self.reported_k
                        if candidates is None or k < candidates}
