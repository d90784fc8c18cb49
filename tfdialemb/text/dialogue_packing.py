"""A whole dialogue as one token sequence with per-token turn and role ids (dial2vec, dial2vec Sec. 3.1).

One in-graph function serves the TFRecord build and the dialogue embedder, so training and
inference see the same sequences. The layout is the released code's BERT branch
(AlibabaResearch/DAMO-ConvAI dial2vec/data/data_provider.py):

    [CLS] t_0 SEP t_1 SEP ... SEP t_{n-1}

a separator after every turn but the last; [CLS] carries turn 0 and the role of turn 0, each
turn's tokens and the separator after it carry that turn's index and role. The separator is
[SEP] (the released code's `tokenizer.sep_token`) or the project's [EOU]. Sequences are cut on
the right to `max_length` tokens, keeping the first ones, as the released code does for BERT
backbones; its PLATO branch keeps the last 15 turns instead, not reproduced here since the PLATO
weights are not public.

The augmentation thesis' released encoder input (voorhs/dialogue-augmentation
mylib/modeling/dialogue/baseline_dialogue_encoder.py `_tokenize`) is the same layout with two
settings on: `speaker_prefixed` turns ("{speaker index} {utterance}") and a `final_separator`,
since it joins the turns with [SEP] into one text that the tokenizer wraps in [CLS] ... [SEP]:

    [CLS] 0 t_0 [SEP] 1 t_1 [SEP] ... r t_{n-1} [SEP]
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple

import tensorflow as tf

from tfdialemb.text.tokenizer import BertTokenizer

SEPARATORS = ("[SEP]", "[EOU]")


class PackedDialogues(NamedTuple):
    """Ragged [D, (tokens)] int32 token ids, turn ids and role ids of D packed dialogues."""

    ids: tf.RaggedTensor
    turn_ids: tf.RaggedTensor
    role_ids: tf.RaggedTensor


class DialogueInputs(NamedTuple):
    """Dense [..., T] int32 ids, mask, turn ids and role ids; padding has mask, turn and role 0."""

    ids: tf.Tensor
    mask: tf.Tensor
    turn_ids: tf.Tensor
    role_ids: tf.Tensor


def separator_id(tokenizer: BertTokenizer, separator: str = "[SEP]") -> int:
    """The id written between turns: one of SEPARATORS, [EOU] through its [unusedN] slot."""
    if separator not in SEPARATORS:
        raise ValueError(f"separator must be one of {SEPARATORS}, got {separator!r}")
    return tokenizer.token_id(separator)


def speaker_prefixes(tokenizer: BertTokenizer, num_roles: int) -> tf.RaggedTensor:
    """[num_roles, (pieces)] int32: the pieces of each role id written out, "0", "1", ..."""
    return tf.ragged.constant(tokenizer.tokenize(tf.constant([str(r) for r in range(num_roles)])).to_list(),
                              tf.int32, ragged_rank=1)


def speaker_prefix_lengths(tokenizer: BertTokenizer, num_roles: int) -> List[int]:
    """The pieces of each role's `speaker_prefixes`, "0", "1", ..."""
    return speaker_prefixes(tokenizer, num_roles).row_lengths().numpy().tolist()


def uncut_length(turn_lengths: Sequence[int], roles: Sequence[int] = (),
                 prefix_lengths: Optional[Sequence[int]] = None, final_separator: bool = False) -> int:
    """The tokens `pack_dialogues` writes for turns of `turn_lengths` pieces before it cuts to
    max_length: [CLS], each turn (after its role's prefix of `prefix_lengths` pieces, as
    `speaker_prefixed` writes it), a separator between turns and, with `final_separator`, after
    the last one; without Python-side packing, so a length filter can count many dialogues fast."""
    prefixes = sum(prefix_lengths[role] for role in roles) if prefix_lengths is not None else 0
    return 1 + prefixes + sum(turn_lengths) + len(turn_lengths) - 1 + int(final_separator)


def speaker_prefixed(turn_pieces: tf.RaggedTensor, turn_roles: tf.RaggedTensor,
                     prefixes: tf.RaggedTensor) -> tf.RaggedTensor:
    """Each turn's pieces [D, (turns), (pieces)] preceded by its role's `speaker_prefixes`
    (roles below their number): the released "{speaker} {utterance}" of the augmentation thesis
    (baseline_dialogue_encoder.py `_parse`), tokenized as BERT splits that text at the space."""
    own = tf.gather(prefixes, tf.cast(turn_roles.values, tf.int32))
    return turn_pieces.with_values(tf.concat([own, tf.cast(turn_pieces.values, tf.int32)], axis=1))


def pack_dialogues(turn_pieces: tf.RaggedTensor, turn_roles: tf.RaggedTensor, cls_id: int,
                   separator: int, max_length: int, final_separator: bool = False) -> PackedDialogues:
    """`[CLS] t_0 SEP ... t_{n-1}` of each dialogue, cut to its first `max_length` tokens.

    `turn_pieces` [D, (turns), (pieces)]: wordpiece ids of each turn (BertTokenizer.tokenize);
    `turn_roles` [D, (turns)]: the role id of each turn. Every dialogue needs at least one turn.
    `final_separator` ends every dialogue with the separator, the last turn's, as a tokenizer
    closes `[CLS] text [SEP]`: a cut dialogue keeps its first `max_length - 2` tokens after
    [CLS] and then the separator, as Hugging Face's truncation does.
    """
    if max_length < 2:
        raise ValueError(f"max_length must be at least 2 ([CLS] and one token), got {max_length}")
    turn_pieces = tf.cast(turn_pieces, tf.int32)
    turn_roles = tf.cast(turn_roles, tf.int32)
    turn_counts = turn_pieces.row_lengths()
    checks = [
        tf.debugging.assert_positive(turn_counts, message="every dialogue needs at least one turn"),
        tf.debugging.assert_equal(turn_roles.row_lengths(), turn_counts,
                                  message="turn_roles must give one role per turn"),
    ]
    with tf.control_dependencies(checks):
        turn_index = tf.ragged.range(tf.cast(turn_counts, tf.int32))
    is_last = turn_index.values == tf.repeat(tf.cast(turn_counts, tf.int32) - 1, turn_counts)
    separator_counts = tf.cast(~is_last | final_separator, tf.int64)
    separators = tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.reduce_sum(separator_counts)], tf.constant(separator, tf.int32)), separator_counts)
    turn_tokens = tf.concat([turn_pieces.values, separators], axis=1)
    token_counts = turn_tokens.row_lengths()
    ids = turn_pieces.with_values(turn_tokens).merge_dims(1, 2)
    dialogue_lengths = ids.row_lengths()
    turn_ids = tf.RaggedTensor.from_row_lengths(tf.repeat(turn_index.values, token_counts), dialogue_lengths)
    role_ids = tf.RaggedTensor.from_row_lengths(tf.repeat(turn_roles.values, token_counts), dialogue_lengths)
    dialogues = tf.shape(turn_counts, out_type=tf.int64)[0]
    first_role = tf.gather(turn_roles.values, turn_roles.row_starts())

    def lead(first: tf.Tensor, rest: tf.RaggedTensor) -> tf.RaggedTensor:
        column = tf.RaggedTensor.from_row_lengths(first, tf.ones([dialogues], tf.int64))
        return tf.concat([column, rest], axis=1)[:, :max_length]

    packed_ids = lead(tf.fill([dialogues], tf.constant(cls_id, tf.int32)), ids)
    if final_separator:
        cut = tf.where(dialogue_lengths + 1 > max_length)
        last = tf.gather(packed_ids.row_limits(), cut[:, 0]) - 1
        packed_ids = packed_ids.with_values(tf.tensor_scatter_nd_update(
            packed_ids.values, last[:, tf.newaxis], tf.fill(tf.shape(last), tf.constant(separator, tf.int32))))
    return PackedDialogues(
        ids=packed_ids,
        turn_ids=lead(tf.zeros([dialogues], tf.int32), turn_ids),
        role_ids=lead(first_role, role_ids),
    )


def dense_dialogues(packed: PackedDialogues, pad_id: int, pad_to: Optional[int] = None) -> DialogueInputs:
    """Pads ragged packed dialogues (any leading shape, tokens last) to the longest, or to
    `pad_to` tokens; padding gets `pad_id`, mask 0, turn 0 and role 0 as in the released code."""
    shape = None
    if pad_to is not None:
        shape = [None] * (packed.ids.shape.rank - 1) + [pad_to]

    def pad(value, default):
        return tf.cast(value.to_tensor(default_value=default, shape=shape), tf.int32)

    return DialogueInputs(
        ids=pad(packed.ids, pad_id),
        mask=pad(tf.ones_like(packed.ids, tf.int32), 0),
        turn_ids=pad(packed.turn_ids, 0),
        role_ids=pad(packed.role_ids, 0),
    )


def roles_in_order_of_appearance(speakers: tf.RaggedTensor) -> tf.RaggedTensor:
    """In-graph `tfdialemb.dialogue.role_ids`: per dialogue, each turn's speaker id renumbered
    0, 1, ... in order of first appearance, as training numbers a dialogue's speakers
    ([[5, 7, 5], [1, 1]] -> [[0, 1, 0], [0, 0]]). `speakers` [D, (turns)] holds any non-negative
    ids; a negative one is refused with an error naming the input."""
    values = tf.cast(speakers.values, tf.int64)
    check = tf.debugging.assert_non_negative(values, message="speakers: every speaker id must be non-negative")
    with tf.control_dependencies([check]):
        rows = speakers.value_rowids()
        # Distinct per dialogue: ids are below 2^31, so row and id share one int64 key.
        keys = rows * 2 ** 31 + values
    # tf.unique numbers keys in order of first appearance, and a dialogue's turns are contiguous.
    _, index = tf.unique(keys, out_idx=tf.int64)
    first = tf.math.unsorted_segment_min(index, rows, speakers.nrows())
    return speakers.with_values(tf.cast(index - tf.gather(first, rows), speakers.dtype))


def merge_consecutive_turns(turns: tf.RaggedTensor, speakers: tf.RaggedTensor,
                            separator: str = " ") -> Tuple[tf.RaggedTensor, tf.RaggedTensor]:
    """In-graph `tfdialemb.dialogue.merge_consecutive_turns`: each run of consecutive turns of
    one speaker becomes one turn, its texts joined by `separator` in order.

    `turns` [D, (turns)] strings and `speakers` [D, (turns)] ids; returns both with one entry per
    run.
    """
    speakers = tf.cast(speakers, tf.int32)
    values = speakers.values
    positions = tf.range(tf.size(values, out_type=tf.int64))
    row_first = tf.scatter_nd(speakers.row_starts()[:, tf.newaxis],
                              tf.ones_like(speakers.row_starts(), tf.bool), tf.shape(positions, tf.int64))
    previous = tf.concat([values[:1], values[:-1]], axis=0)
    starts = row_first | tf.not_equal(values, previous)
    run_ids = tf.cumsum(tf.cast(starts, tf.int64)) - 1
    runs = tf.reduce_sum(tf.cast(starts, tf.int64))
    texts = tf.strings.unsorted_segment_join(turns.values, run_ids, runs, separator=separator)
    start_positions = tf.where(starts)[:, 0]
    rows = tf.gather(speakers.value_rowids(), start_positions)
    return (tf.RaggedTensor.from_value_rowids(texts, rows, nrows=speakers.nrows()),
            tf.RaggedTensor.from_value_rowids(tf.gather(values, start_positions), rows,
                                              nrows=speakers.nrows()))
