"""augcl's pairs in the input pipeline: each generator of contrastive_dataset.py on hand-made
dialogues with hand-worked ranges and token ids, the released index ranges, and the uniform
choice of generator."""
import collections

import numpy as np
import tensorflow as tf

import tiny_bert
from tiny_corpus import TOKENIZER
from tfdialemb.data.contrastive_pairs import GENERATORS, Draws, contrastive_pairs, draw, pair_ranges
from tfdialemb.text.dialogue_packing import speaker_prefixes

W = tiny_bert.WORDS.index
EMPTY = [0, 0]


def _draws(generator, split=0.5, start=0.0, end=0.99, view=0.7, other_view=0.0):
    size = len(generator)
    fill = lambda value: tf.fill([size], tf.constant(value, tf.float32))  # noqa: E731
    return Draws(tf.constant(generator, tf.float32), fill(split), fill(start), fill(end), fill(view),
                 fill(other_view))


def _ranges(counts, draws, **kwargs):
    generator, anchors, positives = pair_ranges(tf.constant(counts), draws, **kwargs)
    return generator.numpy().tolist(), anchors.numpy().tolist(), positives.numpy().tolist()


def test_each_generator_on_a_six_turn_dialogue_with_two_views():
    """n = 6, views of 6 and 4 turns (flat turns [0, 6), [6, 12), [12, 16)). Draws: split 0.5 →
    randint(1, 4) = 3; start 0.0 → 1; end 0.99 → randint(2, 5) = 5; view 0.7 → the second view."""
    counts = [[6, 6, 4]] * 4
    generator, anchors, positives = _ranges(counts, _draws([0.1, 0.3, 0.6, 0.9]))
    assert generator == [0, 1, 2, 3]
    assert anchors == [[[0, 6], EMPTY], [[0, 3], EMPTY], [[0, 3], EMPTY], [[1, 5], EMPTY]]
    assert positives == [[[12, 16], EMPTY], [[3, 6], EMPTY], [[3, 4], EMPTY], [[0, 1], [5, 6]]]
    # span_matching again with start 0.5 → 3 and end 0.0 → randint(4, 5) = 4.
    _, anchors, positives = _ranges(counts[:1], _draws([0.9], start=0.5, end=0.0))
    assert anchors == [[[3, 4], EMPTY]] and positives == [[[0, 3], [4, 6]]]
    # aug_aug: the second view against the other one.
    _, anchors, positives = _ranges(counts[:1], _draws([0.1]), pair="aug_aug")
    assert anchors == [[[12, 16], EMPTY]] and positives == [[[6, 12], EMPTY]]


def test_short_dialogues_single_views_and_no_transforms():
    # n = 3: split randint(1, 1) = 1; span_matching falls back to halves.
    _, anchors, positives = _ranges([[3, 0]] * 3, _draws([0.0, 0.5, 0.9]))
    assert anchors == [[[0, 1], EMPTY]] * 3
    assert positives == [[[1, 3], EMPTY], [[1, 2], EMPTY], [EMPTY, [1, 3]]]
    # n = 2: split 1 whatever the draw.
    _, anchors, positives = _ranges([[2, 0]], _draws([0.0], split=0.99))
    assert anchors == [[[0, 1], EMPTY]] and positives == [[[1, 2], EMPTY]]
    # aug_aug with a single view: the dialogue and that view.
    _, anchors, positives = _ranges([[4, 3]], _draws([0.1]), pair="aug_aug")
    assert anchors == [[[0, 4], EMPTY]] and positives == [[[4, 7], EMPTY]]
    # Without the transforms every example is precomputed.
    generator, _, _ = _ranges([[4, 3]] * 3, _draws([0.1, 0.5, 0.9]), on_the_fly=False)
    assert generator == [0, 0, 0]
    # Without views the transforms share the draw: [0, 1/3) halves, then response, then span.
    generator, _, _ = _ranges([[4]] * 3, _draws([0.1, 0.5, 0.9]))
    assert generator == [1, 2, 3]


def test_draws_cover_the_released_ranges_and_pick_generators_uniformly():
    size = 8000
    counts = np.array([[6, 5, 4]] * (size // 2) + [[5, 0, 0]] * (size // 2), np.int32)
    draws = draw(size, tf.constant([7, 11], tf.int64))
    generator, anchors, positives = (v.numpy() for v in pair_ranges(tf.constant(counts), draws))
    with_views = collections.Counter(generator[: size // 2].tolist())
    assert sorted(with_views) == [0, 1, 2, 3]
    assert all(abs(c / (size // 2) - 0.25) < 0.03 for c in with_views.values()), with_views
    without = collections.Counter(generator[size // 2:].tolist())
    assert sorted(without) == [1, 2, 3] and all(abs(c / (size // 2) - 1 / 3) < 0.03 for c in without.values())
    halves = generator == 1
    assert set(anchors[halves & (counts[:, 0] == 6), 0, 1]) == {1, 2, 3, 4}  # randint(1, n - 2)
    spans = (generator == 3) & (counts[:, 0] == 6)
    pairs = set(map(tuple, anchors[spans, 0]))
    assert pairs == {(s, e) for s in range(1, 5) for e in range(s + 1, 6)}  # start ≤ n-2, end ≤ n-1
    precomputed = generator == 0
    assert set(map(tuple, positives[precomputed, 0])) == {(6, 11), (11, 15)}  # either view


def _batch():
    """Two examples as the pipeline gives them: d0 (3 turns, one view), d1 (2 turns, no view)."""
    texts = [["hello world", "good morning", "how are you", "hello the world", "good morning", "how are you"],
             ["book taxi", "please"]]
    pieces = [TOKENIZER.tokenize(t).to_list() for t in texts]
    width, turns = max(len(p) for row in pieces for p in row), 6
    ids = np.zeros([2, turns, width], np.int32)
    mask = np.zeros_like(ids)
    for b, row in enumerate(pieces):
        for n, piece in enumerate(row):
            ids[b, n, :len(piece)], mask[b, n, :len(piece)] = piece, 1
    return {"dialogues": tf.constant(ids), "dialogues_mask": tf.constant(mask),
            "dialogues_roles": tf.constant([[0, 1, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0]]),
            "dialogues_turn_counts": tf.constant([[3, 3], [2, 0]])}


def _words(ids, mask):
    return [tiny_bert.WORDS[i] for i in ids[mask > 0]]


def test_packed_pairs_by_hand_for_a_fixed_seed():
    """d1 has two turns and no view, so every transform pairs its turns: "1 book taxi" (its first
    speaker is role 1 here) against "0 please"; d0's pair is one of the hand-listed ones."""
    prefixes = speaker_prefixes(TOKENIZER, 2)
    out = contrastive_pairs(_batch(), tf.constant([3, 5], tf.int64), TOKENIZER, 32, prefixes)
    ids, mask = out["dialogues"].numpy(), out["dialogues_mask"].numpy()
    assert _words(ids[1, 0], mask[1, 0]) == ["[CLS]", "1", "book", "taxi", "[SEP]"]
    assert _words(ids[1, 1], mask[1, 1]) == ["[CLS]", "[UNK]", "please", "[SEP]"]
    whole = ["[CLS]", "[UNK]", "hello", "world", "[SEP]", "1", "good", "morning", "[SEP]", "[UNK]", "how", "are",
             "you", "[SEP]"]
    view = whole[:3] + ["the"] + whole[3:]
    expected = {  # n = 3: the split is 1
        "precomputed": (whole, view),
        "halves": (whole[:5], ["[CLS]"] + whole[5:]),
        "response_selection": (whole[:5], ["[CLS]"] + whole[5:9]),
        "span_matching": (whole[:5], ["[CLS]"] + whole[5:]),
    }
    seen = set()
    for seed in range(12):
        out = contrastive_pairs(_batch(), tf.constant([seed, 1], tf.int64), TOKENIZER, 32, prefixes)
        ids, mask = out["dialogues"].numpy(), out["dialogues_mask"].numpy()
        name = GENERATORS[int(out["generator"][0])]
        assert (_words(ids[0, 0], mask[0, 0]), _words(ids[0, 1], mask[0, 1])) == expected[name], name
        seen.add(name)
        assert set(out["swap"].numpy().tolist()) <= {0, 1}
    assert seen == set(GENERATORS) - {"dropout"}
    again = contrastive_pairs(_batch(), tf.constant([11, 1], tf.int64), TOKENIZER, 32, prefixes)
    for key, value in out.items():
        np.testing.assert_array_equal(again[key].numpy(), value.numpy(), err_msg=key)


def test_dropout_views_pair_each_whole_original_with_itself():
    """--augcl_views=dropout: both sides the original packed whole, views and transforms unused,
    whatever the seed; the swap is still drawn."""
    prefixes = speaker_prefixes(TOKENIZER, 2)
    whole = ["[CLS]", "[UNK]", "hello", "world", "[SEP]", "1", "good", "morning", "[SEP]", "[UNK]", "how", "are",
             "you", "[SEP]"]
    for seed in range(4):
        out = contrastive_pairs(_batch(), tf.constant([seed, 2], tf.int64), TOKENIZER, 32, prefixes, views="dropout")
        ids, mask = out["dialogues"].numpy(), out["dialogues_mask"].numpy()
        assert _words(ids[0, 0], mask[0, 0]) == _words(ids[0, 1], mask[0, 1]) == whole
        assert _words(ids[1, 0], mask[1, 0]) == _words(ids[1, 1], mask[1, 1]) == [
            "[CLS]", "1", "book", "taxi", "[SEP]", "[UNK]", "please", "[SEP]"]
        assert [GENERATORS[g] for g in out["generator"].numpy()] == ["dropout", "dropout"]
    try:
        contrastive_pairs(_batch(), tf.constant([0, 2], tf.int64), TOKENIZER, 32, prefixes, views="none")
    except ValueError as error:
        assert "views must be one of" in str(error)
    else:
        raise AssertionError("an unknown views value was accepted")
