"""Corpus converters: one module per native format, each exposing FORMATS = {format name:
convert(input_path, errors) -> dialogues}, and, for a converter that takes options,
FORMAT_OPTIONS = {format name: (keyword argument, ...)}, each the name of a `python -m
tfdialemb.data convert` flag; such a converter also takes `dropped`, a Counter of the dialogues
its options left out by reason. `python -m tfdialemb.data convert --format=NAME` finds them here;
every module of this package is imported on first lookup, so a new converter is one new file.
"""
import importlib
import pkgutil
from typing import Callable, Dict


def converters() -> Dict[str, Callable]:
    """Every format name mapped to its converter function."""
    table: Dict[str, Callable] = {}
    for module in pkgutil.iter_modules(__path__):
        for name, convert in getattr(importlib.import_module(f"{__name__}.{module.name}"), "FORMATS", {}).items():
            if name in table:
                raise ValueError(f"format {name!r} is defined twice ({__name__}.{module.name})")
            table[name] = convert
    return table


def converter_options() -> Dict[str, tuple]:
    """Format name → the keyword options its converter takes (none for most)."""
    table: Dict[str, tuple] = {}
    for module in pkgutil.iter_modules(__path__):
        table.update(getattr(importlib.import_module(f"{__name__}.{module.name}"), "FORMAT_OPTIONS", {}))
    return table
