"""Corpus converters: one module per native format, each exposing FORMATS = {format name:
convert(input_path, errors, **options) -> dialogues} and, for a converter that takes options,
OPTIONS = {format name: (Option, ...)}, passed as keyword arguments; a converter with a `dropped`
parameter counts there, by reason, the dialogues its options leave out. A module whose records
are not whole dialogues (a candidate of a block, a query of a retrieval set) says so in
PARTIAL_RECORDS = {format name: what one record is}, so that nothing drops them as dialogues
(the token-length filters of `data convert`), and DESCRIPTIONS = {format name: one line on it}
for `convert --format=help`. `python -m tfdialemb.data
convert --format=NAME` finds them here; every module of this package is imported on first lookup,
so a new converter is one new file.
"""
import importlib
import pkgutil
from typing import Callable, Dict, Tuple

from tfdialemb.core.options import Option


def converters() -> Dict[str, Callable]:
    """Every format name mapped to its converter function."""
    return _collect("FORMATS")


def converter_options() -> Dict[str, Tuple[Option, ...]]:
    """Every format that takes options mapped to them."""
    return _collect("OPTIONS")


def partial_records() -> Dict[str, str]:
    """Every format whose records are not whole dialogues mapped to what one record is."""
    return _collect("PARTIAL_RECORDS")


def descriptions() -> Dict[str, str]:
    """Every format mapped to its one line for `convert --format=help`; a format without one is
    refused, so the list never shows a bare name."""
    table, described = converters(), _collect("DESCRIPTIONS")
    missing = sorted(set(table) - set(described))
    if missing:
        raise ValueError(f"formats without a line in DESCRIPTIONS: {', '.join(missing)}")
    return described


def _collect(attribute: str) -> dict:
    table: dict = {}
    for module in pkgutil.iter_modules(__path__):
        for name, value in getattr(importlib.import_module(f"{__name__}.{module.name}"), attribute, {}).items():
            if name in table:
                raise ValueError(f"format {name!r} is defined twice ({__name__}.{module.name})")
            table[name] = value
    return table

