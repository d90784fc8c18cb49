"""Domain-adaptive post-training examples (BERT-DPT, the base FGC reports as strongest): a dialogue
context and the utterance that follows it or a random one, for masked-LM plus next-sentence
prediction.

For every turn k ≥ 1 of a dialogue: `context` = u_1 … u_k-1 and, with probability 1/2, `next` =
u_k with `next_sentence_labels` 0 (BERT's IsNext), else an utterance drawn from other dialogues
with label 1. With probability `short_context_prob` (0.1, google-research/bert's short_seq_prob)
the context keeps only a random number of its most recent turns, so that some inputs are shorter
than the maximum. On a converted response-selection file (`ubuntu`, `douban`) only the positive
lines are dialogues: a negative line's last turn does not follow its context. Masks are drawn later, in the input pipeline, fresh on every pass.
taesunwhang/BERT-ResSel data/create_bert_post_training_data.py instead fills 512-token chunks of
consecutive utterances, splits each at a random utterance into A and B, and fixes ten maskings at
build time (dupe_factor 10); here every turn is a B once, each after its whole history.
"""
import dataclasses
from typing import Any, Dict, Iterator, Optional

import numpy as np

from tfdialemb.converters.response_selection import is_selection_line
from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import INT, SEQUENCE, SEQUENCE_LIST
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue

IS_NEXT, RANDOM_NEXT = 0, 1
"""BERT's next-sentence labels, as the heads of pre-trained checkpoints were trained with."""


@register
class MlmNspBuilder(ExampleBuilder):
    name = "mlm_nsp"
    schema = {"context": SEQUENCE_LIST, "next": SEQUENCE, "next_sentence_labels": INT}
    uses_pool = True

    @dataclasses.dataclass(frozen=True)
    class Params:
        short_context_prob: float = 0.1

    def validate(self) -> None:
        p = self.params
        if not 0.0 <= p.short_context_prob <= 1.0:
            raise ValueError(f"mlm_nsp parameters out of range: {p}")

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        if is_selection_line(dialogue) and dialogue.labels["label"] != 1:
            return
        texts = [turn.text for turn in dialogue.turns]
        for k in range(1, len(texts)):
            context = texts[:k]
            if rng.random() < self.params.short_context_prob:
                context = context[int(rng.integers(0, k)):]
            if rng.random() < 0.5:
                yield {"context": context, "next": texts[k], "next_sentence_labels": IS_NEXT}
            else:
                yield {"context": context, "next": pool.sample(rng, 1, exclude_dialogue=index)[0],
                       "next_sentence_labels": RANDOM_NEXT}
