"""One dialogue, one sequence: `[CLS] t_0 SEP t_1 ... t_{n-1}` with turn and role ids."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tiny_corpus import TOKENIZER, corpus
from tfdialemb.dialogue import role_ids
from tfdialemb.text import dense_dialogues, pack_dialogues, separator_id
from tfdialemb.text.dialogue_packing import speaker_prefix_lengths, speaker_prefixed, speaker_prefixes, uncut_length

W = tiny_bert.WORDS.index


def _pack(dialogues, max_length=64, separator="[SEP]"):
    """dialogues: lists of (role, text) turns → packed ragged tensors as Python lists."""
    texts = [text for d in dialogues for _, text in d]
    counts = [len(d) for d in dialogues]
    pieces = tf.RaggedTensor.from_row_lengths(TOKENIZER.tokenize(texts), counts)
    roles = tf.RaggedTensor.from_row_lengths(tf.constant([r for d in dialogues for r, _ in d], tf.int32), counts)
    packed = pack_dialogues(pieces, roles, TOKENIZER.cls_id, separator_id(TOKENIZER, separator), max_length)
    return packed, [channel.to_list() for channel in packed]


DIALOGUE = [(0, "hello world"), (1, "how are you"), (0, "fine")]


def test_hand_worked_layout():
    _, (ids, turns, roles) = _pack([DIALOGUE, [(1, "thanks")]])
    words = ["[CLS]", "hello", "world", "[SEP]", "how", "are", "you", "[SEP]", "fine"]
    assert ids[0] == [W(w) for w in words]
    assert turns[0] == [0, 0, 0, 0, 1, 1, 1, 1, 2]
    assert roles[0] == [0, 0, 0, 0, 1, 1, 1, 1, 0]
    # One turn: no separator at all; [CLS] takes the role of turn 0.
    assert ids[1] == [W("[CLS]"), W("thanks")] and turns[1] == [0, 0] and roles[1] == [1, 1]


def test_eou_separator_and_right_truncation():
    _, (ids, turns, roles) = _pack([DIALOGUE], max_length=6, separator="[EOU]")
    # [EOU] is written as the second free [unusedN] slot ([EOT] takes the first).
    assert ids[0] == [W("[CLS]"), W("hello"), W("world"), W("[unused1]"), W("how"), W("are")]
    assert turns[0] == [0, 0, 0, 0, 1, 1] and roles[0] == [0, 0, 0, 0, 1, 1]


def test_matches_a_python_packer_on_a_corpus():
    dialogues = [[(r, t.text) for r, t in zip(role_ids(d), d.turns)] for d in corpus(n=15, seed=4)]
    _, (ids, turns, roles) = _pack(dialogues, max_length=12)
    for d, got_ids, got_turns, got_roles in zip(dialogues, ids, turns, roles):
        want_ids, want_turns, want_roles = [TOKENIZER.cls_id], [0], [d[0][0]]
        for index, (role, text) in enumerate(d):
            pieces = TOKENIZER.tokenize([text]).to_list()[0] + ([TOKENIZER.sep_id] if index < len(d) - 1 else [])
            want_ids += pieces
            want_turns += [index] * len(pieces)
            want_roles += [role] * len(pieces)
        assert (got_ids, got_turns, got_roles) == (want_ids[:12], want_turns[:12], want_roles[:12])


def test_a_turn_without_pieces_keeps_its_separator():
    _, (ids, turns, _) = _pack([[(0, "hello"), (1, "\x00"), (0, "fine")]])
    assert ids[0] == [W("[CLS]"), W("hello"), W("[SEP]"), W("[SEP]"), W("fine")]
    assert turns[0] == [0, 0, 0, 1, 2]


def test_dense_pads_any_leading_shape():
    packed, _ = _pack([DIALOGUE, [(1, "thanks")]])
    dense = dense_dialogues(packed, pad_id=TOKENIZER.pad_id)
    assert dense.ids.shape == (2, 9) and dense.ids.dtype == tf.int32
    np.testing.assert_array_equal(dense.mask.numpy()[1], [1, 1, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(dense.role_ids.numpy()[1], [1, 1, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(dense.turn_ids.numpy()[0], [0, 0, 0, 0, 1, 1, 1, 1, 2])
    stacked = type(packed)(*(tf.RaggedTensor.from_row_lengths(channel, [2]) for channel in packed))
    fixed = dense_dialogues(stacked, pad_id=TOKENIZER.pad_id, pad_to=12)
    assert fixed.ids.shape == (1, 2, 12)
    np.testing.assert_array_equal(fixed.ids.numpy()[0, :, :9], dense.ids.numpy())


def test_bad_input():
    with pytest.raises(ValueError, match="separator must be one of"):
        separator_id(TOKENIZER, "[EOT]")
    with pytest.raises(ValueError, match="max_length must be at least 2"):
        _pack([DIALOGUE], max_length=1)
    empty = tf.RaggedTensor.from_row_lengths(TOKENIZER.tokenize(["hello"]), [1, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least one turn"):
        pack_dialogues(empty, tf.ragged.constant([[0], []], tf.int32), 2, 3, 8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="one role per turn"):
        pack_dialogues(TOKENIZER.tokenize(["hello", "world"])[tf.newaxis], tf.ragged.constant([[0]], tf.int32),
                       2, 3, 8)


def test_speaker_prefixes_and_final_separator_as_the_released_encoder_input():
    """baseline_dialogue_encoder.py: "0 hello world[SEP]1 how are you[SEP]0 fine" in [CLS] ... [SEP];
    "0" is not in the tiny vocabulary ([UNK]), "1" is."""
    texts = [t for _, t in DIALOGUE]
    pieces = tf.RaggedTensor.from_row_lengths(TOKENIZER.tokenize(texts), [3])
    roles = tf.RaggedTensor.from_row_lengths(tf.constant([0, 1, 0], tf.int32), [3])
    prefixed = speaker_prefixed(pieces, roles, speaker_prefixes(TOKENIZER, 2))
    ids = pack_dialogues(prefixed, roles, TOKENIZER.cls_id, TOKENIZER.sep_id, 64, final_separator=True).ids
    words = ["[CLS]", "[UNK]", "hello", "world", "[SEP]", "1", "how", "are", "you", "[SEP]", "[UNK]", "fine", "[SEP]"]
    assert ids.to_list() == [[W(w) for w in words]]
    # Cut as Hugging Face truncates: [CLS], the first max_length - 2 tokens, [SEP].
    cut = pack_dialogues(prefixed, roles, TOKENIZER.cls_id, TOKENIZER.sep_id, 7, final_separator=True).ids
    assert cut.to_list() == [[W(w) for w in words[:6]] + [W("[SEP]")]]
    exact = pack_dialogues(prefixed, roles, TOKENIZER.cls_id, TOKENIZER.sep_id, 13, final_separator=True).ids
    assert exact.to_list() == [[W(w) for w in words]]


@pytest.mark.parametrize("prefixed,final", [(False, False), (True, True), (True, False), (False, True)])
def test_uncut_length_is_the_packers_length_before_the_cut(prefixed, final):
    """The length filters count without packing: on 40 random dialogues of up to 3 roles, the count
    equals the row length `pack_dialogues` writes when nothing is cut."""
    rng = np.random.default_rng(3)
    words = ["hello", "world", "how", "are", "you", "fine", "1", "thanks"]
    dialogues = [[(int(rng.integers(3)), " ".join(rng.choice(words, int(rng.integers(1, 6)))))
                  for _ in range(int(rng.integers(1, 6)))] for _ in range(40)]
    counts = [len(d) for d in dialogues]
    pieces = tf.RaggedTensor.from_row_lengths(TOKENIZER.tokenize([t for d in dialogues for _, t in d]), counts)
    roles = tf.RaggedTensor.from_row_lengths(tf.constant([r for d in dialogues for r, _ in d], tf.int32), counts)
    prefix_lengths = speaker_prefix_lengths(TOKENIZER, 3) if prefixed else None
    if prefixed:
        pieces = speaker_prefixed(pieces, roles, speaker_prefixes(TOKENIZER, 3))
        assert prefix_lengths == [len(p) for p in TOKENIZER.tokenize(["0", "1", "2"]).to_list()]
    packed = pack_dialogues(pieces, roles, TOKENIZER.cls_id, TOKENIZER.sep_id, 1000, final_separator=final).ids
    turn_lengths = [[len(p) for p in TOKENIZER.tokenize([t for _, t in d]).to_list()] for d in dialogues]
    assert [uncut_length(lengths, [r for r, _ in d], prefix_lengths, final)
            for lengths, d in zip(turn_lengths, dialogues)] == packed.row_lengths().numpy().tolist()
