"""Replacing the class of layers Model Garden has built: `BertEncoderV2` makes its dropout and
attention layers inside each transformer block with no way to pass a class, so the encoder turns
the built ones into the project's subclasses in place. A subclass adopted so adds no variables
and keeps every attribute, so checkpoints and configs are those of the layer it replaces."""
from typing import Callable, Optional

import tf_keras


def adopt_class(layer: tf_keras.layers.Layer, plain: type, replacement: type,
                accepts: Optional[Callable[[tf_keras.layers.Layer], bool]] = None) -> int:
    """Makes every layer inside the built `layer` whose class is exactly `plain` (and that
    `accepts`, when given) a `replacement`, a subclass of `plain`; returns how many."""
    adopted = 0
    for module in layer._flatten_layers(include_self=False):  # pylint: disable=protected-access
        if type(module) is plain and (accepts is None or accepts(module)):  # pylint: disable=unidiomatic-typecheck
            module.__class__ = replacement
            adopted += 1
    return adopted
