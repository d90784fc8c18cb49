"""Seeded sampling from bounded, uniform samples of a corpus: whole dialogues for the negatives
of example builders, utterances for fitting and evaluation sets."""
import array
import os
import tempfile
from typing import Callable, Collection, Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np

_ITEM = array.array("q").itemsize
"""A spilled dialogue is its header, int64 in the machine's order: where each of its n utterances
starts in its UTF-8 texts and where the last ends (n + 1 bounds), then each utterance's role id
when kept; then the texts."""


class DialoguePool:
    """A reservoir sample of at most `capacity` whole dialogues (their utterances and, where the
    caller gives them, their speakers' role ids), the source of negatives.

    The papers draw a negative as "an utterance from a randomly selected dialogue" (DialogueCSE
    Sec. 4.1): `sample` picks a dialogue uniformly, then one of its utterances uniformly, so a
    long dialogue weighs no more than a short one. The reservoir keeps every dialogue of the corpus
    equally likely while memory stays bounded: with `capacity` at least the corpus's number of
    dialogues, every utterance of the corpus can be a negative.

    Memory holds ids and offsets, 33 bytes per kept dialogue: the texts and role ids go to a spill
    file, an unnamed temporary file in `directory` (default the system's temporary directory) that
    disappears when the pool is closed or its process ends, and a drawn utterance is read back
    from it. `memory()` says what the pool holds where.
    """

    def __init__(self, capacity: int, seed: int, directory: Optional[str] = None):
        if capacity < 1:
            raise ValueError(f"pool capacity must be positive, got {capacity}")
        self.capacity = capacity
        self._rng = np.random.default_rng([seed, 0x5EED])
        self._spill = tempfile.TemporaryFile(dir=directory)  # pylint: disable=consider-using-with
        self._spilled = 0
        self._unflushed = False
        self.dialogue_indices = array.array("q")
        """Per kept dialogue, its index in the corpus."""
        self._offsets = array.array("q")
        self._turns = array.array("q")
        self._with_roles = array.array("b")
        self._text_bytes = array.array("q")
        self.seen = 0

    def _columns(self) -> Tuple[array.array, ...]:
        """The per-slot arrays: all the pool keeps in memory."""
        return self.dialogue_indices, self._offsets, self._turns, self._with_roles, self._text_bytes

    def close(self) -> None:
        """Deletes the spill file."""
        self._spill.close()

    def __enter__(self) -> "DialoguePool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add(self, dialogue_index: int, texts: Sequence[str], roles: Optional[Sequence[int]] = None) -> None:
        """Offers one dialogue's utterances `texts`, with their role ids when `roles` is given."""
        if roles is not None and len(roles) != len(texts):
            raise ValueError(f"{len(roles)} role ids for {len(texts)} utterances")
        if not texts:
            return
        self.seen += 1
        if len(self.dialogue_indices) < self.capacity:
            slot = len(self.dialogue_indices)
            for column in self._columns():
                column.append(0)
        else:
            slot = int(self._rng.integers(self.seen))
            if slot >= self.capacity:
                return
        encoded = [text.encode("utf-8") for text in texts]
        bounds = [0]
        for text in encoded:
            bounds.append(bounds[-1] + len(text))
        header = array.array("q", bounds + ([] if roles is None else [int(role) for role in roles]))
        self._spill.write(header.tobytes())
        self._spill.write(b"".join(encoded))
        self._unflushed = True
        self.dialogue_indices[slot] = dialogue_index
        self._offsets[slot] = self._spilled
        self._turns[slot] = len(texts)
        self._with_roles[slot] = roles is not None
        self._text_bytes[slot] = bounds[-1]
        self._spilled += header.itemsize * len(header) + bounds[-1]

    def sample(self, rng: np.random.Generator, count: int, exclude_dialogue: int,
               role: Optional[int] = None) -> List[str]:
        """`count` distinct utterances, each of a dialogue drawn uniformly among the pool's
        dialogues other than `exclude_dialogue` (and holding role `role`, when given), then
        drawn uniformly among that dialogue's utterances (of role `role`)."""
        if self._unflushed:
            self._spill.flush()
            self._unflushed = False

        def draw():
            if not self.dialogue_indices:
                return None
            slot = int(rng.integers(len(self.dialogue_indices)))
            if self.dialogue_indices[slot] == exclude_dialogue:
                return None
            turns = self._turns[slot]
            if role is None:
                bounds, texts_at = self._header(slot, turns + 1)
                position = int(rng.integers(turns))
            else:
                if not self._with_roles[slot]:
                    return None
                header, texts_at = self._header(slot, 2 * turns + 1)
                positions = [i for i, kept in enumerate(header[turns + 1:]) if kept == role]
                if not positions:
                    return None
                position = positions[int(rng.integers(len(positions)))]
                bounds = header
            start, end = bounds[position], bounds[position + 1]
            return (slot, position), self._read(texts_at + start, end - start).decode("utf-8")

        of_role = "" if role is None else f" with an utterance of role {role}"
        return _distinct_draws(count, draw, lambda: (
            f"the negative pool ({len(self.dialogue_indices)} dialogues) holds too few dialogues{of_role} other "
            f"than the example's to draw {count} negatives; use a larger corpus or fewer negatives"))

    def _header(self, slot: int, items: int) -> Tuple[array.array, int]:
        """The first `items` of a kept dialogue's header, and where its texts start."""
        header = array.array("q")
        header.frombytes(self._read(self._offsets[slot], items * _ITEM))
        texts_at = self._offsets[slot] + (self._turns[slot] * (1 + self._with_roles[slot]) + 1) * _ITEM
        return header, texts_at

    def _read(self, offset: int, size: int) -> bytes:
        data = os.pread(self._spill.fileno(), size, offset)
        if len(data) != size:
            raise OSError(f"negative pool spill file: read {len(data)} of {size} bytes at {offset}")
        return data

    def memory(self) -> Dict[str, int]:
        """What the pool holds: dialogues, utterances, the UTF-8 bytes of their texts (in the spill
        file) and the bytes of ids and offsets it keeps in memory."""
        return {"dialogues": len(self.dialogue_indices),
                "utterances": sum(self._turns),
                "text_bytes_on_disk": sum(self._text_bytes),
                "index_bytes_in_memory": sum(column.itemsize * len(column) for column in self._columns()),
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
