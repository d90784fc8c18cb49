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

from tfdialemb.encoders.huggingface import fill_transformers_model
from tfdialemb.encoders.errors import CheckpointError

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


def load_transformers_encoder(directory: str) -> TransformersEncoder:
    """The RoBERTa or T5 encoder of `directory` with its tokenizer; nothing is downloaded."""
    import transformers  # pylint: disable=import-outside-toplevel

    directory = os.fspath(directory)
    model_type = _check_files(directory)
    config = transformers.AutoConfig.from_pretrained(directory, local_files_only=True)
    model = getattr(transformers, MODEL_CLASSES[model_type])(config)
    fill_transformers_model(model, os.path.join(directory, "model.safetensors"), f"{model_type} encoder",
                            optional=("pooler.",))
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
    return TransformersEncoder(model, tokenizer, model_type, directory)
