"""Seeded sampling from bounded, uniform samples of a corpus: whole dialogues for the negatives
of example builders, utterances for fitting and evaluation sets."""
from typing import Callable, Collection, Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np


class DialoguePool:
    """A reservoir sample of at most `capacity` whole dialogues (their utterances and, where the
    caller gives them, their speakers' role ids), the source of negatives.

    The papers draw a negative as "an utterance from a randomly selected dialogue" (DialogueCSE
    Sec. 4.1): `sample` picks a dialogue uniformly, then one of its utterances uniformly, so a
    long dialogue weighs no more than a short one. The reservoir keeps every dialogue of the corpus
    equally likely while memory stays bounded: with `capacity` at least the corpus's number of
    dialogues, every utterance of the corpus can be a negative. `memory()` says what it holds.
    """

    def __init__(self, capacity: int, seed: int):
        if capacity < 1:
            raise ValueError(f"pool capacity must be positive, got {capacity}")
        self.capacity = capacity
        self._rng = np.random.default_rng([seed, 0x5EED])
        self.dialogues: List[Tuple[int, Tuple[str, ...], Dict[int, Tuple[int, ...]]]] = []
        """(dialogue index, utterances, each role's utterance positions)."""
        self.seen = 0

    def add(self, dialogue_index: int, texts: Sequence[str], roles: Optional[Sequence[int]] = None) -> None:
        """Offers one dialogue's utterances `texts`, with their role ids when `roles` is given."""
        if roles is not None and len(roles) != len(texts):
            raise ValueError(f"{len(roles)} role ids for {len(texts)} utterances")
        if not texts:
            return
        by_role: Dict[int, Tuple[int, ...]] = {}
        for position, role in enumerate(roles or ()):
            by_role[int(role)] = by_role.get(int(role), ()) + (position,)
        entry = (dialogue_index, tuple(texts), by_role)
        self.seen += 1
        if len(self.dialogues) < self.capacity:
            self.dialogues.append(entry)
            return
        slot = int(self._rng.integers(self.seen))
        if slot < self.capacity:
            self.dialogues[slot] = entry

    def sample(self, rng: np.random.Generator, count: int, exclude_dialogue: int,
               role: Optional[int] = None) -> List[str]:
        """`count` distinct utterances, each of a dialogue drawn uniformly among the pool's
        dialogues other than `exclude_dialogue` (and holding role `role`, when given), then
        drawn uniformly among that dialogue's utterances (of role `role`)."""
        def draw():
            if not self.dialogues:
                return None
            slot = int(rng.integers(len(self.dialogues)))
            index, texts, by_role = self.dialogues[slot]
            positions = range(len(texts)) if role is None else by_role.get(role, ())
            if index == exclude_dialogue or not positions:
                return None
            position = positions[int(rng.integers(len(positions)))]
            return (slot, position), texts[position]

        of_role = "" if role is None else f" with an utterance of role {role}"
        return _distinct_draws(count, draw, lambda: (
            f"the negative pool ({len(self.dialogues)} dialogues) holds too few dialogues{of_role} other than "
            f"the example's to draw {count} negatives; use a larger corpus or fewer negatives"))

    def memory(self) -> Dict[str, int]:
        """What the pool holds: dialogues, utterances and their UTF-8 bytes (the text itself;
        Python adds about 50 bytes per utterance)."""
        return {"dialogues": len(self.dialogues),
                "utterances": sum(len(texts) for _, texts, _ in self.dialogues),
                "text_bytes": sum(len(text.encode("utf-8")) for _, texts, _ in self.dialogues for text in texts),
                "corpus_dialogues_seen": self.seen}


class UtterancePool:
    """A reservoir sample of at most `capacity` utterances, each with its dialogue's index: a
    uniform sample of a corpus's utterances in bounded memory (e.g. to fit a whitening)."""

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

    def sample(self, rng: np.random.Generator, count: int, exclude_dialogue: int,
               exclude_texts: Collection[str] = ()) -> List[str]:
        """`count` pool entries of distinct texts from dialogues other than `exclude_dialogue`,
        none of them one of `exclude_texts` (e.g. the true candidate a negative must differ from:
        an equal text would tie with it)."""
        excluded = set(exclude_texts)

        def draw():
            if not self.texts:
                return None
            slot = int(rng.integers(len(self.texts)))
            text = self.texts[slot]
            return None if self.dialogues[slot] == exclude_dialogue or text in excluded else (text, text)

        return _distinct_draws(count, draw, lambda: (
            f"the utterance pool ({len(self.texts)} utterances) holds too few distinct utterances of other "
            f"dialogues to draw {count} negatives; use a larger corpus or fewer negatives"))


def _distinct_draws(count: int, draw: Callable[[], Optional[Tuple[Hashable, str]]],
                    shortage: Callable[[], str]) -> List[str]:
    """`count` texts from `draw()` ((key, text), or None for a draw to discard), no key twice;
    a ValueError saying `shortage()` when too many draws in a row come to nothing."""
    chosen: List[str] = []
    used = set()
    attempts = 0
    while len(chosen) < count:
        attempts += 1
        if attempts > 50 * count + 100:
            raise ValueError(shortage())
        drawn = draw()
        if drawn is None or drawn[0] in used:
            continue
        used.add(drawn[0])
        chosen.append(drawn[1])
    return chosen
