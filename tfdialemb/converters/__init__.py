"""Corpus converters: one module per native format, each exposing FORMATS = {format name:
convert(input_path, errors, **options) -> dialogues} and, for formats that take options,
FORMAT_OPTIONS = {format name: (Option, ...)}, which `python -m tfdialemb.data convert` defines
as flags and passes by name. `--format=NAME` finds them here; every module of this package is
imported on first lookup, so a new converter is one new file.
"""
import importlib
import pkgutil
from typing import Callable, Dict, Tuple

from tfdialemb.options import Option


def converters() -> Dict[str, Callable]:
    """Every format name mapped to its converter function."""
    table: Dict[str, Callable] = {}
    for module in pkgutil.iter_modules(__path__):
        for name, convert in getattr(importlib.import_module(f"{__name__}.{module.name}"), "FORMATS", {}).items():
            if name in table:
                raise ValueError(f"format {name!r} is defined twice ({__name__}.{module.name})")
            table[name] = convert
    return table


def converter_options() -> Dict[str, Tuple[Option, ...]]:
    """Every format name mapped to the options its converter takes (most take none)."""
    table: Dict[str, Tuple[Option, ...]] = {}
    for module in pkgutil.iter_modules(__path__):
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        for name in getattr(loaded, "FORMATS", {}):
            table[name] = tuple(getattr(loaded, "FORMAT_OPTIONS", {}).get(name, ()))
    return table
