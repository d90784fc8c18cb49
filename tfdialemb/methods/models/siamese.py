"""The siamese baselines' trainable model: SiameseBERT_S and SiameseBERT_M's matching layers over
the encoder (the method is described in its spec module, `tfdialemb.methods.siamese`)."""
import math
from typing import Dict

import tensorflow as tf
import tf_keras

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.methods.models.base import Method, leading_candidates
from tfdialemb.methods.siamese import CONTEXT_FEATURE, VARIANTS


def feed_forward(width: int, name: str) -> tf_keras.Sequential:
    """The matching MLP: tanh hidden layer, linear output, both `width` wide, float32."""
    return tf_keras.Sequential([
        tf_keras.layers.Dense(width, activation="tanh", dtype="float32", name="hidden"),
        tf_keras.layers.Dense(width, dtype="float32", name="output"),
    ], name=name)


class SiameseModel(Method):
    """`per_example_loss` on `siamese` batches: softmax over 1 true response + `negatives`."""

    def __init__(self, encoder: Encoder, variant: str = "single", negatives: int = 9,
                 temperature: float = 0.1, **kwargs):
        super().__init__(encoder, **kwargs)
        if variant not in VARIANTS:
            raise ValueError(f"unknown siamese variant {variant!r}; expected one of {VARIANTS}")
        if negatives < 1 or temperature <= 0:
            raise ValueError(f"negatives and temperature must be positive, got {negatives} and "
                             f"{temperature}")
        self.variant = variant
        self.negatives = negatives
        width = encoder.encoder_config.hidden_size
        self.response_mlp = feed_forward(width, "response_mlp")
        self.response_mlp.build([None, width])
        if variant == "multi":
            self.context_mlp = feed_forward(width, "context_mlp")
            self.context_mlp.build([None, width])
            self.log_scale = self.add_weight(
                name="log_scale", shape=[], dtype="float32",
                initializer=tf_keras.initializers.Constant(math.log(1.0 / temperature)))

    def logits(self, context: tf.Tensor, candidates: tf.Tensor) -> tf.Tensor:
        """Matching scores [B, A] of pooled context [B, H] against pooled candidates [B, A, H]."""
        responses = self.response_mlp(candidates)
        if self.variant == "single":
            return tf.einsum("bh,bah->ba", context, responses)
        cosine = tf.einsum("bh,bah->ba", tf.math.l2_normalize(self.context_mlp(context), -1),
                           tf.math.l2_normalize(responses, -1))
        return tf.exp(self.log_scale) * cosine

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        candidates, candidates_mask = leading_candidates(batch, self.negatives)
        feature = CONTEXT_FEATURE[self.variant]
        context = self.encoder.embed({"input_word_ids": batch[feature],
                                      "input_mask": batch[f"{feature}_mask"]}, training=training)
        candidate_states = self.encoder.encode_rows(candidates, candidates_mask, training)
        logits = self.logits(context, masked_mean(tf.cast(candidate_states, tf.float32),
                                                  candidates_mask))
        losses = candidate_nt_xent(logits, positive_index=0)
        accuracy = top_k_hits(logits, tf.zeros(tf.shape(logits)[:1], tf.int32), 1)
        return losses, {"accuracy": accuracy}
