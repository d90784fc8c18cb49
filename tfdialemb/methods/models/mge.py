"""MGE's trainable model: DialogueCSE's matching-guided embedding over the encoder (the method is
described in its spec module, `tfdialemb.methods.mge`)."""
from typing import Dict, Tuple

import tensorflow as tf

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.layers.matching_guided_embedding import MatchingGuidedEmbedding
from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.methods.mge import CONTEXT_SPLITS, VARIANTS
from tfdialemb.methods.models.base import Method, leading_candidates


def select_context(before: tf.Tensor, before_mask: tf.Tensor, after: tf.Tensor,
                   after_mask: tf.Tensor, turns: int, split: str
                   ) -> Tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Context rows [B, 2·turns, T]: `turns` preceding slots, then `turns` following slots, each
    side filled chronologically from its first slot (the released code's layout: the most recent
    preceding utterance sits at the last used slot); mask [B, 2·turns, T] and turn mask
    [B, 2·turns]. Unused slots have all-zero masks."""
    before_count = tf.reduce_sum(tf.cast(tf.reduce_any(before_mask > 0, -1), tf.int32), -1)
    after_count = tf.reduce_sum(tf.cast(tf.reduce_any(after_mask > 0, -1), tf.int32), -1)
    if split not in CONTEXT_SPLITS:
        raise ValueError(f"unknown context split {split!r}; expected one of {CONTEXT_SPLITS}")
    if split == "per_side":
        take_before = tf.minimum(before_count, turns)
        take_after = tf.minimum(after_count, turns)
    else:
        take_before = tf.minimum(before_count, tf.maximum((turns + 1) // 2, turns - after_count))
        take_after = tf.minimum(after_count, turns - take_before)
    slots = tf.range(turns)[tf.newaxis, :]
    before_index = before_count[:, tf.newaxis] - take_before[:, tf.newaxis] + slots
    before_used = slots < take_before[:, tf.newaxis]
    after_used = slots < take_after[:, tf.newaxis]

    def pick(rows, mask, index, used):
        # One padding row and token keep the gather valid when a batch has no such turns at all.
        rows = tf.pad(rows, [[0, 0], [0, 1], [0, 1]])
        mask = tf.pad(mask, [[0, 0], [0, 1], [0, 1]])
        index = tf.clip_by_value(index, 0, tf.shape(rows)[1] - 1)
        keep = tf.cast(used, rows.dtype)[:, :, tf.newaxis]
        return (tf.gather(rows, index, batch_dims=1) * keep,
                tf.gather(mask, index, batch_dims=1) * tf.cast(keep, mask.dtype))

    before_rows, before_rows_mask = pick(before, before_mask, before_index, before_used)
    after_rows, after_rows_mask = pick(after, after_mask, tf.broadcast_to(slots, tf.shape(before_index)),
                                       after_used)
    length = tf.maximum(tf.shape(before_rows)[2], tf.shape(after_rows)[2])
    pad = lambda x: tf.pad(x, [[0, 0], [0, 0], [0, length - tf.shape(x)[2]]])  # noqa: E731
    rows = tf.concat([pad(before_rows), pad(after_rows)], axis=1)
    mask = tf.concat([pad(before_rows_mask), pad(after_rows_mask)], axis=1)
    turn_mask = tf.cast(tf.concat([before_used, after_used], axis=1), tf.int32)
    return rows, mask, turn_mask


def empty_turns_as_cls_sep(rows: tf.Tensor, mask: tf.Tensor, turn_mask: tf.Tensor,
                           response: tf.Tensor, response_mask: tf.Tensor) -> Tuple[tf.Tensor, tf.Tensor]:
    """Context rows [B, S, T] and mask where every unused slot (turn_mask 0) holds an empty
    utterance, [CLS] [SEP], taken from the response's own first and last tokens.

    The released scoring (dse_cl_bert.py) keeps padded rounds with weight (1 + 0) and divides
    their pooled R̂ by their token count, so its data provider must give them tokens (with none it
    divides 0 by 0); an empty utterance is the padding that makes it well defined.
    """
    last = tf.reduce_sum(tf.cast(response_mask > 0, tf.int32), axis=-1) - 1
    empty = tf.stack([response[:, 0], tf.gather(response, tf.maximum(last, 0), batch_dims=1)], axis=-1)
    length = tf.maximum(tf.shape(rows)[2], 2)
    pad = lambda x: tf.pad(x, [[0, 0], [0, 0], [0, length - tf.shape(x)[2]]])  # noqa: E731
    rows, mask = pad(rows), pad(mask)
    empty = tf.pad(empty, [[0, 0], [0, length - 2]])[:, tf.newaxis, :]
    empty_mask = tf.pad(tf.ones_like(empty[:, :, :2]), [[0, 0], [0, 0], [0, length - 2]])
    unused = tf.equal(turn_mask, 0)[:, :, tf.newaxis]
    return (tf.where(unused, tf.cast(empty, rows.dtype), rows),
            tf.where(unused, tf.cast(empty_mask, mask.dtype), mask))


class MatchingGuidedEmbeddingModel(Method):
    """`per_example_loss` on `mge` batches: NT-Xent over 1 positive + `negatives` candidates."""

    def __init__(self, encoder: Encoder, turns: int = 3, negatives: int = 9,
                 aggregation: str = "i2", temperature: float = 0.1, variant: str = "paper",
                 context_split: str = "per_side", **kwargs):
        super().__init__(encoder, **kwargs)
        if variant not in VARIANTS:
            raise ValueError(f"unknown mge variant {variant!r}; expected one of {VARIANTS}")
        if turns < 1 or negatives < 1:
            raise ValueError(f"turns and negatives must be positive, got {turns} and {negatives}")
        self.turns = turns
        self.negatives = negatives
        self.variant = variant
        self.context_split = context_split
        self.mge = MatchingGuidedEmbedding(
            aggregation=None if variant == "released" else aggregation, variant=variant,
            temperature=None if variant == "released" else temperature,
            num_preceding_turns=turns, name="matching_guided_embedding")

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        candidates, candidates_mask = leading_candidates(batch, self.negatives)
        context, context_mask, turn_mask = select_context(
            batch["context_before"], batch["context_before_mask"], batch["context_after"],
            batch["context_after_mask"], self.turns, self.context_split)
        if self.variant == "released":
            context, context_mask = empty_turns_as_cls_sep(context, context_mask, turn_mask, candidates[:, 0],
                                                           candidates_mask[:, 0])
        logits = self.mge(
            self.encoder.encode_rows(context, context_mask, training), context_mask, turn_mask,
            self.encoder.encode_rows(candidates, candidates_mask, training), candidates_mask)
        losses = candidate_nt_xent(logits, positive_index=0, variant=self.variant)
        accuracy = top_k_hits(logits, tf.zeros(tf.shape(logits)[:1], tf.int32), 1)
        return losses, {"accuracy": accuracy}
