"""The cross-encoder pair layout and FGC's truncation, against sequences written out by hand."""
import pytest
import tensorflow as tf

from tfdialemb.text.pair_packing import bound_pieces, pack_context_response

CLS, SEP, EOT = 101, 102, 7


def pack(context, response, max_length, layout="paper"):
    packed = pack_context_response(
        tf.ragged.constant(context, dtype=tf.int32, ragged_rank=2),
        tf.ragged.constant(response, dtype=tf.int32), cls_id=CLS, sep_id=SEP, eot_id=EOT,
        max_length=max_length, layout=layout)
    return packed.ids.to_list(), packed.segment_ids.to_list()


def test_paper_and_ums_layouts_with_segments():
    ids, segments = pack([[[11, 12], [21]]], [[31, 32]], max_length=32)
    assert ids == [[CLS, 11, 12, EOT, 21, EOT, SEP, 31, 32, SEP]]
    assert segments == [[0, 0, 0, 0, 0, 0, 0, 1, 1, 1]]
    ids, segments = pack([[[11, 12], [21]]], [[31, 32]], max_length=32, layout="ums")
    assert ids == [[CLS, 11, 12, EOT, 21, EOT, SEP, 31, 32, EOT, SEP]]
    assert segments == [[0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]]


def test_old_turns_go_first_then_the_oldest_tokens_of_the_oldest_kept_turn():
    context = [[[11, 12, 13], [21, 22, 23], [31]]]  # with [EOT]s: 4 + 4 + 2 = 10 context tokens
    # max_length 12: room 9, response 2, context budget 7: the last 7 tokens are
    # EOT 21 22 23 EOT 31 EOT, and the leading [EOT] has lost its turn, so it goes.
    ids, _ = pack(context, [[41, 42]], max_length=12)
    assert ids == [[CLS, 21, 22, 23, EOT, 31, EOT, SEP, 41, 42, SEP]]
    # budget 6: the last 6 tokens are 21 22 23 EOT 31 EOT (turn 2 whole, turn 1 gone).
    ids, _ = pack(context, [[41, 42, 43]], max_length=12)
    assert ids == [[CLS, 21, 22, 23, EOT, 31, EOT, SEP, 41, 42, 43, SEP]]
    # budget 4: 23 EOT 31 EOT, the oldest tokens of turn 2 dropped.
    ids, _ = pack(context, [[41, 42, 43, 44, 45]], max_length=12)
    assert ids == [[CLS, 23, EOT, 31, EOT, SEP, 41, 42, 43, 44, 45, SEP]]


def test_the_response_is_never_cut_for_the_context_and_alone_is_cut_at_its_end():
    ids, segments = pack([[[11, 12]]], [[41, 42, 43, 44, 45, 46, 47, 48]], max_length=8)
    assert ids == [[CLS, SEP, 41, 42, 43, 44, 45, SEP]]
    assert segments == [[0, 0, 1, 1, 1, 1, 1, 1]]
    ids, _ = pack([[[11, 12]]], [[41, 42, 43, 44, 45, 46, 47, 48]], max_length=8, layout="ums")
    assert ids == [[CLS, SEP, 41, 42, 43, 44, EOT, SEP]]


def test_a_batch_mixes_lengths_and_empty_contexts():
    ids, _ = pack([[[11], [12]], [], [[13, 14, 15, 16]]], [[41], [42], [43]], max_length=6)
    assert ids == [[CLS, 12, EOT, SEP, 41, SEP],
                   [CLS, SEP, 42, SEP],
                   [CLS, 16, EOT, SEP, 43, SEP]]
    for row in ids:
        assert len(row) <= 6


def test_bound_pieces_keeps_what_a_build_stores_between_cls_and_sep():
    pieces = tf.ragged.constant([[1, 2, 3, 4, 5, 6], [7]])
    assert bound_pieces(pieces, max_length=5).to_list() == [[1, 2, 3], [7]]


def test_no_room_for_a_response_is_refused():
    with pytest.raises(ValueError, match="no room"):
        pack([[[11]]], [[41]], max_length=3)
