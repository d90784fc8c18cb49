"""A local Hugging Face RoBERTa or T5 directory as transformers' TensorFlow model and tokenizer,
read without torch.

The project's own loader reads BERT only (`tfdialemb.encoders`); dial2vec's RoBERTa and T5
baselines need these two. The TF model (`TFRobertaModel`, or `TFT5EncoderModel`, the encoder
dial2vec's network.py keeps of T5) is built from config.json, its variables are created by one
call, and they are filled from model.safetensors (PyTorch layout, read as numpy arrays) through
transformers' PyTorch→TF name mapping. A RoBERTa saved from a masked-LM model has no pooler, which
mean pooling does not use; every other weight must be in the file.
"""
import dataclasses
import json
import os
from typing import Any

import tensorflow as tf

from tfdialemb.encoders.huggingface import read_safetensors
from tfdialemb.encoders.weights import CheckpointError

MODEL_CLASSES = {"roberta": "TFRobertaModel", "t5": "TFT5EncoderModel"}
"""config.json's model_type → the transformers TensorFlow class that encodes with it."""
TOKENIZER_FILES = {"roberta": (("tokenizer.json",), ("vocab.json", "merges.txt")),
                   "t5": (("tokenizer.json",), ("spiece.model",))}
"""model_type → the sets of files any of which is a tokenizer transformers can build."""
_EXPECTED = ("a Hugging Face RoBERTa or T5 directory: config.json, model.safetensors and the "
             "tokenizer (tokenizer.json, or vocab.json + merges.txt for RoBERTa, spiece.model for T5)")


@dataclasses.dataclass(frozen=True)
class TransformersEncoder:
    model: Any
    tokenizer: Any
    model_type: str
    directory: str


def _model_type(directory: str, found) -> str:
    if "config.json" not in found:
        raise CheckpointError(f"{directory}: no config.json; expected {_EXPECTED}; found {found}")
    with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
        model_type = json.load(f).get("model_type")
    if model_type not in MODEL_CLASSES:
        raise CheckpointError(f"{directory}: config.json has model_type {model_type!r}; this reads "
                              f"{' or '.join(MODEL_CLASSES)} (a BERT's mean pooling is "
                              "--embedding=encoder, view mean)")
    return model_type


def _check_files(directory: str) -> str:
    """The directory's model_type after checking its files; a CheckpointError names what lacks."""
    if not os.path.isdir(directory):
        raise CheckpointError(f"{directory}: checkpoint directory does not exist; expected {_EXPECTED}")
    found = sorted(os.listdir(directory))
    model_type = _model_type(directory, found)
    if "model.safetensors" not in found:
        held = " (pytorch_model.bin needs torch to read: convert it to model.safetensors elsewhere)" \
            if "pytorch_model.bin" in found else ""
        raise CheckpointError(f"{directory}: lacks model.safetensors{held}; found {found}")
    options = TOKENIZER_FILES[model_type]
    if not any(all(name in found for name in names) for names in options):
        listed = " or ".join(" + ".join(names) for names in options)
        raise CheckpointError(f"{directory}: lacks the {model_type} tokenizer ({listed}); found {found}")
    return model_type


def _fill(model, path: str, model_type: str) -> None:
    """Assigns model.safetensors' tensors to the built model's variables, by transformers' names."""
    from safetensors import SafetensorError  # pylint: disable=import-outside-toplevel
    from transformers.modeling_tf_pytorch_utils import (  # pylint: disable=import-outside-toplevel
        load_pytorch_state_dict_in_tf2_model)

    try:
        # Its warnings would call the pooler and lm_head a model to train; the checks below name
        # what matters.
        _, info = load_pytorch_state_dict_in_tf2_model(model, read_safetensors(path), allow_missing_keys=True,
                                                       output_loading_info=True, skip_logger_warnings=True)
    except (ValueError, tf.errors.OpError, SafetensorError) as e:
        first_line = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: its weights do not fit config.json ({first_line})") from None
    missing = [name for name in info["missing_keys"] if "pooler." not in name]
    if missing:
        raise CheckpointError(f"{path}: lacks {len(missing)} weights of the {model_type} encoder, e.g. "
                              f"{', '.join(missing[:3])}")


def load_transformers_encoder(directory: str) -> TransformersEncoder:
    """The RoBERTa or T5 encoder of `directory` with its tokenizer; nothing is downloaded."""
    import transformers  # pylint: disable=import-outside-toplevel

    directory = os.fspath(directory)
    model_type = _check_files(directory)
    config = transformers.AutoConfig.from_pretrained(directory, local_files_only=True)
    model = getattr(transformers, MODEL_CLASSES[model_type])(config)
    _fill(model, os.path.join(directory, "model.safetensors"), model_type)
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
    return TransformersEncoder(model, tokenizer, model_type, directory)
