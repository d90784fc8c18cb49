"""Masked-LM examples for continued pre-training: one sequence per utterance or per dialogue.

Masking is left to the input pipeline, so every epoch sees fresh masks.
"""
import dataclasses
from typing import Any, Dict, Iterator, Optional

import numpy as np

from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import SEQUENCE
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue

UNITS = ("utterance", "dialogue")


@register
class MlmBuilder(ExampleBuilder):
    """`unit=utterance`: each turn alone; `unit=dialogue`: the turns joined with [SEP]."""

    name = "mlm"
    schema = {"input_word_ids": SEQUENCE}

    @dataclasses.dataclass(frozen=True)
    class Params:
        unit: str = "utterance"

    def validate(self) -> None:
        if self.params.unit not in UNITS:
            raise ValueError(f"mlm unit must be one of {UNITS}, got {self.params.unit!r}")

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        texts = [turn.text for turn in dialogue.turns]
        if self.params.unit == "dialogue":
            texts = [" [SEP] ".join(texts)]
        for text in texts:
            yield {"input_word_ids": text}
