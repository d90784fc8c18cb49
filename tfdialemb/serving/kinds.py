"""The SavedModel of each inference kind: the `ServedKind` a serving module registers for a kind
(`register_servable`) turns the kind's runtime (`tfdialemb.inference.kinds`), its settings and
warm-up inputs into what `export` writes.

The kinds themselves are the records of `tfdialemb.kind_registry.KINDS`; the package's own
servables register when their modules (those of `tfdialemb.serving`) are imported, on first lookup.
"""
import dataclasses
from typing import Any, Callable, Dict, Mapping, Sequence

from tfdialemb.kind_registry import KINDS
from tfdialemb.core.package_modules import import_package_modules
from tfdialemb.serving import layout


@dataclasses.dataclass(frozen=True)
class ServedKind:
    """How one kind is exported."""
    warmup: str
    """What its warm-up requests are made of: "sentences" or "dialogues"."""
    build: Callable[[Any, Mapping[str, Any], Sequence], layout.Servable]
    """(runtime, settings, warm-up inputs) → the Servable."""
    one_request_per_input: bool = False
    """Its warm-up sends each input alone, then all together (reported as "N inputs"); the others
    derive their requests from the inputs (reported as "R requests from N inputs")."""

    def describe_warmup(self, servable: layout.Servable, inputs: Sequence) -> str:
        if self.one_request_per_input:
            return f"{len(inputs)} {self.warmup}"
        return f"{len(servable.records)} requests from {len(inputs)} {self.warmup}"


_SERVABLES: Dict[str, ServedKind] = {}


def register_servable(kind: str, served: ServedKind) -> ServedKind:
    """How `python -m tfdialemb.export --kind=KIND` builds the SavedModel of `kind`, a registered
    inference kind."""
    if kind not in KINDS:
        raise ValueError(f"a servable for {kind!r}, not an inference kind; register its record first "
                         "(tfdialemb.kind_registry.register_kind)")
    if _SERVABLES.get(kind, served) != served:
        raise ValueError(f"the {kind} kind already has a servable")
    _SERVABLES[kind] = served
    return served


def unregister_servable(kind: str) -> None:
    """Removes a kind's servable (for kinds defined by tests)."""
    _SERVABLES.pop(kind, None)


def served_kind(kind: str) -> ServedKind:
    """The servable registered for `kind`; a ValueError names a kind without one."""
    import_package_modules("tfdialemb.serving")
    if kind not in _SERVABLES:
        raise ValueError(f"no servable exports the inference kind {kind!r}; exported: {', '.join(sorted(_SERVABLES))}")
    return _SERVABLES[kind]
