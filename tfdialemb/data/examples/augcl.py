"""augcl training examples (the augmentation thesis, Sec. 4.3): a dialogue and its augmented views.

The training file is what `python -m tfdialemb.augment` writes: every original dialogue
(`labels.augmentations` empty) immediately followed by its views (`labels.source_id` the
original's id, `labels.augmentations` the operations applied). The build streams it and groups
consecutive lines of one source id into one example, feature `dialogues` = [the original,
view_1, ..., view_V], each kept as its (role id, text) turns: the positive pairs are cut and
packed in the input pipeline (`tfdialemb.data.contrastive_pairs`), where the on-the-fly
transforms take parts of the original. A plain dialogue file (no views) works too: every
example is an original alone, for the on-the-fly transforms only.

Role ids are the original's speakers numbered by first appearance (`tfdialemb.dialogue.role_ids`),
speakers past `max_roles` folded into the last; a view's turns keep their speakers' ids, so a
shuffled view that opens with the second speaker still writes "1" first, as the released code
keeps each turn's speaker field (mylib/datasets/contrastive_dataset.py). The released code numbers
by DialogStudio's field instead (0 the user, 1 the system: mylib/datamakers/source.py): the same
ids for every dialogue that opens with the user, swapped for one that opens with the system (a
DialogStudio log whose first user utterance is empty).

An example is left out when no pair can be drawn from it: with `min_views=1` (training on
precomputed pairs only) an original without views, and always an original of one turn without
views (the transforms split the original, so need two turns). With `drop_over_length` an example
is left out when the original or any view exceeds the build's max_length tokens as the encoder
reads it ("0 text[SEP]1 text" in [CLS] ... [SEP]), as the released training set was filtered
(filter_dataset_by_length.py, mylib/datamakers/filter_by_length.py `is_short_enough`: the longest
of the original and its views at most 512), instead of cutting it.
"""
import dataclasses
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from tfdialemb.augment.base import applied, source_id
from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.length_filter import thesis_layout_length
from tfdialemb.data.records import DIALOGUE_TURNS
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue, capped_roles
from tfdialemb.text.dialogue_packing import speaker_prefix_lengths


@dataclasses.dataclass
class _Group:
    """An original and the views read after it so far."""
    original: Dialogue
    roles: Dict[str, int]
    views: List[Dialogue] = dataclasses.field(default_factory=list)


@register
class AugclBuilder(ExampleBuilder):
    name = "augcl"
    schema = {"dialogues": DIALOGUE_TURNS}

    @dataclasses.dataclass(frozen=True)
    class Params:
        max_roles: int = 2
        min_views: int = 0
        drop_over_length: bool = False

    def __init__(self, params=None):
        super().__init__(params)
        self._pending: Optional[_Group] = None
        self._prefix_lengths: Optional[List[int]] = None

    def validate(self) -> None:
        p = self.params
        if p.max_roles < 2 or p.min_views not in (0, 1):
            raise ValueError(f"augcl parameters out of range (max_roles >= 2, min_views 0 or 1): {p}")

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        if index == 0:
            self._pending = None
        if not applied(dialogue):
            yield from self.finish(rng, pool)
            roles = capped_roles(dialogue, self.params.max_roles)
            self._pending = _Group(dialogue, {t.speaker: r for t, r in zip(dialogue.turns, roles)})
            return
        original = source_id(dialogue)
        if self._pending is None or self._pending.original.id != original:
            raise ValueError(
                f"dialogue {dialogue.id!r} is a view of {original!r} but does not follow it: an augmented "
                "training file lists each original dialogue followed by its views, as `python -m "
                "tfdialemb.augment` writes it (or pre-processing dropped the original: see --min_turns)")
        unknown = sorted({t.speaker for t in dialogue.turns} - set(self._pending.roles))
        if unknown:
            raise ValueError(f"view {dialogue.id!r} has speakers {unknown} that its original {original!r} lacks")
        self._pending.views.append(dialogue)

    def finish(self, rng: np.random.Generator, pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        if len(pending.views) < self.params.min_views:
            return
        if not pending.views and len(pending.original.turns) < 2:
            return
        yield {"dialogues": [_turns(d, pending.roles) for d in [pending.original] + pending.views]}


    def fits(self, encoded, tokenizer, max_length):
        if not self.params.drop_over_length:
            return True
        if self._prefix_lengths is None:
            self._prefix_lengths = speaker_prefix_lengths(tokenizer, self.params.max_roles)
        return all(thesis_layout_length([len(pieces) for _, pieces in sample], [role for role, _ in sample],
                                        self._prefix_lengths) <= max_length for sample in encoded["dialogues"])


def _turns(dialogue: Dialogue, roles: Dict[str, int]) -> List[Tuple[int, str]]:
    return [(roles[turn.speaker], turn.text) for turn in dialogue.turns]
