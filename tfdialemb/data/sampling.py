"""Seeded negative sampling from a bounded, uniform sample of the corpus's utterances."""
from typing import Dict, List, Optional, Sequence

import numpy as np


class UtterancePool:
    """A reservoir sample of at most `capacity` utterances, each with its dialogue's index and,
    where the caller gives them, its speaker's role id.

    Methods draw negatives "from random dialogues": a reservoir keeps every utterance of the
    corpus equally likely while memory stays bounded however large the corpus is. Restricted to
    one role, the reservoir is still a uniform sample of that role's utterances.
    """

    def __init__(self, capacity: int, seed: int):
        if capacity < 1:
            raise ValueError(f"pool capacity must be positive, got {capacity}")
        self.capacity = capacity
        self._rng = np.random.default_rng([seed, 0x5EED])
        self.texts: List[str] = []
        self.dialogues: List[int] = []
        self.roles: List[Optional[int]] = []
        self.seen = 0
        self._slots_of_role: Optional[Dict[int, np.ndarray]] = None

    def add(self, dialogue_index: int, texts: Sequence[str], roles: Optional[Sequence[int]] = None) -> None:
        """Offers the utterances `texts` of one dialogue, with their role ids when `roles` is given."""
        if roles is not None and len(roles) != len(texts):
            raise ValueError(f"{len(roles)} role ids for {len(texts)} utterances")
        self._slots_of_role = None
        for position, text in enumerate(texts):
            role = None if roles is None else int(roles[position])
            self.seen += 1
            if len(self.texts) < self.capacity:
                self.texts.append(text)
                self.dialogues.append(dialogue_index)
                self.roles.append(role)
                continue
            slot = int(self._rng.integers(self.seen))
            if slot < self.capacity:
                self.texts[slot] = text
                self.dialogues[slot] = dialogue_index
                self.roles[slot] = role

    def sample(self, rng: np.random.Generator, count: int, exclude_dialogue: int,
               role: Optional[int] = None) -> List[str]:
        """`count` distinct pool entries from dialogues other than `exclude_dialogue`, only of
        role id `role` when it is given."""
        if count == 0:
            return []
        slots = None if role is None else self._role_slots(role)
        size = len(self.texts) if slots is None else len(slots)
        chosen: List[str] = []
        used = set()
        attempts = 0
        while len(chosen) < count:
            attempts += 1
            if size == 0 or attempts > 50 * count + 100:
                held = f"{len(self.texts)} utterances" + ("" if role is None else f", {size} of role {role}")
                raise ValueError(
                    f"the utterance pool ({held}) holds too few utterances of other dialogues to draw "
                    f"{count} negatives; use a larger corpus or fewer negatives"
                )
            drawn = int(rng.integers(size))
            slot = drawn if slots is None else int(slots[drawn])
            if slot in used or self.dialogues[slot] == exclude_dialogue:
                continue
            used.add(slot)
            chosen.append(self.texts[slot])
        return chosen

    def _role_slots(self, role: int) -> np.ndarray:
        """The slots holding utterances of `role`, indexed once per filling of the pool."""
        if self._slots_of_role is None:
            by_role: Dict[int, List[int]] = {}
            for slot, slot_role in enumerate(self.roles):
                if slot_role is not None:
                    by_role.setdefault(slot_role, []).append(slot)
            self._slots_of_role = {r: np.asarray(s, dtype=np.int64) for r, s in by_role.items()}
        return self._slots_of_role.get(role, np.zeros(0, dtype=np.int64))
