"""FGC examples (FGC Sec. 3-4): a context with one true and one false response.

IVC contrasts the four passes (c, r+), (c, r̄+), (c, r−), (c, r̄−) of one context, so every
example holds a context, a positive and a negative response; augmentations are drawn later, in
the input pipeline, fresh every epoch. Two kinds of training file:
  - a response-selection file, as the `ubuntu` / `douban` converters write it (the last turn is
    the candidate, `labels.label` 0/1, `labels.context_id` shared by the consecutive lines of one
    context; Ubuntu and Douban train hold one positive and one negative per context): each
    positive of a context is paired with the context's negatives in file order, `negatives` of
    them, cycling; a context without negatives draws them from the utterance pool, one without
    a positive gives nothing;
  - any other dialogue file: every turn k ≥ 1 is the positive of the context u_1..u_{k-1}, paired
    with `negatives` utterances drawn from other dialogues (1:1, as Ubuntu train, by default).
Every pairing is one example: (context turns, positive, negative). The whole context is stored,
each turn and response bounded to max_length - 2 pieces; packing and truncation happen at
batch time (`tfdialemb.text.pair_packing`), after augmentation has changed the response.

The augmentation works on words. With `words="wordpiece"` a word is what BERT's basic tokenizer
splits on whitespace and punctuation (a piece and its `##` pieces), right for English. Chinese
BERT vocabularies split text into characters, so `words="jieba"` segments each response with
jieba (an optional dependency, `pip install jieba`) and stores it as one row per word, which the
augmentation moves and deletes as a whole.
"""
import dataclasses
from typing import Any, Dict, Iterator, List, Optional, Union

import numpy as np

from tfdialemb.converters.response_selection import is_selection_line
from tfdialemb.data.choices import WORD_UNITS
from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import SEQUENCE, SEQUENCE_LIST
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue
from tfdialemb.text.chinese_words import load_jieba

@dataclasses.dataclass
class _Context:
    """The lines of one context of a response-selection file, gathered until the next one."""
    context_id: Any
    index: int
    turns: List[str]
    positives: List[str] = dataclasses.field(default_factory=list)
    negatives: List[str] = dataclasses.field(default_factory=list)


def jieba_segmenter():
    """jieba's `lcut`, quiet; a clear error when jieba is not installed."""
    return load_jieba("words=jieba (--fgc_words=jieba)").lcut


@register
class FgcBuilder(ExampleBuilder):
    name = "fgc"
    schema = {"context": SEQUENCE_LIST, "positive": SEQUENCE, "negative": SEQUENCE}
    uses_pool = True

    @dataclasses.dataclass(frozen=True)
    class Params:
        negatives: int = 1
        words: str = "wordpiece"

    def __init__(self, params=None):
        super().__init__(params)
        self._selection: Optional[bool] = None
        self._pending: Optional[_Context] = None
        self._segment = None
        if self.params.words == "jieba":
            self.schema = {"context": SEQUENCE_LIST, "positive": SEQUENCE_LIST, "negative": SEQUENCE_LIST}
            self._segment = jieba_segmenter()

    def validate(self) -> None:
        if self.params.negatives < 1:
            raise ValueError(f"fgc parameters out of range: {self.params}")
        if self.params.words not in WORD_UNITS:
            raise ValueError(f"fgc words must be one of {WORD_UNITS}, got {self.params.words!r}")

    def _response(self, text: str) -> Union[str, List[str]]:
        """The response as stored: its text, or its jieba words (whitespace dropped)."""
        if self._segment is None:
            return text
        return [word for word in self._segment(text) if word.strip()] or [text]

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        if index == 0:
            self._selection, self._pending = None, None
        selection = is_selection_line(dialogue)
        if self._selection is None:
            self._selection = selection
        elif selection != self._selection:
            kind = "a response-selection line" if selection else "a plain dialogue"
            raise ValueError(f"dialogue {dialogue.id!r} is {kind} unlike the lines before it; a training "
                             "file is either all response-selection lines or all dialogues")
        texts = [turn.text for turn in dialogue.turns]
        if not selection:
            for k in range(1, len(texts)):
                positive = self._response(texts[k])
                for negative in pool.sample(rng, self.params.negatives, exclude_dialogue=index):
                    yield {"context": texts[:k], "positive": positive, "negative": self._response(negative)}
            return
        label, context_id = dialogue.labels["label"], dialogue.labels["context_id"]
        if label not in (0, 1):
            raise ValueError(f"dialogue {dialogue.id!r}: labels.label must be 0 or 1, got {label!r}")
        if self._pending is None or self._pending.context_id != context_id:
            yield from self.finish(rng, pool)
            self._pending = _Context(context_id, index, texts[:-1])
        (self._pending.positives if label == 1 else self._pending.negatives).append(texts[-1])

    def finish(self, rng: np.random.Generator, pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        count = self.params.negatives
        for number, positive in enumerate(pending.positives):
            if pending.negatives:
                negatives = [pending.negatives[(number * count + m) % len(pending.negatives)]
                             for m in range(count)]
            else:
                negatives = pool.sample(rng, count, exclude_dialogue=pending.index)
            response = self._response(positive)
            for negative in negatives:
                yield {"context": pending.turns, "positive": response, "negative": self._response(negative)}
