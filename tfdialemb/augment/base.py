"""What every dialogue augmentation is: a named, seeded, batched operation on whole dialogues.

An operation maps a batch of dialogues to one augmented dialogue each, or None where it does not
apply (e.g. cropping a dialogue shorter than its minimum). Every random choice for a dialogue comes
from that dialogue's own generator (`dialogue_rng`: the run's seed and the dialogue's id), so the
result does not depend on the batch a dialogue falls in, nor on the dialogues before it: a resumed
run writes exactly what an uninterrupted one does.

The augmented dialogue keeps the original's id and labels and records what was done in
`labels.source_id` (the original's id) and `labels.augmentations` (the operations applied, in
order); `Chain` composes operations on one dialogue (the thesis tried compositions, Sec. 4.2).
"""
import hashlib
from typing import List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.dialogue import Dialogue, Turn

SOURCE_ID = "source_id"
AUGMENTATIONS = "augmentations"
MODEL_NEEDS = ("fill_mask_model", "translation_models", "similarity")
"""The models an operation may need, by the command-line flag family that provides them
(`similarity`: --context_response_model or --sentence_encoder)."""


def dialogue_rng(seed: int, dialogue_id: str, salt: str = "") -> np.random.Generator:
    """The generator of one dialogue under one operation: a function of (seed, id, salt) only."""
    digest = hashlib.sha256(f"{salt}\0{dialogue_id}".encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def source_id(dialogue: Dialogue) -> str:
    """The id of the original dialogue `dialogue` was made from (its own id if original); a
    ValueError names a `source_id` label that is not a string."""
    source = dialogue.labels.get(SOURCE_ID, dialogue.id)
    if not isinstance(source, str):
        raise ValueError(f"dialogue {dialogue.id!r}: labels.{SOURCE_ID} must be the original's id, got {source!r}")
    return source


def applied(dialogue: Dialogue) -> Tuple[str, ...]:
    """The operations already applied to `dialogue`, in order; a ValueError names an
    `augmentations` label that is not a list of names (a bare string would read as its letters)."""
    operations = dialogue.labels.get(AUGMENTATIONS, [])
    if not isinstance(operations, list) or not all(isinstance(operation, str) for operation in operations):
        raise ValueError(f"dialogue {dialogue.id!r}: labels.{AUGMENTATIONS} must be a list of operation names, "
                         f"got {operations!r}")
    return tuple(operations)


def augmented(original: Dialogue, turns: Sequence[Turn], operation: str) -> Dialogue:
    """`original` with new `turns`, its labels extended by `operation`."""
    if len(turns) < 1:
        raise ValueError(f"{operation} left dialogue {original.id!r} without turns")
    labels = dict(original.labels)
    labels[SOURCE_ID] = source_id(original)
    labels[AUGMENTATIONS] = list(applied(original)) + [operation]
    return Dialogue(original.id, tuple(turns), labels)


def with_texts(original: Dialogue, texts: Sequence[str], operation: str) -> Dialogue:
    """`original` with each turn's text replaced, speakers and other turn fields kept."""
    if len(texts) != len(original.turns):
        raise ValueError(f"{operation}: {len(texts)} texts for {len(original.turns)} turns")
    return augmented(original, [Turn(t.speaker, text, t.fields) for t, text in zip(original.turns, texts)],
                     operation)


class Augmentation:
    """Base of every operation: `name`, `needs` (a subset of MODEL_NEEDS) and `augment`."""

    name: str = ""
    needs: Tuple[str, ...] = ()

    def __init__(self, seed: int = 0):
        self.seed = seed

    def rng(self, dialogue: Dialogue) -> np.random.Generator:
        """This operation's generator for `dialogue` (salted by the name and the operations
        already applied, so a chain draws afresh at every step)."""
        return dialogue_rng(self.seed, dialogue.id, "/".join(applied(dialogue) + (self.name,)))

    def augment(self, dialogues: Sequence[Dialogue]) -> List[Optional[Dialogue]]:
        """One augmented dialogue per input, None where the operation does not apply."""
        raise TypeError(f"{type(self).__name__} must define augment()")


class Chain(Augmentation):
    """Operations applied one after the other to the same dialogue; one that does not apply is
    passed over, and the result is None only when none applied."""

    def __init__(self, operations: Sequence[Augmentation]):
        if not operations:
            raise ValueError("a chain needs at least one operation")
        super().__init__(operations[0].seed)
        self.operations = tuple(operations)
        self.name = "+".join(op.name for op in operations)
        self.needs = tuple(dict.fromkeys(n for op in operations for n in op.needs))

    def augment(self, dialogues: Sequence[Dialogue]) -> List[Optional[Dialogue]]:
        current: List[Dialogue] = list(dialogues)
        changed = [False] * len(current)
        for operation in self.operations:
            for i, result in enumerate(operation.augment(current)):
                if result is not None:
                    current[i], changed[i] = result, True
        return [d if c else None for d, c in zip(current, changed)]
