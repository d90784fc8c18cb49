"""Corpus converters: one module per native format, each exposing FORMATS = {format name:
convert(input_path, errors) -> dialogues}. `python -m tfdialemb.data convert --format=NAME`
finds them here; every module of this package is imported on first lookup, so a new converter
is one new file.
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
