"""Token insertion with a tiny fill-mask model whose predictions the test sets: what is inserted
where, which fills are rejected, what the model is given as context, and that the result does
not depend on how dialogues are batched."""
import pytest

from tiny_mlm import VOCAB, token_ids
from tfdialemb.augment.base import AUGMENTATIONS, SOURCE_ID
from tfdialemb.augment.token_insertion import TokenInsertion
from tfdialemb.dialogue import Dialogue, Turn

GREETING = Dialogue("greeting", (Turn("user", "Hello world, how are you?"),
                                 Turn("system", "Fine thanks! Need a taxi?")), {"domain": "taxi"})
PLAIN = Dialogue("plain", tuple(Turn(s, t) for s, t in (("user", "hello world"), ("system", "how are you"),
                                                        ("user", "good morning"), ("system", "book a taxi"))))


def _texts(dialogue):
    return [turn.text for turn in dialogue.turns]


def test_a_whole_word_fill_is_written_before_each_drawn_word(controlled_mlm, set_probabilities):
    set_probabilities({"hotel": 0.9})  # the other top-5 candidates have 0.1 / 97 < 0.005 each
    [result] = TokenInsertion(controlled_mlm, mask_rate=1.0).augment([GREETING])
    assert _texts(result) == ["hotel Hello hotel world, hotel how hotel are hotel you?",
                              "hotel Fine hotel thanks! hotel Need hotel a hotel taxi?"]
    assert [t.speaker for t in result.turns] == ["user", "system"]
    assert result.labels == {"domain": "taxi", SOURCE_ID: "greeting", AUGMENTATIONS: ["insert"]}


@pytest.mark.parametrize("mask_rate, inserted", [(0.5, 5), (0.3, 3)])
def test_mask_rate_inserts_ceil_of_rate_times_words_at_distinct_gaps(controlled_mlm, set_probabilities,
                                                                   mask_rate, inserted):
    set_probabilities({"hotel": 0.9})
    text = "need a good cafe and a taxi to the hotel"  # 10 words
    [result] = TokenInsertion(controlled_mlm, seed=11, mask_rate=mask_rate).augment(
        [Dialogue("d", (Turn("user", text),))])
    words = result.turns[0].text.split(" ")
    new = [i for i, w in enumerate(words) if w == "hotel" and i != len(words) - 1]
    assert len(new) == inserted  # ceil(10 · 0.5) = 5, ceil(10 · 0.3) = 3 (not 4)
    assert [w for i, w in enumerate(words) if i not in new] == text.split(" ")
    assert all(b - a > 1 for a, b in zip(new, new[1:]))  # at most one insertion per gap


def test_a_sub_word_fill_is_rejected(controlled_mlm, set_probabilities):
    set_probabilities({"##ing": 0.95})
    assert TokenInsertion(controlled_mlm, mask_rate=1.0).augment([PLAIN]) == [None]
    set_probabilities({"##ing": 0.9, "taxi": 0.09})  # the piece is passed over, the word taken
    [result] = TokenInsertion(controlled_mlm, mask_rate=1.0).augment([PLAIN])
    assert _texts(result)[0] == "taxi hello taxi world"


def test_a_fill_below_min_fill_prob_is_rejected(controlled_mlm, set_probabilities):
    set_probabilities({"[unused0]": 0.99, "hotel": 0.004})
    assert TokenInsertion(controlled_mlm, mask_rate=1.0).augment([PLAIN]) == [None]
    [result] = TokenInsertion(controlled_mlm, mask_rate=1.0, min_fill_prob=0.003).augment([PLAIN])
    assert _texts(result)[3] == "hotel book hotel a hotel taxi"


def test_a_stop_word_fill_is_rejected_unless_stop_words_are_off(controlled_mlm, set_probabilities):
    set_probabilities({"the": 0.9})
    assert TokenInsertion(controlled_mlm, mask_rate=1.0).augment([PLAIN]) == [None]
    [result] = TokenInsertion(controlled_mlm, mask_rate=1.0, fill_stop_words="none").augment([PLAIN])
    assert _texts(result)[2] == "the good the morning"


def test_the_candidates_are_scanned_past_stop_words_for_a_word(controlled_mlm, set_probabilities):
    """The model's five most probable fills are stop words and its sixth a word: the released
    `_choose_confident` scans its top 100 for the first k = 5 acceptable ones and inserts the word;
    looking at the top 5 alone inserts nothing."""
    set_probabilities({"the": 0.2, "a": 0.19, "is": 0.18, "of": 0.17, "to": 0.16, "hotel": 0.05})
    # The other 92 tokens share 0.05: 0.00054 each, under min_fill_prob = 0.005.
    [result] = TokenInsertion(controlled_mlm, mask_rate=1.0).augment([PLAIN])
    assert _texts(result) == ["hotel hello hotel world", "hotel how hotel are hotel you",
                              "hotel good hotel morning", "hotel book hotel a hotel taxi"]
    assert TokenInsertion(controlled_mlm, mask_rate=1.0, fill_candidates=5).augment([PLAIN]) == [None]


def test_only_the_first_k_acceptable_candidates_are_drawn_from(controlled_mlm, set_probabilities):
    set_probabilities({"the": 0.3, "hotel": 0.2, "taxi": 0.2, "cafe": 0.2})
    drawn = {w for d in TokenInsertion(controlled_mlm, mask_rate=1.0, insert_top_k=2, seed=3).augment(
        [Dialogue(f"d{i}", (Turn("user", "hello world good morning"),)) for i in range(10)])
        for w in d.turns[0].text.split()} - {"hello", "world", "good", "morning"}
    assert drawn == {"hotel", "taxi"}  # "cafe", as probable as "taxi", is the third acceptable
    with pytest.raises(ValueError, match="fill_candidates .3. must be at least top_k .5."):
        TokenInsertion(controlled_mlm, fill_candidates=3)


M = "[MASK]"


@pytest.mark.parametrize("context, max_length, expected", [
    (1, 256, [["[CLS]", M, "hello", M, "world", "[SEP]", "how", "are", "you", "[SEP]"],
              ["[CLS]", "hello", "world", "[SEP]", M, "how", M, "are", M, "you", "[SEP]", "good", "morning", "[SEP]"],
              ["[CLS]", "how", "are", "you", "[SEP]", M, "good", M, "morning", "[SEP]", "book", "a", "taxi", "[SEP]"],
              ["[CLS]", "good", "morning", "[SEP]", M, "book", M, "a", M, "taxi", "[SEP]"]]),
    (0, 256, [["[CLS]", M, "hello", M, "world", "[SEP]"], ["[CLS]", M, "how", M, "are", M, "you", "[SEP]"],
              ["[CLS]", M, "good", M, "morning", "[SEP]"], ["[CLS]", M, "book", M, "a", M, "taxi", "[SEP]"]]),
    # Cut to 12 tokens: the masked utterance whole, then the nearest context, alternately each side
    # (a separator left at the outer end of a cut context is dropped).
    (2, 12, [["[CLS]", M, "hello", M, "world", "[SEP]", "how", "are", "you", "[SEP]", "good", "[SEP]"],
             ["[CLS]", "world", "[SEP]", M, "how", M, "are", M, "you", "[SEP]", "good", "[SEP]"],
             ["[CLS]", "are", "you", "[SEP]", M, "good", M, "morning", "[SEP]", "book", "a", "[SEP]"],
             ["[CLS]", "good", "morning", "[SEP]", M, "book", M, "a", M, "taxi", "[SEP]"]]),
])
def test_a_window_shows_the_masked_utterance_between_its_neighbours(controlled_mlm, set_probabilities,
                                                                    model_inputs, context, max_length, expected):
    set_probabilities({"hotel": 0.9})
    operation = TokenInsertion(controlled_mlm, mask_rate=1.0, fill_context="window", context_utterances=context,
                               fill_max_length=max_length)
    sequences, positions, k = model_inputs(operation, [PLAIN])
    assert sequences == [token_ids(*tokens) for tokens in expected]
    assert positions == [[i for i, t in enumerate(tokens) if t == M] for tokens in expected]
    assert k == len(VOCAB)  # the 100 candidates scanned, capped by the 98-token vocabulary


@pytest.mark.parametrize("max_length, expected, texts", [
    (256, [["[CLS]", M, "hello", M, "world", "[SEP]", M, "how", M, "are", M, "you", "[SEP]"],
           ["[CLS]", M, "good", M, "morning", "[SEP]", M, "book", M, "a", M, "taxi", "[SEP]"]],
     ["hotel hello hotel world", "hotel how hotel are hotel you", "hotel good hotel morning",
      "hotel book hotel a hotel taxi"]),
    # 11 tokens: the pair's 11 tokens cut to 9 at their end; the place before the last word is cut off.
    (11, [["[CLS]", M, "hello", M, "world", "[SEP]", M, "how", M, "are", "[SEP]"],
          ["[CLS]", M, "good", M, "morning", "[SEP]", M, "book", M, "a", "[SEP]"]],
     ["hotel hello hotel world", "hotel how hotel are you", "hotel good hotel morning", "hotel book hotel a taxi"]),
])
def test_the_released_pairs_fill_two_utterances_masks_together(controlled_mlm, set_probabilities, model_inputs,
                                                              max_length, expected, texts):
    """insert.py:255 `_fill_masks_context_level` with fill_utterance_level=2: (u1, u2), (u3, u4)
    each one input, every utterance masked."""
    set_probabilities({"hotel": 0.9})
    operation = TokenInsertion(controlled_mlm, mask_rate=1.0, fill_max_length=max_length)
    sequences, positions, _ = model_inputs(operation, [PLAIN])
    assert sequences == [token_ids(*tokens) for tokens in expected]
    assert positions == [[i for i, t in enumerate(tokens) if t == M] for tokens in expected]
    [result] = operation.augment([PLAIN])
    assert _texts(result) == texts


def test_batching_and_order_do_not_change_the_result(random_mlm):
    dialogues = [GREETING, PLAIN, Dialogue("short", (Turn("user", "thanks"),))]
    settings = dict(seed=5, min_fill_prob=0.0, fill_stop_words="none")
    together = TokenInsertion(random_mlm, fill_batch_size=4, **settings).augment(dialogues)
    one_by_one = [TokenInsertion(random_mlm, fill_batch_size=1, **settings).augment([d])[0] for d in dialogues]
    reversed_order = TokenInsertion(random_mlm, fill_batch_size=2, **settings).augment(dialogues[::-1])[::-1]
    assert all(d is not None for d in together)
    assert together == one_by_one == reversed_order


def test_a_seed_fixes_the_result(random_mlm):
    settings = dict(min_fill_prob=0.0, fill_stop_words="none")
    first = TokenInsertion(random_mlm, seed=1, **settings).augment([GREETING, PLAIN])
    assert TokenInsertion(random_mlm, seed=1, **settings).augment([GREETING, PLAIN]) == first
    assert TokenInsertion(random_mlm, seed=2, **settings).augment([GREETING, PLAIN]) != first
