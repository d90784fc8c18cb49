"""Token replacement with a tiny fill-mask model whose predictions the test sets: which words are
masked, how fills are drawn from the top k, which are rejected, the context the model is given,
and that the result does not depend on how dialogues are batched."""
import collections

import pytest

from tiny_mlm import VOCAB, token_ids
from tfdialemb.augment.base import AUGMENTATIONS, SOURCE_ID
from tfdialemb.augment.mask_filling import Place
from tfdialemb.augment.token_replacement import TokenReplacement, in_case_of, words
from tfdialemb.dialogue import Dialogue, Turn

M = "[MASK]"
BOOKING = Dialogue("booking", (Turn("user", "Book a TAXI, please!"), Turn("system", "Hello 2 world_x don't")))
PLAIN = Dialogue("plain", tuple(Turn(s, t) for s, t in (("user", "hello world"), ("system", "fine thanks"),
                                                        ("user", "good morning"))))


def _texts(dialogue):
    return [turn.text for turn in dialogue.turns]


def test_words_are_replaced_in_place_in_their_case_and_stop_words_kept(controlled_mlm, set_probabilities):
    set_probabilities({"hotel": 0.9})
    [result] = TokenReplacement(controlled_mlm).augment([BOOKING])
    # "a" and "please" are stop words; "2" and "world_x" are not words of letters; "don't" is one.
    assert _texts(result) == ["Hotel a HOTEL, please!", "Hotel 2 world_x hotel"]
    assert result.labels == {SOURCE_ID: "booking", AUGMENTATIONS: ["replace"]}
    [every_word] = TokenReplacement(controlled_mlm, fill_stop_words="none").augment([BOOKING])
    assert _texts(every_word)[0] == "Hotel hotel HOTEL, hotel!"


def test_in_case_of():
    assert [in_case_of("hotel", w) for w in ("taxi", "Taxi", "TAXI", "I", "tAXI")] == \
        ["hotel", "Hotel", "HOTEL", "Hotel", "hotel"]


def test_fills_are_drawn_from_the_top_k_in_proportion_to_their_probability(controlled_mlm, set_probabilities):
    probabilities = {"hotel": 0.3, "taxi": 0.25, "cafe": 0.2, "book": 0.15}
    set_probabilities(probabilities)
    dialogues = [Dialogue(f"d{i}", (Turn("user", "world world world world world"),) * 2) for i in range(40)]
    counts = collections.Counter(w for d in TokenReplacement(controlled_mlm, seed=4).augment(dialogues)
                                 for turn in d.turns for w in turn.text.split())
    assert sum(counts.values()) == 400 and "book" not in counts and "world" not in counts  # k = 3
    top = sum(probabilities[w] for w in ("hotel", "taxi", "cafe"))
    for word in ("hotel", "taxi", "cafe"):
        assert counts[word] / 400 == pytest.approx(probabilities[word] / top, abs=0.08)


def test_a_sub_word_or_improbable_fill_keeps_the_word(controlled_mlm, set_probabilities):
    set_probabilities({"##ing": 0.95})
    assert TokenReplacement(controlled_mlm).augment([PLAIN]) == [None]
    set_probabilities({"[unused0]": 0.99, "hotel": 0.004})
    assert TokenReplacement(controlled_mlm).augment([PLAIN]) == [None]
    [result] = TokenReplacement(controlled_mlm, min_fill_prob=0.003).augment([PLAIN])
    assert _texts(result) == ["hotel hotel", "hotel hotel", "hotel hotel"]


def test_the_model_sees_the_masked_utterance_between_its_neighbours(controlled_mlm, set_probabilities, model_inputs):
    set_probabilities({"hotel": 0.9})
    sequences, positions, k = model_inputs(TokenReplacement(controlled_mlm), [PLAIN])
    expected = [["[CLS]", M, M, "[SEP]", "fine", "thanks", "[SEP]"],
                ["[CLS]", "hello", "world", "[SEP]", M, M, "[SEP]", "good", "morning", "[SEP]"],
                ["[CLS]", "fine", "thanks", "[SEP]", M, M, "[SEP]"]]
    assert sequences == [token_ids(*tokens) for tokens in expected]
    assert positions == [[1, 2], [4, 5], [4, 5]]
    assert k == len(VOCAB)  # the 100 candidates scanned, capped by the 98-token vocabulary


def test_replace_rate_masks_that_fraction_of_the_words(controlled_mlm, set_probabilities):
    set_probabilities({"hotel": 0.9})
    text = "hello world fine thanks good"
    [result] = TokenReplacement(controlled_mlm, replace_rate=0.5, seed=2).augment([Dialogue("d", (Turn("u", text),))])
    words = result.turns[0].text.split()
    assert words.count("hotel") == 3  # ceil(5 · 0.5)
    assert [w for w in words if w != "hotel"] == [w for w, new in zip(text.split(), words) if new != "hotel"]


def test_batching_order_and_seed(random_mlm):
    dialogues = [BOOKING, PLAIN]
    settings = dict(min_fill_prob=0.0, fill_stop_words="none")
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
    [result] = TokenReplacement(controlled_mlm).augment([Dialogue("zh", (Turn("user", text),))])
    assert _texts(result) == ["好，好好好？"]
