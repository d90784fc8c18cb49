"""DialogueCSE matching-guided embedding (MGE, DialogueCSE paper Sec. 4.2-4.4): Eq. 3-4 and the similarity.

Shapes: B dialogues, R context turns, Lc / Lr context / candidate tokens, A candidates, H hidden.
"""
import math
from typing import Optional

import tensorflow as tf
import tf_keras

from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.layers.turn_aggregation import TurnAggregation
from tfdialemb.core.similarity import paired_cosine

VARIANTS = ("paper", "released")
PAPER_AGGREGATIONS = ("i1", "i2")
# The released code scales M by 0.1 (its 1/sqrt(d) is commented out) and divides cos by 0.1.
RELEASED_SCALE = 0.1
RELEASED_TEMPERATURE = 0.1


def matching_matrix(context_tokens: tf.Tensor, candidate_tokens: tf.Tensor,
                    scale: float) -> tf.Tensor:
    """Eq. 3, M = Ū R̄ᵀ · scale for every (candidate, turn) pair → [B, A, R, Lc, Lr].

    `context_tokens` Ū [B, R, Lc, H], `candidate_tokens` R̄ [B, A, Lr, H]; `scale` = 1/√H in the
    paper, 0.1 in the released code.
    """
    return tf.einsum("brch,balh->barcl", context_tokens, candidate_tokens) * scale


def refine(matching: tf.Tensor, candidate_tokens: tf.Tensor,
           candidate_token_mask: tf.Tensor) -> tf.Tensor:
    """Eq. 4, R̂ = M R̄ → [B, A, R, Lc, H]: one refined matrix per turn, rows = context tokens.

    Padded candidate tokens are zeroed in R̄ first, so they add nothing whatever M holds there.
    """
    weights = tf.cast(candidate_token_mask, candidate_tokens.dtype)[..., tf.newaxis]
    return tf.einsum("barcl,balh->barch", matching, candidate_tokens * weights)


class MatchingGuidedEmbedding(tf_keras.layers.Layer):
    """Similarity logits [B, A]: cos(context-free, context-aware embedding of each candidate) / τ.

    This is sim(R̄, R̃)/τ of Eq. 8 (feed it to `candidate_nt_xent`). Context-free embedding: mean of
    R̄ over the candidate's valid tokens. Context-aware embedding: R̂_i = M_i R̄ (Eq. 3-4) for each
    turn i, mean-pooled over the valid tokens of turn i, then fused over turns by TurnAggregation
    (Eq. 5-7). The paper pools after fusing (R̃ = Σ_i α_i R̂_i, then pooling), but row c of R̂_i is
    token c of turn i, so summing matrices mixes unrelated tokens of different-length turns and
    leaves the pooling count undefined; pooling each turn over its own tokens first is the same
    linear map when the turns have equal lengths, keeps I2's equal weight per turn, and is what
    the released code does. Every token mean divides by max(count, 1), so a turn without valid
    tokens pools to 0 (the released code divides 0 by 0 there and gives NaN), and cos is
    `paired_cosine` (float32), so a zero context-aware vector (no valid turn) gives cos 0.

    variant="paper": scale 1/√H, `aggregation` "i1" or "i2" (default "i2", the paper's best),
    `temperature` τ (default 0.1). variant="released": scale 0.1, Σ_i (1 + α_i) R̂_i with the
    round attention (see TurnAggregation), τ = 0.1; `aggregation` must be left unset. The scale
    reaches the logits only through I1's FFN: I2 and the released sum are linear in R̂ with
    weights that do not depend on it, and the cosine ignores a common factor (so does the
    released code's +1e-6 in the context-free mean's count).

    `num_preceding_turns`: the turn axis holds that many preceding turns, then the following
    ones; only the released attention uses it (one softmax per direction). `hidden_size`: width
    of the I1 FFN / the released attention. Computes in float32 unless told otherwise: M R̄ sums
    Lr products of BERT states and can exceed float16's range.
    """

    def __init__(self, aggregation: Optional[str] = None, variant: str = "paper",
                 temperature: Optional[float] = None, hidden_size: int = 256,
                 num_preceding_turns: Optional[int] = None, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        if variant not in VARIANTS:
            raise ValueError(f"unknown MGE variant {variant!r}; expected one of {VARIANTS}")
        if variant == "paper":
            mode = aggregation or "i2"
            if mode not in PAPER_AGGREGATIONS:
                raise ValueError(
                    f"unknown aggregation {aggregation!r}; expected one of {PAPER_AGGREGATIONS}")
        else:
            if aggregation is not None:
                raise ValueError("variant='released' has its own aggregation; leave it unset")
            if temperature not in (None, RELEASED_TEMPERATURE):
                raise ValueError(f"variant='released' fixes the temperature at "
                                 f"{RELEASED_TEMPERATURE}, got {temperature}")
            mode = "released"
        if temperature is not None and temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self._aggregation_name = aggregation
        self._variant = variant
        self._temperature = RELEASED_TEMPERATURE if temperature is None else temperature
        self._temperature_arg = temperature
        self._hidden_size = hidden_size
        self._num_preceding_turns = num_preceding_turns
        self._aggregation = TurnAggregation(
            mode=mode, hidden_size=hidden_size, num_preceding_turns=num_preceding_turns,
            dtype=self.dtype_policy, name="turn_aggregation")

    def _scale(self, hidden_size: int) -> float:
        return RELEASED_SCALE if self._variant == "released" else 1.0 / math.sqrt(hidden_size)

    def call(self, context_tokens: tf.Tensor, context_token_mask: tf.Tensor,
             turn_mask: tf.Tensor, candidate_tokens: tf.Tensor,
             candidate_token_mask: tf.Tensor) -> tf.Tensor:
        """context_tokens [B, R, Lc, H], context_token_mask [B, R, Lc], turn_mask [B, R],
        candidate_tokens [B, A, Lr, H], candidate_token_mask [B, A, Lr] → logits [B, A]."""
        context_tokens = tf.cast(context_tokens, self.compute_dtype)
        candidate_tokens = tf.cast(candidate_tokens, self.compute_dtype)
        matching = matching_matrix(
            context_tokens, candidate_tokens, self._scale(context_tokens.shape[-1]))
        refined = refine(matching, candidate_tokens, candidate_token_mask)
        turn_embeddings = masked_mean(refined, context_token_mask[:, tf.newaxis])
        context_aware = self._aggregation(
            turn_embeddings, turn_mask, context_tokens=context_tokens,
            context_token_mask=context_token_mask)
        context_free = masked_mean(candidate_tokens, candidate_token_mask)
        return paired_cosine(context_free, context_aware) / self._temperature

    def get_config(self):
        config = super().get_config()
        config.update({
            "aggregation": self._aggregation_name,
            "variant": self._variant,
            "temperature": self._temperature_arg,
            "hidden_size": self._hidden_size,
            "num_preceding_turns": self._num_preceding_turns,
        })
        return config
