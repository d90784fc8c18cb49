"""Every utterance of a dialogue, in order: one example per dialogue.

The augmentation thesis' auxiliary models (appendix 1) draw their training inputs from whole
dialogues afresh on every pass, in the input pipeline (`tfdialemb.data.context_response_pairs`,
`tfdialemb.data.utterance_shuffle`): the context-response model one (context, response) pair per
dialogue, as the released `ContextResponseDataset` draws one per dialogue per epoch
(voorhs/dialogue-augmentation mylib/datasets/pairs_dataset.py), so the other pairs of a batch come
from other dialogues ("negatives were not taken from the same dialogue"); the sorting model the
dialogue's utterances in a fresh random order (mylib/datasets/source_dataset.py gives it whole
dialogues). Storing the dialogue once lets every pass draw anew.
"""
from typing import Any, Dict, Iterator, Optional

import numpy as np

from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import SEQUENCE_LIST
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue

FEATURE = "utterances"


@register
class UtterancesBuilder(ExampleBuilder):
    """`utterances`: the dialogue's turn texts, each `[CLS] pieces [SEP]`."""

    name = "utterances"
    schema = {FEATURE: SEQUENCE_LIST}

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        yield {FEATURE: [turn.text for turn in dialogue.turns]}
