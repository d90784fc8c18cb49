"""The listwise utterance-sorting method's trainable model; the method's description is in
`tfdialemb.methods.utterance_sorting`."""
from typing import Dict, Optional

import tensorflow as tf
import tf_keras
from official.nlp.modeling.layers import TransformerEncoderBlock

from tfdialemb.data.examples.utterances import FEATURE
from tfdialemb.data.utterance_shuffle import POSITIONS
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.gelu import gelu
from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.layers.projector import Projector
from tfdialemb.losses.rank_kl import TARGETS, rank_kl
from tfdialemb.losses.ranking_metrics import sorting_quality
from tfdialemb.methods.models.base import Method

LAYER_NORM_EPSILON = 1e-5
"""torch.nn.LayerNorm's default, the released blocks' norms."""


class UtteranceSortingModel(Method):
    """`per_example_loss` on shuffled `utterances` batches: each utterance's rank score."""

    def __init__(self, encoder: Encoder, hidden: Optional[int] = None, layers: int = 4, heads: int = 4,
                 dropout: float = 0.02, targets: str = "paper", **kwargs):
        super().__init__(encoder, **kwargs)
        width = encoder.encoder_config.hidden_size
        hidden = hidden or width // 2
        if layers < 1 or heads < 1 or hidden % heads:
            raise ValueError(f"the sorting transformer needs layers >= 1 and a width ({hidden}) divisible by "
                             f"its heads ({heads})")
        if targets not in TARGETS:
            raise ValueError(f"unknown sorting targets {targets!r}; expected one of {TARGETS}")
        self.targets = targets
        self.projector = Projector(hidden, dropout, name="utterance_projector")
        self.projector.build([None, width])
        self.blocks = [TransformerEncoderBlock(
            num_attention_heads=heads, inner_dim=4 * hidden, inner_activation=gelu, norm_first=True,
            norm_epsilon=LAYER_NORM_EPSILON, output_dropout=dropout, attention_dropout=dropout,
            name=f"sorting_block_{i}") for i in range(layers)]
        self.ranker_hidden = tf_keras.layers.Dense(hidden, activation=gelu, dtype="float32", name="ranker_hidden")
        self.ranker_dropout = tf_keras.layers.Dropout(dropout, dtype="float32")
        self.ranker = tf_keras.layers.Dense(1, use_bias=False, dtype="float32", name="ranker")
        states = tf.zeros([1, 2, hidden])
        self._rank_scores(states, tf.ones([1, 2, 2], tf.int32), training=False)

    def _rank_scores(self, states: tf.Tensor, attention_mask: tf.Tensor, training) -> tf.Tensor:
        for block in self.blocks:
            states = block([states, attention_mask], training=training)
        states = tf.cast(states, tf.float32)
        states = self.ranker_hidden(states) + states
        return tf.squeeze(self.ranker(self.ranker_dropout(states, training=training)), -1)

    def scores(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Rank scores [B, N] (higher: earlier in the dialogue) of utterances `ids` [B, N, T]."""
        present = tf.reduce_any(mask > 0, axis=-1)
        utterances = masked_mean(tf.cast(self.encoder.encode_rows(ids, mask, training), tf.float32), mask)
        # Every row, a padding one too (its score is ignored), attends to the real utterances only.
        shape = tf.shape(present)
        attention_mask = tf.broadcast_to(tf.cast(present, tf.int32)[:, tf.newaxis, :], [shape[0], shape[1], shape[1]])
        return self._rank_scores(self.projector(utterances, training=training), attention_mask, training)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        mask = batch[f"{FEATURE}_mask"]
        present = tf.reduce_any(mask > 0, axis=-1)
        scores = self.scores(batch[FEATURE], mask, training)
        losses = rank_kl(scores, batch[POSITIONS], present, self.targets)
        return losses, {"sorting_quality": sorting_quality(scores, batch[POSITIONS], present)}
