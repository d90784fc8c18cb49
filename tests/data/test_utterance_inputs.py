"""The `utterances` builder and what the auxiliary models draw from it per pass: context-response
pairs (contexts left-aligned, oldest first, truncated to the last 3, empty slots at the end) and
shuffled dialogues with their true positions; checked on hand-made dialogues."""
import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.data.context_response_pairs import draw_pairs
from tfdialemb.data.examples import make_builder
from tfdialemb.data.utterance_shuffle import shuffle_utterances
from tfdialemb.dialogue import Dialogue, Turn

LONG = ["hello", "how are you", "fine thanks", "book a taxi please", "need hotel", "good morning"]


def test_one_example_per_dialogue_with_every_utterance_in_order():
    dialogue = Dialogue("d0", tuple(Turn("ab"[j % 2], t) for j, t in enumerate(LONG)))
    examples = list(make_builder("utterances").examples(dialogue, 0, np.random.default_rng(0), None))
    assert examples == [{"utterances": LONG}]


def _turn(dialogue, position):
    """A stored `[CLS] pieces [SEP]` row that names its dialogue and position, of varying length."""
    return [2] + [10 + 100 * dialogue + position] * (1 + position % 3) + [3]


@pytest.fixture(scope="module")
def batch():
    """Dialogue 0 of 6 utterances, dialogue 1 of 2 (padded), as the pipeline batches them."""
    dialogues = [[_turn(0, p) for p in range(6)], [_turn(1, p) for p in range(2)]]
    ids = np.zeros([2, 6, 5], np.int32)
    for b, turns in enumerate(dialogues):
        for p, row in enumerate(turns):
            ids[b, p, :len(row)] = row
    return {"utterances": tf.constant(ids), "utterances_mask": tf.constant((ids > 0).astype(np.int32))}


def _rows(ids, mask):
    """Token-id lists of the rows, None for an empty one."""
    return [list(r[m > 0]) if m.any() else None for r, m in zip(ids, mask)]


def test_pairs_take_the_last_three_utterances_before_the_response(batch):
    seen = set()
    for draw in range(40):
        pairs = draw_pairs(batch, tf.constant([7, draw], tf.int64), context=3)
        contexts = pairs["context"].numpy(), pairs["context_mask"].numpy()
        responses = _rows(pairs["response"].numpy(), pairs["response_mask"].numpy())
        for b, n in ((0, 6), (1, 2)):
            k = [_turn(b, p) for p in range(n)].index(responses[b])
            # The released range: k in [1, n - 2], k = 1 in a two-utterance dialogue.
            assert 1 <= k <= max(n - 2, 1)
            expected = [_turn(b, p) for p in range(max(0, k - 3), k)]
            assert _rows(contexts[0][b], contexts[1][b]) == expected + [None] * (3 - len(expected))
            if b == 0:
                seen.add(k)
        # Rows are cut to the longest text drawn.
        assert pairs["context"].shape[-1] == max(len(r) for r in responses + [
            row for b in (0, 1) for row in _rows(contexts[0][b], contexts[1][b]) if row])
    assert seen == {1, 2, 3, 4}


def test_shuffle_keeps_every_utterance_once_with_its_true_position(batch):
    orders = set()
    for draw in range(5):
        shuffled = shuffle_utterances(batch, tf.constant([3, draw], tf.int64))
        rows = [_rows(i, m) for i, m in zip(shuffled["utterances"].numpy(), shuffled["utterances_mask"].numpy())]
        positions = shuffled["positions"].numpy()
        for b, n in ((0, 6), (1, 2)):
            assert sorted(positions[b][:n]) == list(range(n))
            assert rows[b][:n] == [_turn(b, p) for p in positions[b][:n]]
            assert rows[b][n:] == [None] * (6 - n)
        orders.add(tuple(positions[0]))
    assert len(orders) > 1
    np.testing.assert_array_equal(shuffle_utterances(batch, tf.constant([3, 0], tf.int64))["positions"],
                                  shuffle_utterances(batch, tf.constant([3, 0], tf.int64))["positions"])
