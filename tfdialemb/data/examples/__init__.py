"""Registry of example builders: how each method turns a dialogue into training examples.

A builder declares the features of its examples (see `tfdialemb.data.records`) and yields them
as text; the build tokenizes, serializes and shards them. Builders draw every random choice from
the generator they are handed, seeded per dialogue, so a build is reproducible.
"""
import dataclasses
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Type

import numpy as np

from tfdialemb.dialogue import Dialogue
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.core.package_modules import import_package_modules

_BUILDERS: Dict[str, Type["ExampleBuilder"]] = {}


class ExampleBuilder:
    """Base of every builder: `name`, `schema`, a `Params` dataclass and `examples()`.

    `uses_pool` asks the build for a first pass that fills a DialoguePool (of the build option
    `pool_dialogues` dialogues), the source of negatives "sampled from other dialogues";
    `pool_roles` tags their utterances with role ids for a builder that draws negatives of one role.
    """

    name: str = ""
    schema: Mapping[str, str] = {}
    uses_pool: bool = False

    @dataclasses.dataclass(frozen=True)
    class Params:
        pass

    def __init__(self, params: Optional[Mapping[str, Any]] = None):
        known = {f.name: f for f in dataclasses.fields(self.Params)}
        params = dict(params or {})
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ValueError(f"builder {self.name!r} has no parameters {unknown}; it takes {sorted(known)}")
        converted = {k: _convert(v, known[k].type, k) for k, v in params.items()}
        self.params = self.Params(**converted)
        self.validate()

    def validate(self) -> None:
        """Raises ValueError for parameter values the builder cannot use."""

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        raise TypeError(f"{type(self).__name__} must define examples()")

    def pool_roles(self, dialogue: Dialogue) -> Optional[List[int]]:
        """Per turn, the role id its utterance carries in the pool; None: the pool keeps no roles."""
        del dialogue
        return None

    def finish(self, rng: np.random.Generator, pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        """Examples still held once every dialogue has been seen (a builder that groups lines)."""
        del rng, pool
        return iter(())

    def fits(self, encoded: Dict[str, Any], tokenizer, max_length: int) -> bool:
        """Whether a tokenized example is kept (a builder that drops, rather than cuts, what
        exceeds max_length tokens says so here); the build counts those it leaves out."""
        del encoded, tokenizer, max_length
        return True

    def describe(self) -> Dict[str, Any]:
        return {"method": self.name, "params": dataclasses.asdict(self.params), "schema": dict(self.schema)}


def register(cls: Type[ExampleBuilder]) -> Type[ExampleBuilder]:
    if cls.name in _BUILDERS and _BUILDERS[cls.name] is not cls:
        raise ValueError(f"a builder named {cls.name!r} is already registered")
    _BUILDERS[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Removes a registered builder (for builders defined by tests)."""
    _BUILDERS.pop(name, None)


def make_builder(name: str, params: Optional[Mapping[str, Any]] = None) -> ExampleBuilder:
    _load_builtin()
    if name not in _BUILDERS:
        raise ValueError(f"no example builder for method {name!r}; known: {sorted(_BUILDERS)}")
    return _BUILDERS[name](params)


def builder_names() -> List[str]:
    """The registered builders' names, sorted."""
    _load_builtin()
    return sorted(_BUILDERS)


def _load_builtin() -> None:
    """Imports every module of this package; importing a builder module registers its builders."""
    import_package_modules(__name__)


def _convert(value: Any, kind: Any, name: str) -> Any:
    if not isinstance(value, str):
        return value
    parsers: Dict[Any, Callable[[str], Any]] = {
        int: int, "int": int, float: float, "float": float, str: str, "str": str,
        bool: _parse_bool, "bool": _parse_bool,
    }
    try:
        return parsers[kind](value)
    except (KeyError, ValueError):
        raise ValueError(f"parameter {name}={value!r} is not a valid {getattr(kind, '__name__', kind)}") from None


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("0", "false", "no"):
        return False
    raise ValueError(text)
