"""Token replacement (thesis Sec. 4.1, "Замена токенов": identical to insertion except that existing
words are masked): words of each utterance masked and filled by a fill-mask model that sees the
neighbouring utterances.

Following the released code (mylib/augmentations/replace.py `Replacer`, built with k=3,
fill_utterance_level=2): every word that is alphabetic and not a stop word is masked
(`replace_rate` = 1; a smaller rate masks that fraction of them, drawn at random) and filled by a
draw ∝ score from the first `replace_top_k` acceptable candidates among the model's
`fill_candidates` most probable, the original kept when none is acceptable.
The released `Replacer` masks a whitespace-separated token only when all of it is letters
("you?" is never masked); here the letters of a token are the word ("you" of "you?" is masked,
"?" stays). The released `Replacer` sets no probability threshold (score_threshold=0); the thesis
calls replacement identical to insertion, so `min_fill_prob` applies to both (0 reproduces the
released replacement). The fill is written over the word in the original string, in the word's
case when the model's vocabulary is lower-cased ("Taxi" → "Hotel"). Context: see
`token_insertion`.

Chinese (and other text in CJK ideographs) has no spaces between words: each run of ideographs is
segmented into words by jieba (an optional dependency; a text with ideographs and no jieba
installed is refused with the command that installs it), and each word is masked by one [MASK]
as an English word is ("你好，请问今天天气怎么样？" has the words 你好, 请问, 今天天气, 怎么样).
"""
import os
import re
from typing import List, Union

from tfdialemb.augment.fill_mask import FillMaskModel
from tfdialemb.augment.mask_filling import FILL_OPTIONS, MaskFilling, Place
from tfdialemb.options import Option
from tfdialemb.text.chinese_words import CJK_RUN, jieba_spans

REPLACE_RATE = Option("replace_rate", 1.0, "Token replacement: fraction of an utterance's words (alphabetic, "
                      "not stop words) masked (released code: all).", lower_bound=0.0, upper_bound=1.0)
REPLACE_TOP_K = Option("replace_top_k", 3, "Token replacement: acceptable fill-mask candidates drawn from "
                       "(released code: k=3).", lower_bound=1)
OPTIONS = FILL_OPTIONS + (REPLACE_RATE, REPLACE_TOP_K)
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

    def __init__(self, fill_mask_model: Union[FillMaskModel, str, os.PathLike], seed: int = 0,
                 replace_rate: float = REPLACE_RATE.default, replace_top_k: int = REPLACE_TOP_K.default,
                 **fill_options):
        """`fill_options`: the FILL_OPTIONS arguments of `MaskFilling`."""
        super().__init__(fill_mask_model, rate=replace_rate, top_k=replace_top_k, seed=seed, **fill_options)

    def candidates(self, text: str) -> List[Place]:
        """Each word of letters that is not a stop word."""
        return [p for p in words(text) if text[p.start:p.end].lower() not in self.stop_words]

    def render(self, token: str, original: str) -> str:
        return in_case_of(token, original) if self.model.tokenizer.lower_case else token
