"""Token insertion (thesis Sec. 4.1, "Вставка токенов"): [MASK] tokens put at random places of each
utterance and filled by a fill-mask model that sees the neighbouring utterances.

Following the released code (mylib/augmentations/insert.py `Inserter`, built by
mylib/datamakers/augmentations.py with fraction=0.5, score_threshold=0.005, k=5,
mask_utterance_level=True, fill_utterance_level=2): each utterance of n whitespace-separated
words gets ceil(`mask_rate` · n) masks, at most one before each word (`_insert`: the gaps are
drawn without replacement, none after the last word), and each is filled from the first
`insert_top_k` acceptable candidates as `mask_filling` describes. The fill is written into the
original string before the word, followed by a space, so the rest of the text is kept as it was.

Context. The released fill_utterance_level=2 cuts a dialogue into consecutive pairs of
utterances, (u1, u2), (u3, u4), …, and fills each pair's masks together: an utterance sees one
neighbour, after it or before it depending on its position. Here every utterance is filled with
`context_utterances` neighbours on each side (default 1: u_{i-1}, u_i, u_{i+1}), unmasked, so
each sees the same kind of context wherever it stands, and a fill never depends on another
utterance's masks.
"""
import os
import re
from typing import List, Union

from tfdialemb.augment.fill_mask import FillMaskModel
from tfdialemb.augment.mask_filling import FILL_OPTIONS, MaskFilling, Place
from tfdialemb.options import Option

MASK_RATE = Option("mask_rate", 0.5, "Token insertion: masks inserted per word of an utterance (released "
                   "code: fraction=0.5).", lower_bound=0.0, upper_bound=1.0)
INSERT_TOP_K = Option("insert_top_k", 5, "Token insertion: acceptable fill-mask candidates drawn from "
                      "(released code: k=5).", lower_bound=1)
OPTIONS = FILL_OPTIONS + (MASK_RATE, INSERT_TOP_K)
"""The flags of this operation, named as its constructor's arguments (the fill-mask ones
shared with the other token operation)."""
_WORD = re.compile(r"\S+")


class TokenInsertion(MaskFilling):
    """Inserts fill-mask predicted words before randomly drawn words of each utterance."""

    options = OPTIONS
    name = "insert"

    def __init__(self, fill_mask_model: Union[FillMaskModel, str, os.PathLike], seed: int = 0,
                 mask_rate: float = MASK_RATE.default, insert_top_k: int = INSERT_TOP_K.default, **fill_options):
        """`fill_options`: the FILL_OPTIONS arguments of `MaskFilling`."""
        super().__init__(fill_mask_model, rate=mask_rate, top_k=insert_top_k, seed=seed, **fill_options)

    def candidates(self, text: str) -> List[Place]:
        """The gap before each whitespace-separated word."""
        return [Place(m.start(), m.start()) for m in _WORD.finditer(text)]

    def render(self, token: str, original: str) -> str:
        return token + " "
