"""Token insertion (thesis Sec. 4.1, "Вставка токенов"): [MASK] tokens put at random places of each
utterance and filled by a fill-mask model that sees the neighbouring utterances.

Following the released code (mylib/augmentations/insert.py `Inserter`, built by
mylib/datamakers/augmentations.py with fraction=0.5, score_threshold=0.005, k=5,
mask_utterance_level=True, fill_utterance_level=2): each utterance of n whitespace-separated
words gets ceil(`mask_rate` · n) masks, at most one before each word (`_insert`: the gaps are
drawn without replacement, none after the last word), and each is filled from the first
`insert_top_k` acceptable candidates as `mask_filling` describes. The fill is written into the
original string before the word, followed by a space, so the rest of the text is kept as it was.

Context: `mask_filling` (`fill_context`; released: consecutive pairs of utterances filled
together). Fills less probable than `min_fill_prob` (released score_threshold=0.005) are rejected.
"""
import re
from typing import Any, List, Sequence

from tfdialemb.augment.mask_filling import FILL_OPTIONS, MaskFilling, Place
from tfdialemb.core.options import Option

MIN_FILL_PROB = Option("min_fill_prob", 0.005, "Token insertion: fill-mask candidates less probable than "
                       "this are rejected (released code: score_threshold=0.005).", lower_bound=0.0,
                       upper_bound=1.0)

MASK_RATE = Option("mask_rate", 0.5, "Token insertion: masks inserted per word of an utterance (released "
                   "code: fraction=0.5).", lower_bound=0.0, upper_bound=1.0)
INSERT_TOP_K = Option("insert_top_k", 5, "Token insertion: acceptable fill-mask candidates drawn from "
                      "(released code: k=5).", lower_bound=1)
OPTIONS = FILL_OPTIONS + (MASK_RATE, INSERT_TOP_K, MIN_FILL_PROB)
"""The flags of this operation, named as its constructor's arguments (the fill-mask ones
shared with the other token operation)."""
_WORD = re.compile(r"\S+")


class TokenInsertion(MaskFilling):
    """Inserts fill-mask predicted words before randomly drawn words of each utterance."""

    options = OPTIONS
    name = "insert"

    def __init__(self, fill_mask_model: Any, seed: int = 0,
                 mask_rate: float = MASK_RATE.default, insert_top_k: int = INSERT_TOP_K.default,
                 min_fill_prob: float = MIN_FILL_PROB.default, **fill_options):
        """`fill_options`: the FILL_OPTIONS arguments of `MaskFilling`."""
        super().__init__(fill_mask_model, rate=mask_rate, top_k=insert_top_k, min_fill_prob=min_fill_prob,
                         seed=seed, **fill_options)

    def candidates(self, texts: Sequence[str]) -> List[List[Place]]:
        """The gap before each whitespace-separated word of each utterance."""
        return [[Place(m.start(), m.start()) for m in _WORD.finditer(text)] for text in texts]

    def render(self, token: str, original: str) -> str:
        return token + " "
