"""BERT's basic tokenization (the words before WordPiece) as regular expressions, in two engines.

The in-graph tokenizer (`tfdialemb.text.tokenizer`) runs these patterns as RE2 string ops; the
data commands count words with them in Python (the `regex` package), so `data stats` without a
vocabulary starts and runs without TensorFlow. The steps, numbered as in the tokenizer:
  1. control and unassigned characters are dropped and every whitespace becomes a space;
  3. CJK ideographs are split into single-character words;
  4. NFC normalisation; with lower-casing, lower case then NFD with combining marks removed;
  5. split on whitespace and on every punctuation character (ASCII symbols count as punctuation).
"""
import functools
import re
import unicodedata
from typing import List

import regex

WHITESPACE = r"[\t\n\r\p{Zs}]"
# Python's unicodedata "C*" categories: RE2's \p{C} lacks unassigned code points (Cn), which are
# the characters outside every assigned category.
CONTROL = r"\p{C}|[^\p{L}\p{M}\p{N}\p{P}\p{S}\p{Z}\p{C}]|\x{FFFD}"
CJK = (
    r"[\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}"
    r"\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]"
)
PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}]"
SPLIT = r"[\s\p{Z}]+|" + PUNCTUATION
COMBINING_MARK = r"\p{Mn}"
"""The patterns in RE2's spelling (`\\x{HHHH}` for a code point)."""


def _compiled(re2_pattern: str):
    """An RE2 pattern compiled by the `regex` package, which spells a code point `\\UHHHHHHHH`."""
    return regex.compile(re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: "\\U%08X" % int(m.group(1), 16), re2_pattern))


@functools.lru_cache(maxsize=None)
def _patterns():
    return tuple(_compiled(p) for p in (WHITESPACE, CONTROL, CJK, COMBINING_MARK, SPLIT, PUNCTUATION))


def basic_words(text: str, lower_case: bool) -> List[str]:
    """The words of `text` that the in-graph tokenizer's `basic_tokenize` finds."""
    whitespace, control, cjk, combining_mark, split, punctuation = _patterns()
    text = control.sub("", whitespace.sub(" ", text))
    text = unicodedata.normalize("NFC", cjk.sub(r" \g<0> ", text))
    if lower_case:
        text = combining_mark.sub("", unicodedata.normalize("NFD", text.lower()))
    words, start = [], 0
    for match in split.finditer(text):
        if match.start() > start:
            words.append(text[start:match.start()])
        if punctuation.fullmatch(match.group()):
            words.append(match.group())
        start = match.end()
    if start < len(text):
        words.append(text[start:])
    return words
