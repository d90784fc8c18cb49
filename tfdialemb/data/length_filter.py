"""Dialogues dropped by token length, as the augmentation thesis' released data is filtered
(voorhs/dialogue-augmentation) rather than cut:

- an utterance longer than a bound (mylib/datamakers/source.py:64 `is_above_bound`: the tokens of
  `tokenizer(utterance)`, its two special tokens included; 96 mpnet tokens, 60 for
  Disambiguation) drops its dialogue;
- a dialogue longer than a bound as the thesis' encoder reads it (filter_dataset_by_length.py and
  mylib/datamakers/filter_by_length.py: `BaselineDialogueEncoder._tokenize`, "0 text[SEP]1 text"
  in [CLS] ... [SEP]; 512) is dropped: the SGD probe sets (bash-scripts/dataset/
  filter-benchmarks.sh), and with its views an augmented training example (the original and every
  view must fit, `is_short_enough`).

Speakers are numbered by first appearance (`dialogue.capped_roles`), as augcl writes them.
"""
import collections
from typing import Iterable, Iterator, List, Sequence

from tfdialemb.dialogue import Dialogue, capped_roles
from tfdialemb.text.tokenizer import BertTokenizer
from tfdialemb.text.dialogue_packing import speaker_prefix_lengths, uncut_length

CHUNK = 256
"""Dialogues tokenized per call."""


def thesis_layout_length(turn_lengths: Sequence[int], roles: Sequence[int], prefix_lengths: Sequence[int]) -> int:
    """Tokens of "[CLS] r_0 t_0 [SEP] r_1 t_1 [SEP] ... r_n t_n [SEP]" from each turn's pieces and
    role: the packer's speaker-prefixed layout with its final separator (`uncut_length`)."""
    return uncut_length(turn_lengths, roles, prefix_lengths, final_separator=True)


class TokenLengthFilter:
    """Keeps the dialogues within `max_utterance_tokens` per utterance (special tokens counted)
    and `max_dialogue_tokens` in the thesis' layout (0: no bound); `dropped` counts the rest by
    reason."""

    def __init__(self, tokenizer: BertTokenizer, max_utterance_tokens: int = 0, max_dialogue_tokens: int = 0,
                 num_roles: int = 2):
        if max_utterance_tokens < 0 or max_dialogue_tokens < 0:
            raise ValueError(f"token bounds must be positive (0: none), got {max_utterance_tokens} and "
                             f"{max_dialogue_tokens}")
        self.tokenizer = tokenizer
        self.max_utterance_tokens = max_utterance_tokens
        self.max_dialogue_tokens = max_dialogue_tokens
        self.num_roles = num_roles
        self.prefix_lengths = speaker_prefix_lengths(tokenizer, num_roles)
        self.dropped: collections.Counter = collections.Counter()

    def __call__(self, dialogues: Iterable[Dialogue]) -> Iterator[Dialogue]:
        chunk: List[Dialogue] = []
        for dialogue in dialogues:
            chunk.append(dialogue)
            if len(chunk) == CHUNK:
                yield from self._kept(chunk)
                chunk = []
        yield from self._kept(chunk)

    def _kept(self, chunk: List[Dialogue]) -> Iterator[Dialogue]:
        if not chunk:
            return
        lengths = iter(len(p) for p in self.tokenizer.tokenize(
            [turn.text for d in chunk for turn in d.turns]).to_list())
        for dialogue in chunk:
            turns = [next(lengths) for _ in dialogue.turns]
            if self.max_utterance_tokens and max(turns) + 2 > self.max_utterance_tokens:
                self.dropped[f"an utterance over {self.max_utterance_tokens} tokens"] += 1
            elif self.max_dialogue_tokens and thesis_layout_length(
                    turns, capped_roles(dialogue, self.num_roles), self.prefix_lengths) > self.max_dialogue_tokens:
                self.dropped[f"over {self.max_dialogue_tokens} tokens"] += 1
            else:
                yield dialogue
