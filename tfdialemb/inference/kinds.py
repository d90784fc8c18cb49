"""The runtime of each inference kind, and `load`: a model directory opened as one of them.

A runtime class registers itself for the kinds it computes (`register_runtime`), each a record of
`tfdialemb.kind_registry.KINDS`. The package's own runtimes register when their modules (those of
`tfdialemb.inference`) are imported, on first lookup.
"""
import os
from typing import Any, Callable, Dict, Mapping, Optional, Union

from tfdialemb.kind_registry import KINDS
from tfdialemb.model_dir import ModelSource
from tfdialemb.core.package_modules import import_package_modules

_RUNTIMES: Dict[str, type] = {}


def register_runtime(*kinds: str) -> Callable[[type], type]:
    """Class decorator: the class computes `kinds` (its `from_settings(model or encoder, tokenizer,
    settings, **options)` builds it; the curved kind's scores come from sentence embeddings)."""
    def register(runtime: type) -> type:
        for kind in kinds:
            if kind not in KINDS:
                raise ValueError(f"{runtime.__name__} computes {kind!r}, not an inference kind; register its "
                                 "record first (tfdialemb.kind_registry.register_kind)")
            if _RUNTIMES.get(kind, runtime) is not runtime:
                raise ValueError(f"the {kind} kind is already computed by {_RUNTIMES[kind].__name__}")
            _RUNTIMES[kind] = runtime
        return runtime
    return register


def unregister_runtime(kind: str) -> None:
    """Removes a kind's runtime (for kinds defined by tests)."""
    _RUNTIMES.pop(kind, None)


def runtime_class(kind: str) -> type:
    """The class registered as computing `kind`; a ValueError names a kind without one."""
    import_package_modules("tfdialemb.inference")
    if kind not in _RUNTIMES:
        raise ValueError(f"no runtime computes the inference kind {kind!r}; computed: {', '.join(sorted(_RUNTIMES))}")
    return _RUNTIMES[kind]


def load(source: Union[ModelSource, str, os.PathLike], kind: str, given: Optional[Mapping[str, Any]] = None,
         **options):
    """The `kind` runtime of `source` (a ModelSource or a directory) with the settings it records,
    `given` ones applied as the commands apply their flags; `options` go to `from_settings`
    (e.g. `normalize`, `hidden_layers`)."""
    if not isinstance(source, ModelSource):
        source = ModelSource(source)
    return runtime(source, kind, source.settings(kind, dict(given or {})), **options)


def runtime(source: ModelSource, kind: str, settings: Mapping[str, Any], **options):
    """The `kind` runtime of `source` with `settings` already resolved (`ModelSource.settings`)."""
    return runtime_class(kind).from_settings(*source.serving_parts(kind), settings, **options)
