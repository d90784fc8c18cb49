"""A context and a response as one cross-encoder input (FGC, Sec. 3.1; the input of BERT-DPT/UMS).

One in-graph function serves the training pipeline and the exported scorer, so a pair is packed
and truncated the same way everywhere. Layouts (`inference_settings.PAIR_LAYOUTS`):

    paper: [CLS] u_1 [EOT] u_2 [EOT] ... u_n [EOT] [SEP] r [SEP]          (FGC's text)
    ums:   [CLS] u_1 [EOT] u_2 [EOT] ... u_n [EOT] [SEP] r [EOT] [SEP]    (taesunwhang/UMS-ResSel
           data/dataset.py:_annotate_sentence, whose BERT baselines FGC starts from)

Segment ids are 0 for `[CLS] context [SEP]` and 1 for the rest. Over `max_length`, FGC "drops
the beginning of the context" and keeps the response: the response is cut at its end only when it
alone overflows, then the context keeps its last tokens, so whole old turns go first and then the
oldest tokens of the oldest kept turn (an [EOT] left without its turn goes too). Each turn and the
response are first bounded to `max_length - 2` word pieces (`bound_pieces`), as the build stores
them, so both paths start from the same pieces.
"""
import dataclasses
from typing import NamedTuple

import tensorflow as tf

from tfdialemb.inference_settings import PAIR_LAYOUTS


class PackedPairs(NamedTuple):
    """Ragged [B, (tokens)] int32 token ids and segment ids of B packed pairs."""

    ids: tf.RaggedTensor
    segment_ids: tf.RaggedTensor

    def dense(self, pad_id: int = 0):
        """The encoder's inputs padded to the longest pair: `input_word_ids`, `input_mask`,
        `input_type_ids`, each [B, T] int32."""
        return {"input_word_ids": self.ids.to_tensor(default_value=pad_id),
                "input_mask": tf.ones_like(self.ids).to_tensor(default_value=0),
                "input_type_ids": self.segment_ids.to_tensor(default_value=0)}


def bound_pieces(pieces: tf.RaggedTensor, max_length: int) -> tf.RaggedTensor:
    """The first `max_length - 2` pieces of each row: what a build stores between [CLS] and [SEP]."""
    return pieces[..., : max_length - 2]


def specials_count(layout: str) -> int:
    """The special tokens a pair takes besides the context's [EOT]s."""
    if layout not in PAIR_LAYOUTS:
        raise ValueError(f"unknown pair layout {layout!r}; expected one of {PAIR_LAYOUTS}")
    return 4 if layout == "ums" else 3


def pack_context_response(context_pieces: tf.RaggedTensor, response_pieces: tf.RaggedTensor, *,
                          cls_id: int, sep_id: int, eot_id: int, max_length: int,
                          layout: str = "paper") -> PackedPairs:
    """Packs `context_pieces` [B, (turns), (pieces)] with `response_pieces` [B, (pieces)] into at
    most `max_length` tokens each (see the module docstring). A context may have no turns."""
    room = max_length - specials_count(layout)
    if room < 1:
        raise ValueError(f"max_length {max_length} leaves no room for a response in the {layout} layout")
    context_pieces = tf.cast(context_pieces, tf.int32)
    response = tf.cast(response_pieces, tf.int32)[:, :room]
    pairs = response.nrows()
    turns = context_pieces.values
    turn_ends = tf.RaggedTensor.from_row_lengths(tf.fill([turns.nrows()], tf.constant(eot_id, tf.int32)),
                                                 tf.ones([turns.nrows()], tf.int64))
    context = context_pieces.with_values(tf.concat([turns, turn_ends], axis=1)).merge_dims(1, 2)
    budget = tf.maximum(tf.cast(room, tf.int64) - response.row_lengths(), 0)
    kept = _tail(context, budget)
    # A cut that lands on an [EOT] has dropped every piece of that turn: drop its [EOT] too.
    orphan = (kept.row_lengths() < context.row_lengths()) & tf.reduce_any(tf.equal(kept[:, :1], eot_id), axis=1)
    kept = _tail(kept, kept.row_lengths() - tf.cast(orphan, tf.int64))

    def column(token: int) -> tf.RaggedTensor:
        return tf.RaggedTensor.from_row_lengths(tf.fill([pairs], tf.constant(token, tf.int32)),
                                                tf.ones([pairs], tf.int64))

    first = [column(cls_id), kept, column(sep_id)]
    second = [response, column(eot_id)] if layout == "ums" else [response]
    second.append(column(sep_id))
    first, second = tf.concat(first, axis=1), tf.concat(second, axis=1)
    return PackedPairs(
        ids=tf.concat([first, second], axis=1),
        segment_ids=tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1),
    )


def _tail(rows: tf.RaggedTensor, counts: tf.Tensor) -> tf.RaggedTensor:
    """The last `counts` [B] tokens of each row of `rows` [B, (tokens)] (all of a shorter row)."""
    lengths = rows.row_lengths()
    start = rows.row_starts() + lengths - tf.minimum(counts, lengths)
    positions = tf.ragged.range(start, rows.row_starts() + lengths)
    return positions.with_values(tf.gather(rows.values, positions.values))


@dataclasses.dataclass(frozen=True)
class PairLayout:
    """How pairs are packed: the special ids, the length and the layout (`PAIR_LAYOUTS`)."""
    cls_id: int
    sep_id: int
    eot_id: int
    max_length: int
    layout: str

    @classmethod
    def of(cls, tokenizer, max_length: int, layout: str) -> "PairLayout":
        return cls(tokenizer.cls_id, tokenizer.sep_id, tokenizer.token_id("[EOT]"), max_length, layout)

    def pack(self, context: tf.RaggedTensor, responses: tf.RaggedTensor) -> PackedPairs:
        return pack_context_response(context, responses, cls_id=self.cls_id, sep_id=self.sep_id,
                                     eot_id=self.eot_id, max_length=self.max_length, layout=self.layout)
