"""Siamese-network baseline examples (DialogueCSE Sec. 5.2.2): a context, a response, negatives.

For every turn k ≥ 1 the response r = u_k gets two contexts, so one build serves both baselines:
  - `previous` = u_{k-1}, SiameseBERT_S's single-turn input (Yang et al., 2018);
  - `context` = up to `context_turns` preceding utterances flattened into one text joined with
    " [SEP] " (SiameseBERT_M, after Henderson et al., 2020), most recent first:
    u_{k-1} [SEP] u_{k-2} [SEP] ... The build keeps the first max_length - 2 tokens of a text,
    so a long context loses its oldest turns, never u_{k-1}; Multi-Context ConveRT orders its
    flattened extra context from most recent to oldest too (polyai-models README). Unlike mge's
    turns, the flattened context is fixed here: another `context_turns` needs a rebuild.
Candidates are [r, n_1, ..., n_N] with the negatives drawn from the utterance pool excluding r's
own dialogue, as for DialogueCSE (Sec. 4.1), so the baselines and MGE see the same negatives.
"""
import dataclasses
from typing import Any, Dict, Iterator, Optional

import numpy as np

from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import SEQUENCE, SEQUENCE_LIST
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue

TURN_SEPARATOR = " [SEP] "


@register
class SiameseBuilder(ExampleBuilder):
    name = "siamese"
    schema = {
        "previous": SEQUENCE,
        "context": SEQUENCE,
        "candidates": SEQUENCE_LIST,
    }
    uses_pool = True

    @dataclasses.dataclass(frozen=True)
    class Params:
        negatives: int = 9
        context_turns: int = 3

    def validate(self) -> None:
        p = self.params
        if p.negatives < 1 or p.context_turns < 1:
            raise ValueError(f"siamese parameters out of range: {p}")

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        texts = [turn.text for turn in dialogue.turns]
        p = self.params
        for k in range(1, len(texts)):
            recent_first = texts[k - 1::-1][: p.context_turns]
            yield {
                "previous": texts[k - 1],
                "context": TURN_SEPARATOR.join(recent_first),
                "candidates": [texts[k]] + pool.sample(rng, p.negatives, exclude_dialogue=index),
            }
