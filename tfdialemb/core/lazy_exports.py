"""A package's public names, each loaded from its module on first use (PEP 562): `from
tfdialemb.encoders import Encoder` loads `tfdialemb.encoders.encoder` alone, so importing a
TensorFlow-free module of the package (its config reader, its errors) loads no TensorFlow."""
import importlib
from typing import Callable, List, Mapping, Tuple


def lazy_exports(package: str, exports: Mapping[str, str]) -> Tuple[Callable[[str], object], Callable[[], List[str]]]:
    """(`__getattr__`, `__dir__`) of `package` for `exports`, {public name: module of the package
    defining it}; `dir()` lists the package's own names and the exported ones."""

    def __getattr__(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    def __dir__() -> List[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(exports))

    return __getattr__, __dir__
