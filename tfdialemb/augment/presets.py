"""The augmentation sets of the thesis' Table 1 (and a-h-m of Table 3), by name.

Each operation of a set is applied alone to the original dialogue, one view per operation, as the
released code builds its positives (mylib/datamakers/contrastive.py: one `pos` entry per
augmentation); the thesis found compositions worse in preliminary runs (Sec. 4.2), so they are
offered (`base.Chain`) but no set uses them. `on_the_fly` sets ("-m", mixed) also draw the simple
transforms of the input pipeline; `similarity` names what drives crop and shuffle: the auxiliary
context-response model, or ("-dse", marked † in Table 1) a public sentence encoder's cosine.
"""
import dataclasses
from typing import Optional, Tuple

OPERATIONS = ("insert", "replace", "translate", "crop", "shuffle")
"""Operation names, also the invariance probe's classes (with "none"; translate is not probed)."""
SIMILARITY_SOURCES = ("context_response", "sentence_encoder")


@dataclasses.dataclass(frozen=True)
class Preset:
    name: str
    operations: Tuple[str, ...]
    on_the_fly: bool
    similarity: Optional[str]
    """What scores utterance pairs for crop and shuffle (None: the set has neither)."""


PRESETS = {p.name: p for p in (
    Preset("t-l", ("insert", "replace"), False, None),
    Preset("t-h", ("insert", "replace", "translate"), False, None),
    Preset("a-h", ("insert", "replace", "translate", "crop", "shuffle"), False, "context_response"),
    Preset("a-l-m", ("insert", "replace", "crop", "shuffle"), True, "context_response"),
    Preset("a-h-m", ("insert", "replace", "translate", "crop", "shuffle"), True, "context_response"),
    Preset("a-l-m-dse", ("insert", "replace", "crop", "shuffle"), True, "sentence_encoder"),
)}


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise ValueError(f"unknown augmentation set {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[name]
