"""Corpus converters (one module per native format) and the demo-corpus generator.

Each converter module exposes FORMATS = {format name: convert(input_path, errors) -> dialogues};
`python -m tfdialemb.data convert --format=NAME` finds them here.
"""
import importlib
from typing import Callable, Dict

_CONVERTER_MODULES = (
    "jddc", "ecd", "mdc", "dialoguecse_eval", "response_selection", "dailydialog", "dial2vec",
    "multiwoz", "sgd", "dialogstudio",
)


def converters() -> Dict[str, Callable]:
    """Every format name mapped to its converter function."""
    table: Dict[str, Callable] = {}
    for module in _CONVERTER_MODULES:
        for name, convert in importlib.import_module(f"data_prep.{module}").FORMATS.items():
            if name in table:
                raise ValueError(f"format {name!r} is defined twice (data_prep.{module})")
            table[name] = convert
    return table
