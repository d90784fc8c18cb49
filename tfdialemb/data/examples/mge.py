"""DialogueCSE examples: a response, its bidirectional context, and negatives from other dialogues.

For every turn k with at least one other turn, the response r = u_k, up to `context_before`
preceding and `context_after` following utterances (chronological order, DialogueCSE Sec. 3:
C = {u_1..u_{k-1}, u_{k+1}..u_t}), and candidates [r, n_1, ..., n_N] with the negatives drawn
from the utterance pool excluding r's own dialogue (Sec. 4.1). More context and negatives can be
stored than a model uses, so `--turns` and `--negatives` can change without a rebuild.
"""
import dataclasses
from typing import Any, Dict, Iterator, Optional

import numpy as np

from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import SEQUENCE_LIST
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue


@register
class MgeBuilder(ExampleBuilder):
    name = "mge"
    schema = {
        "context_before": SEQUENCE_LIST,
        "context_after": SEQUENCE_LIST,
        "candidates": SEQUENCE_LIST,
    }
    uses_pool = True

    @dataclasses.dataclass(frozen=True)
    class Params:
        negatives: int = 9
        context_before: int = 6
        context_after: int = 6

    def validate(self) -> None:
        p = self.params
        if p.negatives < 1 or p.context_before < 0 or p.context_after < 0:
            raise ValueError(f"mge parameters out of range: {p}")
        if p.context_before + p.context_after == 0:
            raise ValueError("mge needs some context: context_before + context_after must be > 0")

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        texts = [turn.text for turn in dialogue.turns]
        p = self.params
        for k, response in enumerate(texts):
            before = texts[max(0, k - p.context_before):k]
            after = texts[k + 1:k + 1 + p.context_after]
            if not before and not after:
                continue
            yield {
                "context_before": before,
                "context_after": after,
                "candidates": [response] + pool.sample(rng, p.negatives, exclude_dialogue=index),
            }
