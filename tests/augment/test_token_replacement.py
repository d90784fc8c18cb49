"""Token replacement with a tiny fill-mask model whose predictions the test sets: which words are
masked (the released split and stop list, hand-worked), how fills are drawn from the top k, which
are rejected, the context the model is given, and that the result does not depend on how
dialogues are batched."""
import collections

import pytest

from tiny_mlm import VOCAB, token_ids
from tfdialemb.augment.base import AUGMENTATIONS, SOURCE_ID
from tfdialemb.augment.mask_filling import Place, stop_words
from tfdialemb.augment.token_replacement import TokenReplacement, in_case_of, space_separated_words, words
from tfdialemb.dialogue import Dialogue, Turn

M = "[MASK]"
BOOKING = Dialogue("booking", (Turn("user", "Book a TAXI, please!"), Turn("system", "Hello 2 world_x don't")))
PLAIN = Dialogue("plain", tuple(Turn(s, t) for s, t in (("user", "hello world"), ("system", "fine thanks"),
                                                        ("user", "good morning"))))


def _texts(dialogue):
    return [turn.text for turn in dialogue.turns]


def test_the_released_replacer_masks_only_space_separated_tokens_of_letters(controlled_mlm, set_probabilities):
    """replace.py:18 + insert.py:95-96, 126-131: "Book a TAXI, please!\\nHello 2 world_x don't" split
    at spaces is Book | a | TAXI, | please!\\nHello | 2 | world_x | don't; of these only "Book" is
    letters and not an nltk stop word ("a" is one)."""
    set_probabilities({"hotel": 0.9})
    [result] = TokenReplacement(controlled_mlm).augment([BOOKING])
    assert _texts(result) == ["Hotel a TAXI, please!", "Hello 2 world_x don't"]
    assert result.labels == {SOURCE_ID: "booking", AUGMENTATIONS: ["replace"]}


def test_space_separated_words_by_hand():
    texts = ["hello world", "fine thanks", "you? good  day", "morning"]
    # hello | world\nfine | thanks\nyou? | good | (empty) | day\nmorning
    assert space_separated_words(texts) == [[Place(0, 5)], [], [Place(5, 9)], []]
    assert space_separated_words(["just one"]) == [[Place(0, 4), Place(5, 8)]]


@pytest.mark.parametrize("stop_list, expected", [
    ("nltk_english", ["Hotel a HOTEL, hotel!", "Hotel 2 world_x don't"]),  # "please" is no nltk stop word
    ("sklearn_english", ["Hotel a HOTEL, please!", "Hotel 2 world_x hotel"]),  # nor "don't" a scikit-learn one
    ("none", ["Hotel hotel HOTEL, hotel!", "Hotel 2 world_x hotel"]),
])
def test_letter_words_are_replaced_in_place_in_their_case(controlled_mlm, set_probabilities, stop_list, expected):
    # "2" and "world_x" are not words of letters; "don't" is one.
    set_probabilities({"hotel": 0.9})
    [result] = TokenReplacement(controlled_mlm, replace_words="letters", fill_stop_words=stop_list).augment([BOOKING])
    assert _texts(result) == expected


def test_the_stop_list_is_nltks_english_list():
    nltk = stop_words("nltk_english")
    sklearn = stop_words("sklearn_english")
    assert len(nltk) == 179 and len(sklearn) == 318
    assert {"i", "the", "don't", "wouldn't", "mightn", "y"} <= nltk
    assert len(sklearn - nltk) == 199
    assert not {"please", "find", "get", "give", "go", "show", "call", "one", "two", "first", "next",
                "back"} & nltk
    assert {"please", "find", "get", "give", "go", "show", "call", "one", "two", "first", "next",
            "back"} <= sklearn


def test_in_case_of():
    assert [in_case_of("hotel", w) for w in ("taxi", "Taxi", "TAXI", "I", "tAXI")] == \
        ["hotel", "Hotel", "HOTEL", "Hotel", "hotel"]


def test_fills_are_drawn_from_the_top_k_in_proportion_to_their_probability(controlled_mlm, set_probabilities):
    probabilities = {"hotel": 0.3, "taxi": 0.25, "cafe": 0.2, "book": 0.15}
    set_probabilities(probabilities)
    dialogues = [Dialogue(f"d{i}", (Turn("user", "world world world world world"),) * 2) for i in range(40)]
    counts = collections.Counter(w for d in TokenReplacement(controlled_mlm, seed=4).augment(dialogues)
                                 for turn in d.turns for w in turn.text.split())
    # Per dialogue 8 of the 10 words masked: the last of the first turn and the first of the second
    # are glued by the newline ("world\nworld").
    assert counts["world"] == 80 and sum(counts.values()) == 400 and "book" not in counts  # k = 3
    top = sum(probabilities[w] for w in ("hotel", "taxi", "cafe"))
    for word in ("hotel", "taxi", "cafe"):
        assert counts[word] / 320 == pytest.approx(probabilities[word] / top, abs=0.08)


def test_any_fill_is_accepted_as_released_but_no_sub_word(controlled_mlm, set_probabilities):
    """replace.py:16, score_threshold=0: a fill at 0.004 is taken (insertion's 0.005 would reject
    it). PLAIN's maskable tokens are "hello" (first of the dialogue) and "morning" (last)."""
    set_probabilities({"##ing": 0.95, "hotel": 0.049999})  # the piece passed over
    [result] = TokenReplacement(controlled_mlm, replace_top_k=1).augment([PLAIN])
    assert _texts(result) == ["hotel world", "fine thanks", "good hotel"]
    set_probabilities({"[unused0]": 0.995999, "hotel": 0.004})
    [result] = TokenReplacement(controlled_mlm, replace_top_k=1).augment([PLAIN])
    assert _texts(result) == ["hotel world", "fine thanks", "good hotel"]
    assert TokenReplacement(controlled_mlm, replace_min_fill_prob=0.005).augment([PLAIN]) == [None]


def test_the_released_pairs_are_masked_together(controlled_mlm, set_probabilities, model_inputs):
    """fill_utterance_level=2: (u1, u2) in one input, u3 alone, the masks of both in the first."""
    set_probabilities({"hotel": 0.9})
    sequences, positions, k = model_inputs(TokenReplacement(controlled_mlm), [PLAIN])
    assert sequences == [token_ids("[CLS]", M, "world", "[SEP]", "fine", "thanks", "[SEP]"),
                         token_ids("[CLS]", "good", M, "[SEP]")]
    assert positions == [[1], [2]]
    sequences, positions, k = model_inputs(TokenReplacement(controlled_mlm, replace_words="letters"), [PLAIN])
    assert sequences == [token_ids("[CLS]", M, M, "[SEP]", M, M, "[SEP]"), token_ids("[CLS]", M, M, "[SEP]")]
    assert positions == [[1, 2, 4, 5], [1, 2]]
    assert k == len(VOCAB)  # the 100 candidates scanned, capped by the 98-token vocabulary


def test_a_window_shows_the_masked_utterance_between_its_neighbours(controlled_mlm, set_probabilities,
                                                                    model_inputs):
    set_probabilities({"hotel": 0.9})
    operation = TokenReplacement(controlled_mlm, replace_words="letters", fill_context="window")
    sequences, positions, k = model_inputs(operation, [PLAIN])
    expected = [["[CLS]", M, M, "[SEP]", "fine", "thanks", "[SEP]"],
                ["[CLS]", "hello", "world", "[SEP]", M, M, "[SEP]", "good", "morning", "[SEP]"],
                ["[CLS]", "fine", "thanks", "[SEP]", M, M, "[SEP]"]]
    assert sequences == [token_ids(*tokens) for tokens in expected]
    assert positions == [[1, 2], [4, 5], [4, 5]]


def test_replace_rate_masks_that_fraction_of_the_words(controlled_mlm, set_probabilities):
    set_probabilities({"hotel": 0.9})
    text = "hello world fine thanks good"
    [result] = TokenReplacement(controlled_mlm, replace_rate=0.5, seed=2).augment([Dialogue("d", (Turn("u", text),))])
    words = result.turns[0].text.split()
    assert words.count("hotel") == 3  # ceil(5 · 0.5)
    assert [w for w in words if w != "hotel"] == [w for w, new in zip(text.split(), words) if new != "hotel"]


def test_batching_order_and_seed(random_mlm):
    dialogues = [BOOKING, PLAIN]
    settings = dict(replace_words="letters", fill_stop_words="none")
    together = TokenReplacement(random_mlm, seed=5, fill_batch_size=3, **settings).augment(dialogues)
    one_by_one = [TokenReplacement(random_mlm, seed=5, fill_batch_size=1, **settings).augment([d])[0]
                  for d in dialogues]
    assert all(d is not None for d in together)
    assert together == one_by_one == TokenReplacement(random_mlm, seed=5, **settings).augment(dialogues[::-1])[::-1]
    assert TokenReplacement(random_mlm, seed=6, **settings).augment(dialogues) != together


def test_chinese_text_is_cut_into_words_not_replaced_clause_by_clause(controlled_mlm, set_probabilities):
    """A run of ideographs is not one word: jieba's words are masked one by one, punctuation kept."""
    text = "你好，请问今天天气怎么样？"
    assert [text[p.start:p.end] for p in words(text)] == ["你好", "请问", "今天天气", "怎么样"]
    assert words("Book 去机场 please") == [Place(0, 4), Place(5, 6), Place(6, 8), Place(9, 15)]
    assert words("taxi去机场") == [Place(0, 4), Place(4, 5), Place(5, 7)]  # a Latin word glued to a run
    set_probabilities({"好": 0.9})
    [result] = TokenReplacement(controlled_mlm, replace_words="letters").augment([Dialogue("zh", (Turn("user", text),))])
    assert _texts(result) == ["好，好好好？"]
