"""Reads BERT's masked-LM prediction head from the checkpoint directories `load_pretrained` reads.

Continued pre-training should start from the head the encoder was pre-trained with, not a random
one, or the first steps mostly train the head. The encoder readers skip these tensors; this module
reads only them. Results use Model Garden `MaskedLM` layouts (dense kernel [in, out]) under the
names of HEAD_TENSORS; the decoder matrix is always the word-embedding table, so it is not read.
"""
import os
import re
from typing import Dict, Mapping, Optional

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.checkpoint import google_checkpoint_prefix, detect_kind

HEAD_TENSORS = (
    "transform/dense/kernel",
    "transform/dense/bias",
    "transform/LayerNorm/gamma",
    "transform/LayerNorm/beta",
    "output_bias",
)
# Hugging Face PyTorch names, in order of preference; the Linear weight is [out, in]. Older files
# name LayerNorm parameters gamma/beta; `decoder.bias` is tied to `predictions.bias`.
_PYTORCH_NAMES = {
    "transform/dense/kernel": ("cls.predictions.transform.dense.weight",),
    "transform/dense/bias": ("cls.predictions.transform.dense.bias",),
    "transform/LayerNorm/gamma": ("cls.predictions.transform.LayerNorm.weight",
                                  "cls.predictions.transform.LayerNorm.gamma"),
    "transform/LayerNorm/beta": ("cls.predictions.transform.LayerNorm.bias",
                                 "cls.predictions.transform.LayerNorm.beta"),
    "output_bias": ("cls.predictions.bias", "cls.predictions.decoder.bias"),
}
# transformers' TF classes store the head as `.../mlm___cls/predictions/...:0`, already [in, out].
_TF_H5_NAME = re.compile(r"(?:^|/)(?:mlm___)?cls/predictions/(.+?)(?::0)?$")
_TF_H5_NAMES = {name: (name if name != "output_bias" else "bias",) for name in HEAD_TENSORS}
# google-research/bert's run_pretraining.py scope names.
_GOOGLE_NAMES = {name: ("cls/predictions/" + name,) for name in HEAD_TENSORS}


def read_mlm_head(directory: str) -> Optional[Dict[str, np.ndarray]]:
    """The head tensors found in `directory`, keyed by HEAD_TENSORS; None when it has none.

    A plain BertModel checkpoint has no head, nor has a tfdialemb directory (its encoder view;
    a stage-1 run resumes its head from the training loop's own checkpoint). A partial head is
    returned as found, so that assigning it names what is missing.
    """
    directory = os.fspath(directory)
    kind = detect_kind(directory)
    if kind == "tfdialemb":
        return None
    if kind == "google":
        reader = tf.train.load_checkpoint(google_checkpoint_prefix(directory))
        names = reader.get_variable_to_shape_map()
        found = _pick(names, _GOOGLE_NAMES, reader.get_tensor)
    elif os.path.exists(os.path.join(directory, "model.safetensors")):
        found = _read_safetensors_head(os.path.join(directory, "model.safetensors"))
    else:
        found = _read_tf_h5_head(os.path.join(directory, "tf_model.h5"))
    return found or None


def _pick(available, names: Mapping[str, tuple], read) -> Dict[str, np.ndarray]:
    """`read(name)` of the first of each head tensor's candidate `names` that is `available`."""
    found = {}
    for key, candidates in names.items():
        name = next((n for n in candidates if n in available), None)
        if name is not None:
            found[key] = np.asarray(read(name))
    return found


def _read_safetensors_head(path: str) -> Dict[str, np.ndarray]:
    """Only the head tensors of a PyTorch-layout `model.safetensors`, without loading the rest."""
    from safetensors import safe_open  # pylint: disable=import-outside-toplevel

    with safe_open(path, framework="np") as f:
        found = _pick(set(f.keys()), _PYTORCH_NAMES, f.get_tensor)
    if "transform/dense/kernel" in found:
        found["transform/dense/kernel"] = found["transform/dense/kernel"].T
    return found


def _read_tf_h5_head(path: str) -> Dict[str, np.ndarray]:
    """The head tensors of a transformers `tf_model.h5` (TFBertForMaskedLM / ForPreTraining)."""
    import h5py  # pylint: disable=import-outside-toplevel

    datasets = {}

    def visit(name, item):
        match = _TF_H5_NAME.search(name)
        if match and isinstance(item, h5py.Dataset):
            datasets[match.group(1)] = np.asarray(item)

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return _pick(datasets, _TF_H5_NAMES, datasets.get)
