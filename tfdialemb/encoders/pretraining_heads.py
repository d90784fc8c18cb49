"""Reads BERT's pre-training heads from the checkpoint directories `load_pretrained` reads: the
masked-LM prediction head and the next-sentence head.

Continued pre-training should start from the heads the encoder was pre-trained with, not random
ones, or the first steps mostly train the heads; the fill-mask augmentations need the masked-LM
head to predict at all. The encoder readers skip these tensors; this module reads only them,
named by a `HeadLayout` per head: the masked-LM head in Model Garden's `MaskedLM` layout (dense
kernel [in, out]; its decoder matrix is always the word-embedding table, so it is not read), the
next-sentence head as the [hidden, 2] kernel and [2] bias of a dense layer on the pooled output.
"""
import dataclasses
import logging
import os
import re
from typing import Dict, Mapping, Optional, Pattern, Tuple

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.checkpoint import detect_kind, google_checkpoint_prefix, latest_own_checkpoint
from tfdialemb.encoders.huggingface import read_safetensors
from tfdialemb.encoders.errors import CheckpointError
from tfdialemb.encoders.weights import assign_named_weights

_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class HeadLayout:
    """Where one head's tensors are in each checkpoint layout, by the keys of `tensors`."""

    description: str
    tensors: Tuple[str, ...]
    google: Mapping[str, Tuple[str, ...]]
    """google-research/bert's run_pretraining.py names."""
    pytorch: Mapping[str, Tuple[str, ...]]
    """Hugging Face PyTorch names, in order of preference."""
    h5_pattern: Pattern
    """Matches a transformers TF `tf_model.h5` dataset name of the head; group 1 is looked up in `h5`."""
    h5: Mapping[str, Tuple[str, ...]]
    tfdialemb: Mapping[str, Tuple[str, ...]]
    """Names in the latest checkpoint of a tfdialemb model directory written by pre-training
    (`python -m tfdialemb.pretrain`): the training loop's root holds the method model as `model`,
    whose head layers are its `masked_lm` and `next_sentence` attributes."""
    found_in: str
    """Which checkpoints hold the head, for the error when one is required and missing."""
    transposed: Tuple[str, ...] = ()
    """Keys whose PyTorch tensor is a Linear weight [out, in]."""
    google_transposed: Tuple[str, ...] = ()
    """Keys whose Google tensor is stored [out, in]."""


_MLM_TENSORS = ("transform/dense/kernel", "transform/dense/bias", "transform/LayerNorm/gamma",
                "transform/LayerNorm/beta", "output_bias")
MLM_HEAD = HeadLayout(
    description="masked-LM head",
    tensors=_MLM_TENSORS,
    google={name: ("cls/predictions/" + name,) for name in _MLM_TENSORS},
    # Older files name LayerNorm parameters gamma/beta; `decoder.bias` is tied to `predictions.bias`.
    pytorch={
        "transform/dense/kernel": ("cls.predictions.transform.dense.weight",),
        "transform/dense/bias": ("cls.predictions.transform.dense.bias",),
        "transform/LayerNorm/gamma": ("cls.predictions.transform.LayerNorm.weight",
                                      "cls.predictions.transform.LayerNorm.gamma"),
        "transform/LayerNorm/beta": ("cls.predictions.transform.LayerNorm.bias",
                                     "cls.predictions.transform.LayerNorm.beta"),
        "output_bias": ("cls.predictions.bias", "cls.predictions.decoder.bias"),
    },
    # transformers' TF classes store the head as `.../mlm___cls/predictions/...:0`, already [in, out].
    h5_pattern=re.compile(r"(?:^|/)(?:mlm___)?cls/predictions/(.+?)(?::0)?$"),
    h5={name: (name if name != "output_bias" else "bias",) for name in _MLM_TENSORS},
    # Model Garden's MaskedLM names its bias variable "output_bias/bias" (escaped ".S" in keys).
    tfdialemb={name: (f"model/masked_lm/{own}/.ATTRIBUTES/VARIABLE_VALUE",) for name, own in zip(
        _MLM_TENSORS, ("dense/kernel", "dense/bias", "layer_norm/gamma", "layer_norm/beta", "output_bias.Sbias"))},
    found_in=("a Hugging Face BertForMaskedLM or BertForPreTraining directory (cls.predictions.* in "
              "model.safetensors or tf_model.h5), a Google TF1 BERT checkpoint as run_pretraining.py writes "
              "it (cls/predictions/*), or a model directory written by `python -m tfdialemb.pretrain "
              "--objective=mlm` (or mlm_nsp)"),
    transposed=("transform/dense/kernel",),
)
HEAD_TENSORS = MLM_HEAD.tensors

NSP_HEAD = HeadLayout(
    description="next-sentence head",
    tensors=("kernel", "bias"),
    google={"kernel": ("cls/seq_relationship/output_weights",), "bias": ("cls/seq_relationship/output_bias",)},
    pytorch={"kernel": ("cls.seq_relationship.weight",), "bias": ("cls.seq_relationship.bias",)},
    # transformers' TFBertForPreTraining: `.../nsp___cls/seq_relationship/kernel:0`, [in, out].
    h5_pattern=re.compile(r"(?:^|/)(?:nsp___)?cls/seq_relationship/(.+?)(?::0)?$"),
    h5={"kernel": ("kernel",), "bias": ("bias",)},
    tfdialemb={name: (f"model/next_sentence/{name}/.ATTRIBUTES/VARIABLE_VALUE",) for name in ("kernel", "bias")},
    found_in=("a Hugging Face BertForPreTraining directory (cls.seq_relationship.*), a Google TF1 BERT "
              "checkpoint (cls/seq_relationship/*), or a model directory written by `python -m "
              "tfdialemb.pretrain --objective=mlm_nsp`"),
    transposed=("kernel",),
    google_transposed=("kernel",),
)


def read_head(directory: str, layout: HeadLayout) -> Optional[Dict[str, np.ndarray]]:
    """The head tensors found in `directory`, keyed by `layout.tensors`; None when it has none.

    A plain BertModel checkpoint has no heads, nor has a tfdialemb directory of `save_pretrained`
    or of a method without them; a model directory of `python -m tfdialemb.pretrain` has the
    heads its objective trains. A partial head is returned as found, so that assigning it names
    what is missing.
    """
    directory = os.fspath(directory)
    kind = detect_kind(directory)
    if kind == "tfdialemb":
        reader = tf.train.load_checkpoint(latest_own_checkpoint(directory))
        found = _pick(reader.get_variable_to_shape_map(), layout.tfdialemb, reader.get_tensor)
    elif kind == "google":
        reader = tf.train.load_checkpoint(google_checkpoint_prefix(directory))
        found = _pick(reader.get_variable_to_shape_map(), layout.google, reader.get_tensor)
        found = _transpose(found, layout.google_transposed)
    elif os.path.exists(os.path.join(directory, "model.safetensors")):
        found = _read_safetensors_head(os.path.join(directory, "model.safetensors"), layout)
    else:
        found = _read_tf_h5_head(os.path.join(directory, "tf_model.h5"), layout)
    return found or None


def _pick(available, names: Mapping[str, tuple], read) -> Dict[str, np.ndarray]:
    """`read(name)` of the first of each head tensor's candidate `names` that is `available`."""
    found = {}
    for key, candidates in names.items():
        name = next((n for n in candidates if n in available), None)
        if name is not None:
            found[key] = np.asarray(read(name))
    return found


def _transpose(found: Dict[str, np.ndarray], keys) -> Dict[str, np.ndarray]:
    return {key: value.T if key in keys else value for key, value in found.items()}


def _read_safetensors_head(path: str, layout: HeadLayout) -> Dict[str, np.ndarray]:
    """Only the head's tensors of a PyTorch-layout `model.safetensors`, without loading the rest."""
    tensors = read_safetensors(path)
    return _transpose(_pick(set(tensors), layout.pytorch, tensors.__getitem__), layout.transposed)


def _read_tf_h5_head(path: str, layout: HeadLayout) -> Dict[str, np.ndarray]:
    """The head's tensors of a transformers `tf_model.h5` (e.g. TFBertForPreTraining)."""
    import h5py  # pylint: disable=import-outside-toplevel

    datasets = {}

    def visit(name, item):
        match = layout.h5_pattern.search(name)
        if match and isinstance(item, h5py.Dataset):
            datasets[match.group(1)] = np.asarray(item)

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return _pick(datasets, layout.h5, datasets.get)


def load_head(variables: Dict[str, tf.Variable], layout: HeadLayout, directory: str,
              required: bool = False) -> bool:
    """Assigns the checkpoint's head `layout` to `variables` (keyed as `layout.tensors`).

    When the checkpoint has none: with `required`, a CheckpointError naming the directory and
    where the head is found; otherwise False (logged), and the head keeps its random
    initialisation. A partial or mis-shaped head raises one CheckpointError naming every tensor.
    """
    directory = os.fspath(directory)
    weights = read_head(directory, layout)
    if weights is None:
        if required:
            raise CheckpointError(f"{directory}: has no {layout.description}, which is needed here; give "
                                  f"{layout.found_in}")
        _log.warning("%s has no %s; the head starts from random initialisation", directory,
                     layout.description)
        return False
    assign_named_weights(variables, weights, directory, f"the {layout.description} tensors")
    _log.info("loaded the %s of %s", layout.description, directory)
    return True
