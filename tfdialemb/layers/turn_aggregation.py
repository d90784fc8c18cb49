"""DialogueCSE turn aggregation (DialogueCSE paper Sec. 4.3, Eq. 5-7) and the released code's variant.

Shapes: B dialogues, A candidates, R context turns, L context tokens, H hidden size.
"""
from typing import Optional

import tensorflow as tf
import tf_keras

from tfdialemb.encoders.pooling import masked_mean

MODES = ("i1", "i2", "released")
RELEASED_MAX_SEQ_LEN = 100
"""The length every turn is padded to in the released code (dialogue-cse config_bert.py max_seq_len)."""
# Score given to masked turns by the released code (model/pooling.py `attentive_pooling`).
_MASKED_SCORE = -2.0**32 + 1


def turn_softmax(scores: tf.Tensor, turn_mask: tf.Tensor,
                 num_preceding_turns: Optional[int] = None) -> tf.Tensor:
    """Softmax of `scores` [..., R] over turns, masked turns scored -2^32+1 (in float32).

    Masked turns get exactly 0 when their group has a valid turn; a group with none gets uniform
    weights, as in the released code. With `num_preceding_turns` = P, turns [0, P) and [P, R)
    are normalised separately (the released code's preceding and following rounds).
    """
    valid = tf.cast(turn_mask, tf.bool)
    scores = tf.where(valid, tf.cast(scores, tf.float32), _MASKED_SCORE)
    if num_preceding_turns is None:
        return tf.nn.softmax(scores)
    groups = (scores[..., :num_preceding_turns], scores[..., num_preceding_turns:])
    return tf.concat([tf.nn.softmax(group) for group in groups], axis=-1)


def _released_init() -> tf_keras.initializers.Initializer:
    """N(0, 0.1), the released round attention's w, b, u (a fresh instance per variable)."""
    return tf_keras.initializers.RandomNormal(stddev=0.1)


class TurnAggregation(tf_keras.layers.Layer):
    """Fuses the per-turn refined embeddings R̂_i [B, A, R, H] into one context-aware one [B, A, H].

    The inputs are already pooled over each turn's context tokens (see MatchingGuidedEmbedding), so
    each turn is one vector here. `turn_mask` [B, R] says which turns exist.

    - "i1" (Eq. 5-6): R̃ = Σ_i α_i R̂_i, α = softmax_i(FFN(R̂_i)) over the valid turns only, FFN =
      Dense(hidden_size, relu) → Dense(1) on each turn vector (per candidate). Padded turns get
      α = 0 exactly; a row with no valid turn gives R̃ = 0.
    - "i2" (Eq. 7): R̃ = (1/(t-1)) Σ_i R̂_i, the mean over the row's valid turns (t-1 = its own
      number of context turns, not R); a row with no valid turn gives R̃ = 0.
    - "released" (DAMO-ConvAI dialogue-cse model/dse_cl_bert.py): R̃ = Σ_i (1 + α_i) R̂_i over ALL
      R turns, α = masked softmax_i(uᵀ tanh(W c_i + b)), c_i = the context token states of turn
      i, pads zeroed, summed and divided by RELEASED_MAX_SEQ_LEN: the released code pads every
      turn to max_seq_len = 100 (config_bert.py) and takes reduce_mean over all those positions,
      so c_i does not change with a batch's own padding; W [H, hidden_size],
      b, u ~ N(0, 0.1). Padded turns keep weight 1 + α_i (α_i = 0, or 1/group size when their
      group has no valid turn), exactly as released: they add nothing only if their R̂_i is 0,
      i.e. when they carry no valid token. Needs `context_tokens` and `context_token_mask`.

    `num_preceding_turns`: the turn axis holds the preceding turns first, then the following. Only
    the released attention uses it (one softmax per direction); Eq. 6 normalises over all turns.
    """

    def __init__(self, mode: str = "i2", hidden_size: int = 256,
                 num_preceding_turns: Optional[int] = None, **kwargs):
        super().__init__(**kwargs)
        if mode not in MODES:
            raise ValueError(f"unknown turn aggregation {mode!r}; expected one of {MODES}")
        self._mode = mode
        self._hidden_size = hidden_size
        self._num_preceding_turns = num_preceding_turns
        if mode == "i1":
            self._score_hidden = tf_keras.layers.Dense(
                hidden_size, activation="relu", dtype=self.dtype_policy, name="ffn_hidden")
            self._score_output = tf_keras.layers.Dense(
                1, dtype=self.dtype_policy, name="ffn_output")
        elif mode == "released":
            self._score_hidden = tf_keras.layers.Dense(
                hidden_size, activation="tanh", kernel_initializer=_released_init(),
                bias_initializer=_released_init(), dtype=self.dtype_policy,
                name="round_attention_w")
            self._score_output = tf_keras.layers.Dense(
                1, use_bias=False, kernel_initializer=_released_init(), dtype=self.dtype_policy,
                name="round_attention_u")

    def _score(self, inputs: tf.Tensor) -> tf.Tensor:
        return self._score_output(self._score_hidden(inputs))[..., 0]

    def call(self, turn_embeddings: tf.Tensor, turn_mask: tf.Tensor,
             context_tokens: Optional[tf.Tensor] = None,
             context_token_mask: Optional[tf.Tensor] = None) -> tf.Tensor:
        turn_embeddings = tf.cast(turn_embeddings, self.compute_dtype)
        turn_mask = tf.cast(turn_mask, self.compute_dtype)
        if self._mode == "i2":
            return masked_mean(turn_embeddings, turn_mask[:, tf.newaxis, :])
        if self._mode == "i1":
            per_candidate_mask = turn_mask[:, tf.newaxis, :]
            alpha = turn_softmax(self._score(turn_embeddings), per_candidate_mask)
            weights = tf.cast(alpha, self.compute_dtype) * per_candidate_mask
            return tf.einsum("barh,bar->bah", turn_embeddings, weights)
        if context_tokens is None or context_token_mask is None:
            raise ValueError("the released aggregation needs context_tokens and context_token_mask")
        token_weights = tf.cast(context_token_mask, self.compute_dtype)[..., tf.newaxis]
        context_means = tf.reduce_sum(
            tf.cast(context_tokens, self.compute_dtype) * token_weights, axis=-2) / RELEASED_MAX_SEQ_LEN
        alpha = turn_softmax(self._score(context_means), turn_mask, self._num_preceding_turns)
        weights = 1.0 + tf.cast(alpha, self.compute_dtype)
        return tf.einsum("barh,br->bah", turn_embeddings, weights)

    def get_config(self):
        config = super().get_config()
        config.update({
            "mode": self._mode,
            "hidden_size": self._hidden_size,
            "num_preceding_turns": self._num_preceding_turns,
        })
        return config
