"""BERT's basic words counted in Python: the words of transformers' BasicTokenizer (the Python
reference the in-graph tokenizer matches) on the tokenizer parity texts and on random strings."""
import random

import pytest
from transformers.models.bert.tokenization_bert import BasicTokenizer

from tfdialemb.text.basic_words import basic_words
from text.test_tokenizer_parity import TEXTS

BLOCKS = ((0, 0x2FF), (0x300, 0x36F), (0x2000, 0x206F), (0x3000, 0x30FF), (0x4E00, 0x4E50), (0xFE00, 0xFFFF))
"""Latin with controls, combining marks, general punctuation and spaces, CJK symbols and kana, CJK
ideographs, and specials with unassigned code points."""


def _random_texts(count, seed=0):
    rng = random.Random(seed)
    return ["".join(chr(rng.randint(*rng.choice(BLOCKS))) for _ in range(rng.randint(0, 30))) for _ in range(count)]


def test_hand_worked():
    assert basic_words("Héllo, WÖRLD!! 中文\tx\x00y", lower_case=True) == ["hello", ",", "world", "!", "!", "中", "文", "xy"]
    assert basic_words("Héllo, WÖRLD!!", lower_case=False) == ["Héllo", ",", "WÖRLD", "!", "!"]
    assert basic_words(" \u3000 ", lower_case=True) == []


@pytest.mark.parametrize("lower_case", [True, False])
def test_the_words_of_transformers_basic_tokenizer(lower_case):
    reference = BasicTokenizer(do_lower_case=lower_case)
    texts = TEXTS + _random_texts(2000)
    assert [basic_words(text, lower_case) for text in texts] == [reference.tokenize(text) for text in texts]
