"""Token replacement (thesis Sec. 4.1, "Замена токенов": identical to insertion except that existing
words are masked): words of each utterance masked and filled by a fill-mask model that sees the
neighbouring utterances.

Following the released code (mylib/augmentations/replace.py `Replacer`, built by
mylib/datamakers/augmentations.py:25-30 with k=3, fill_utterance_level=2): every word that may be
masked is (`replace_rate` = 1; a smaller rate masks that fraction of them, drawn at random) and
filled by a draw ∝ score from the first `replace_top_k` acceptable candidates among the model's
`fill_candidates` most probable, the original kept when none is acceptable. The released `Replacer`
accepts any fill (replace.py:16, score_threshold=0: `replace_min_fill_prob` = 0), where the
thesis calls replacement identical to insertion (whose threshold is 0.005).

Which words may be masked (`replace_words`):
- `spaces` (default, released: replace.py:18 `mask_utterance_level=False` makes
  insert.py:95-96 join the dialogue's utterances by "\\n" and split it at each " ", and
  replace.py:28 masks a token when insert.py:126-131 `_is_not_forbidden` holds: all its
  characters letters, `str.isalpha()`, and not a stop word): "you?" is never masked, nor an
  utterance's first and last tokens, which the newline glues to the neighbouring utterances'
  ("thanks\\nbye" is not letters), except the dialogue's very first and last;
- `letters`: every word of letters, with inner apostrophes, not a stop word: "you" of "you?" is
  masked, "?" stays, and each run of CJK ideographs is cut into words (below).
The fill is written over the word in the original string, in the word's case when the model's
vocabulary is lower-cased ("Taxi" → "Hotel"). Context: see `mask_filling`.

Chinese (and other text in CJK ideographs) has no spaces between words: each run of ideographs is
segmented into words by jieba (an optional dependency; a text with ideographs and no jieba
installed is refused with the command that installs it), and each word is masked by one [MASK]
as an English word is ("你好，请问今天天气怎么样？" has the words 你好, 请问, 今天天气, 怎么样), under
`replace_words=letters`.
"""
import re
from typing import Any, List, Sequence

from tfdialemb.augment.mask_filling import FILL_OPTIONS, MaskFilling, Place
from tfdialemb.core.options import Option
from tfdialemb.text.chinese_words import CJK_RUN, jieba_spans

SPACES, LETTERS = "spaces", "letters"
WORD_SPLITS = (SPACES, LETTERS)
REPLACE_WORDS = Option("replace_words", SPACES, "Token replacement: the words that may be masked: spaces "
                       "(released): the tokens between single spaces of the utterances joined by newlines that "
                       "are all letters (an utterance's first and last tokens, glued to its neighbours', never "
                       "are); letters: every word of letters (CJK runs cut by jieba).", choices=WORD_SPLITS)
REPLACE_RATE = Option("replace_rate", 1.0, "Token replacement: fraction of an utterance's words (see "
                      "--replace_words, not stop words) masked (released code: all).", lower_bound=0.0,
                      upper_bound=1.0)
REPLACE_MIN_FILL_PROB = Option("replace_min_fill_prob", 0.0, "Token replacement: fill-mask candidates less "
                               "probable than this are rejected (released code: score_threshold=0, any fill).",
                               lower_bound=0.0, upper_bound=1.0)
REPLACE_TOP_K = Option("replace_top_k", 3, "Token replacement: acceptable fill-mask candidates drawn from "
                       "(released code: k=3).", lower_bound=1)
OPTIONS = FILL_OPTIONS + (REPLACE_WORDS, REPLACE_RATE, REPLACE_TOP_K, REPLACE_MIN_FILL_PROB)
"""The flags of this operation, named as its constructor's arguments (the fill-mask ones
shared with the other token operation)."""
_WORD = re.compile(r"(?<!\w)[^\W\d_]+(?:['’][^\W\d_]+)*(?!\w)")
"""Letters, with inner apostrophes ("don't"), not glued to digits or underscores (CJK runs are
segmented apart, `words`)."""


def words(text: str) -> List[Place]:
    """The spans of the words of `text`, in text order: `_WORD` matches outside runs of CJK
    ideographs, and jieba's words within each run (jieba loaded when a run is met)."""
    runs = list(CJK_RUN.finditer(text))
    # Each run blanked out, so a Latin word next to it is still a whole word.
    latin = CJK_RUN.sub(lambda m: " " * len(m.group()), text) if runs else text
    spans = [m.span() for m in _WORD.finditer(latin)]
    if runs:
        segment = jieba_spans("replace (Chinese text)")
        spans += [(run.start() + a, run.start() + b) for run in runs for a, b in segment(run.group())]
    return [Place(a, b) for a, b in sorted(spans)]


def space_separated_words(texts: Sequence[str]) -> List[List[Place]]:
    """Per utterance, the spans of the released code's maskable tokens (insert.py:95-96, 126-131):
    the tokens between single spaces of `texts` joined by newlines that are all letters; a token
    holding the newline between two utterances never is."""
    found = []
    for u, text in enumerate(texts):
        places, start = [], 0
        for token in text.split(" "):
            end = start + len(token)
            glued = (start == 0 and u > 0) or (end == len(text) and u < len(texts) - 1)
            if token.isalpha() and not glued:
                places.append(Place(start, end))
            start = end + 1
        found.append(places)
    return found


def in_case_of(token: str, original: str) -> str:
    """`token` in the case of `original`: upper when it is upper (and longer than one letter),
    capitalised when it starts upper."""
    if len(original) > 1 and original.isupper():
        return token.upper()
    if original[:1].isupper():
        return token[:1].upper() + token[1:]
    return token


class TokenReplacement(MaskFilling):
    """Replaces words of each utterance with fill-mask predicted words."""

    options = OPTIONS
    name = "replace"

    def __init__(self, fill_mask_model: Any, seed: int = 0,
                 replace_words: str = REPLACE_WORDS.default, replace_rate: float = REPLACE_RATE.default,
                 replace_top_k: int = REPLACE_TOP_K.default,
                 replace_min_fill_prob: float = REPLACE_MIN_FILL_PROB.default, **fill_options):
        """`fill_options`: the FILL_OPTIONS arguments of `MaskFilling`."""
        if replace_words not in WORD_SPLITS:
            raise ValueError(f"replace: replace_words must be one of {WORD_SPLITS}, got {replace_words!r}")
        super().__init__(fill_mask_model, rate=replace_rate, top_k=replace_top_k, min_fill_prob=replace_min_fill_prob,
                         seed=seed, **fill_options)
        self.replace_words = replace_words

    def candidates(self, texts: Sequence[str]) -> List[List[Place]]:
        """Each word (`replace_words`) of each utterance that is not a stop word."""
        found = space_separated_words(texts) if self.replace_words == SPACES else [words(text) for text in texts]
        return [[p for p in places if text[p.start:p.end].lower() not in self.stop_words]
                for text, places in zip(texts, found)]

    def render(self, token: str, original: str) -> str:
        return in_case_of(token, original) if self.model.tokenizer.lower_case else token
