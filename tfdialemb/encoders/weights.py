"""Assigns externally read BERT weights to the encoder by Model Garden variable name."""
from typing import Dict

import numpy as np

from tfdialemb.encoders.encoder import Encoder


class CheckpointError(ValueError):
    """A checkpoint directory is missing files or holds weights that do not fit the config."""


def bert_variables(encoder: Encoder) -> Dict[str, "tf.Variable"]:
    """BertEncoderV2 variables keyed by their name inside it, e.g. `transformer/layer_0/output/kernel`."""
    prefix = encoder.bert.name + "/"
    named = {}
    for variable in encoder.bert.weights:
        name = variable.name.rsplit(":", 1)[0]
        named[name.split(prefix, 1)[1] if prefix in name else name] = variable
    return named


def assign_bert_weights(encoder: Encoder, weights: Dict[str, np.ndarray], source: str) -> None:
    """Assigns `weights` (Model Garden names and shapes) to every BertEncoderV2 variable.

    Raises one CheckpointError naming `source` and listing every missing, unexpected or
    mis-shaped tensor, so a wrong config or a truncated file is reported in one go.
    """
    variables = bert_variables(encoder)
    missing = sorted(set(variables) - set(weights))
    unexpected = sorted(set(weights) - set(variables))
    mismatched = sorted(
        f"{name}: checkpoint {tuple(weights[name].shape)} vs config {tuple(variables[name].shape)}"
        for name in set(variables) & set(weights)
        if tuple(weights[name].shape) != tuple(variables[name].shape)
    )
    problems = []
    if missing:
        problems.append(f"missing {len(missing)} tensors: {_preview(missing)}")
    if unexpected:
        problems.append(f"unexpected {len(unexpected)} tensors: {_preview(unexpected)}")
    if mismatched:
        problems.append(f"mismatched shapes: {_preview(mismatched)}")
    if problems:
        raise CheckpointError(f"{source}: weights do not fit the encoder config; " + "; ".join(problems))
    for name, variable in variables.items():
        variable.assign(weights[name].astype(variable.dtype.as_numpy_dtype))


def _preview(items, limit=6):
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
