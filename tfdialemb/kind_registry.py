"""The inference kinds, one `InferenceKind` record each (what a model serves, the settings it
reads, its default length, whether it needs a trained head), registered by name; the kinds'
former names; and how a command settles a kind's settings: recorded in the model directory
(`method.json`), given on the command line, or defaulted.

A kind's runtime registers itself with `tfdialemb.inference.kinds.register_runtime` and its
SavedModel with `tfdialemb.serving.kinds.register_servable`, so a new kind is one record here (or
one `register_kind` call outside the package) beside its own runtime and servable.

A trained model directory records, for each kind it serves, the settings it was trained with;
a flag that contradicts a recorded setting is refused with both values named, except the
settings in OVERRIDABLE (a longer or shorter input, another pooling), which are applied with a
warning. A checkpoint without a record (an untrained encoder) takes the flags or the defaults.
"""
import dataclasses
import logging
from typing import Any, Dict, List, Mapping, Optional, Tuple

from tfdialemb.inference_settings import SETTINGS
from tfdialemb.core.options import renamed


@dataclasses.dataclass(frozen=True)
class InferenceKind:
    """One thing a model serves; the class computing it and the SavedModel serving it register
    themselves under `name`."""
    name: str
    summary: str
    settings: Tuple[str, ...]
    """The settings it reads (names in SETTINGS)."""
    default_max_length: int
    needs_head: bool = False
    """Built from a method's trained model, heads included; otherwise from the encoder alone, so
    any checkpoint serves it."""
    normalizable: bool = False
    """--normalize scales its embeddings to unit length."""


KINDS: Dict[str, InferenceKind] = {}
"""What a trained model can serve, by name; a method spec's `offers` lists the ones it serves."""


def register_kind(kind: InferenceKind) -> InferenceKind:
    """Adds `kind`; a ValueError names a setting it reads that SETTINGS does not hold, or a name
    another kind has."""
    unknown = sorted(set(kind.settings) - set(SETTINGS))
    if unknown:
        raise ValueError(f"inference kind {kind.name!r} reads unknown settings {unknown}; known: {sorted(SETTINGS)}")
    if "max_length" not in kind.settings:
        raise ValueError(f"inference kind {kind.name!r} must read max_length (its default is default_max_length)")
    if KINDS.get(kind.name, kind) != kind or kind.name in RENAMED_KINDS:
        raise ValueError(f"an inference kind named {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    """Removes a registered kind (for kinds defined by tests)."""
    KINDS.pop(name, None)


RENAMED_KINDS = {"triple": "curved"}
"""Former kind names: `--kind` and a `method.json` written before the rename accept them for one
release (the flag with a warning)."""

for _builtin in (
    InferenceKind("sentence", "sentence embeddings", ("pooling", "max_length"), 128, normalizable=True),
    InferenceKind("dialogue", "dial2vec dialogue embeddings",
                  ("separator", "num_roles", "max_length", "merge_consecutive_turns", "speaker_prefix",
                   "final_separator", "dialogue_pooling"), 512, normalizable=True),
    InferenceKind("curved", "triple-encoder (C3L) / CCL incremental scores",
                  ("curved", "speaker_tokens", "pooling", "max_length", "merge_consecutive_turns"), 512),
    InferenceKind("selection", "a trained cross-encoder's response-selection scores", ("pair_layout", "max_length"),
                  512, needs_head=True),
    InferenceKind("context_response", "a trained context-response model's context and response vectors",
                  ("context", "max_length", "merge_consecutive_turns"), 512, needs_head=True),
):
    register_kind(_builtin)


def current_kind(name: Optional[str]) -> Optional[str]:
    """`name`, or the kind a former name in RENAMED_KINDS now has, with a warning to the log."""
    if name in RENAMED_KINDS:
        logging.getLogger(__name__).warning(renamed(f"--kind={name}", f"--kind={RENAMED_KINDS[name]}"))
        return RENAMED_KINDS[name]
    return name


OVERRIDABLE = ("max_length", "pooling", "dialogue_pooling")
"""The settings a flag may change from the recorded value (with a warning)."""


def resolve(kind: str, recorded: Optional[Mapping[str, Any]], given: Mapping[str, Any],
            source: str) -> Tuple[Dict[str, Any], List[str]]:
    """(settings of `kind`, warnings): each setting from `given` (the flags set on the command
    line), else `recorded` (None: nothing recorded), else its default. A ValueError names a given
    value that contradicts a recorded one, unless the setting is OVERRIDABLE."""
    settings, warnings = {}, []
    recorded = dict(recorded or {})
    for name in KINDS[kind].settings:
        default = KINDS[kind].default_max_length if name == "max_length" else SETTINGS[name].default
        stored = recorded.get(name)
        if name in given and given[name] is not None:
            value = given[name]
            if stored is not None and value != stored:
                if name not in OVERRIDABLE:
                    raise ValueError(f"--{name}={_flag_text(value)} contradicts {source}, trained with "
                                     f"{name}={_flag_text(stored)}; drop the flag")
                warnings.append(f"--{name}={_flag_text(value)} overrides {name}={_flag_text(stored)} "
                                f"recorded in {source}")
        else:
            value = stored if stored is not None else default
        settings[name] = value
    return settings, warnings


def _flag_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
