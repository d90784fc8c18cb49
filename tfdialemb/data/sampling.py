"""Seeded negative sampling from a bounded, uniform sample of the corpus's utterances."""
from typing import List, Sequence

import numpy as np


class UtterancePool:
    """A reservoir sample of at most `capacity` utterances, each with its dialogue's index.

    Methods draw negatives "from random dialogues": a reservoir keeps every utterance of the
    corpus equally likely while memory stays bounded however large the corpus is.
    """

    def __init__(self, capacity: int, seed: int):
        if capacity < 1:
            raise ValueError(f"pool capacity must be positive, got {capacity}")
        self.capacity = capacity
        self._rng = np.random.default_rng([seed, 0x5EED])
        self.texts: List[str] = []
        self.dialogues: List[int] = []
        self.seen = 0

    def add(self, dialogue_index: int, texts: Sequence[str]) -> None:
        for text in texts:
            self.seen += 1
            if len(self.texts) < self.capacity:
                self.texts.append(text)
                self.dialogues.append(dialogue_index)
                continue
            slot = int(self._rng.integers(self.seen))
            if slot < self.capacity:
                self.texts[slot] = text
                self.dialogues[slot] = dialogue_index

    def sample(self, rng: np.random.Generator, count: int, exclude_dialogue: int) -> List[str]:
        """`count` distinct pool entries from dialogues other than `exclude_dialogue`."""
        if count == 0:
            return []
        chosen: List[str] = []
        used = set()
        attempts = 0
        while len(chosen) < count:
            attempts += 1
            if attempts > 50 * count + 100:
                raise ValueError(
                    f"the utterance pool ({len(self.texts)} utterances) holds too few utterances of "
                    f"other dialogues to draw {count} negatives; use a larger corpus or fewer negatives"
                )
            slot = int(rng.integers(len(self.texts)))
            if slot in used or self.dialogues[slot] == exclude_dialogue:
                continue
            used.add(slot)
            chosen.append(self.texts[slot])
        return chosen
