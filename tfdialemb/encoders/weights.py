"""Assigns externally read BERT weights to the encoder by Model Garden variable name."""
import contextlib
import logging
from typing import AbstractSet, Dict, Iterator, List, Mapping, Set, Tuple

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.encoder import Encoder, random_initializer
from tfdialemb.encoders.errors import CheckpointError


_log = logging.getLogger(__name__)


DAMAGED_CHECKPOINT_ERRORS = (tf.errors.OpError, IndexError)
"""What reading a TensorFlow checkpoint with missing or truncated files raises (data-loss and
not-found errors; the checkpoint reader's IndexError for a short data file)."""


def bert_variables(encoder: Encoder) -> Dict[str, tf.Variable]:
    """BertEncoderV2 variables keyed by their name inside it, e.g. `transformer/layer_0/output/kernel`."""
    prefix = encoder.bert.name + "/"
    return {name_inside(variable.name.rsplit(":", 1)[0], prefix): variable for variable in encoder.bert.weights}


def name_inside(name: str, prefix: str) -> str:
    """A variable's scoped `name` after `prefix` (the whole name when it has none): the key both
    `bert_variables` and `created_from` use."""
    return name.split(prefix, 1)[1] if prefix in name else name


@contextlib.contextmanager
def created_from(weights: Mapping[str, np.ndarray], prefix: str, created: Set[str]) -> Iterator[None]:
    """Variables created inside start from `weights[name]` (`name` their scoped name after
    `prefix`, as `bert_variables` keys them) instead of their initializer, when the shapes agree;
    each name so filled is added to `created`. Loading then writes every tensor once: creating
    zeros and assigning afterwards took 148 MiB more peak memory (all-MiniLM-L6-v2: 942 vs 794
    MiB), 93 MiB of it kept by the allocator after loading.
    """
    def creator(next_creator, **kwargs):
        name = name_inside(f"{tf.get_current_name_scope()}/{kwargs.get('name')}", prefix)
        shape = kwargs.get("shape")
        if name in weights and shape is not None:
            value = weights[name]  # read (and converted) once
            if tuple(value.shape) == tuple(shape):
                dtype = tf.as_dtype(kwargs.get("dtype") or tf.float32).as_numpy_dtype
                kwargs["initial_value"] = lambda: np.asarray(value, dtype)
                created.add(name)
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        yield


def assign_named_weights(variables: Dict[str, tf.Variable], weights: Mapping[str, np.ndarray],
                         source: str, what: str, optional: Tuple[str, ...] = (),
                         created: AbstractSet[str] = frozenset()) -> List[str]:
    """Assigns `weights[name]` to each `variables[name]` but those `created` from them
    (`created_from`); returns the optional names left as initialised.

    Raises one CheckpointError naming `source` and listing every missing, unexpected or
    mis-shaped tensor, so a wrong config or a truncated file is reported in one go. Variables whose
    name starts with one of `optional` may be absent from `weights`. Each value is read once,
    when it is assigned, so `weights` may read them lazily.
    """
    absent = sorted(set(variables) - set(weights))
    left = [name for name in absent if name.startswith(optional)] if optional else []
    missing = [name for name in absent if name not in left]
    unexpected = sorted(set(weights) - set(variables))
    mismatched = []
    for name in sorted(set(variables) & set(weights) - set(created)):
        value, variable = weights[name], variables[name]
        if tuple(value.shape) != tuple(variable.shape):
            mismatched.append(f"{name}: checkpoint {tuple(value.shape)} vs config {tuple(variable.shape)}")
        elif not (missing or unexpected or mismatched):
            variable.assign(np.asarray(value, variable.dtype.as_numpy_dtype))
    problems = []
    if missing:
        problems.append(f"missing {len(missing)} tensors: {_preview(missing)}")
    if unexpected:
        problems.append(f"unexpected {len(unexpected)} tensors: {_preview(unexpected)}")
    if mismatched:
        problems.append(f"mismatched shapes: {_preview(mismatched)}")
    if problems:
        raise CheckpointError(f"{source}: {what} do not fit the encoder config; " + "; ".join(problems))
    return left


def assign_bert_weights(encoder: Encoder, weights: Dict[str, np.ndarray], source: str,
                        created: AbstractSet[str] = frozenset()) -> None:
    """Assigns `weights` (Model Garden names and shapes) to every BertEncoderV2 variable, but
    those `created` from them.

    Masked-LM checkpoints (BertForMaskedLM) have no pooler; it is then initialised randomly
    (mean and [CLS] pooling never use it).
    """
    variables = bert_variables(encoder)
    unnamed = sorted(set(created) - set(variables))
    if unnamed:  # `created_from` and `bert_variables` must name variables alike, or some stay unfilled
        raise ValueError(f"variables created from {source} under names the encoder does not use: {_preview(unnamed)}")
    left = assign_named_weights(variables, weights, source, "the weights", optional=("pooler_transform/",),
                                created=created)
    if left:
        _log.warning("%s: no pooler weights; the pooler is initialised randomly", source)
        initializer = random_initializer(encoder.encoder_config)
        for name in left:
            variables[name].assign(initializer(variables[name].shape, variables[name].dtype)
                                   if name.endswith("kernel") else tf.zeros_like(variables[name]))


def _preview(items, limit=6):
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
