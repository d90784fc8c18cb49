"""TF Serving's model layout: numbered versions, written atomically, with warm-up requests.

  EXPORT_DIR/N/saved_model.pb, N/variables/       the SavedModel and its signatures
  EXPORT_DIR/N/assets.extra/tf_serving_warmup_requests
                                                  PredictionLog records that TF Serving replays
                                                  before it reports the version available

N/ appears complete or not at all (TF Serving polls EXPORT_DIR and would otherwise load a
half-written version), and an existing version is never overwritten.
"""
import os
import re
from typing import Mapping, NamedTuple, Optional, Sequence

import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.core.files import atomic_directory
from tfdialemb.text.tokenizer import BertTokenizer

SIGNATURE_KEY = "serving_default"
VERSION_NAME = "[0-9]+"
"""A version directory's name (a regular expression): TF Serving serves only numeric ones."""
WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
MAX_WARMUP_RECORDS = 1000
"""TF Serving refuses to load a version whose warm-up file holds more records than this."""
SignatureFunction = tf.types.experimental.GenericFunction
"""A tf.function with an input_signature of named TensorSpecs, returning a dict of tensors."""


def versions(export_dir: str) -> list:
    """The numeric subdirectories of `export_dir`, ascending: TF Serving serves only those, so
    anything else there is ignored."""
    if not os.path.isdir(export_dir):
        return []
    return sorted(int(name) for name in os.listdir(export_dir)
                  if re.fullmatch(VERSION_NAME, name) and os.path.isdir(os.path.join(export_dir, name)))


def next_version(export_dir: str) -> int:
    """One more than the highest version of `export_dir`, else 1."""
    return max(versions(export_dir), default=0) + 1


def saved_model_dir(path: str) -> str:
    """The SavedModel `path` names: a version directory itself, or the highest version of an
    export directory, as TF Serving would serve it."""
    if os.path.isfile(os.path.join(path, "saved_model.pb")):
        return path
    found = versions(path)
    if not found:
        raise FileNotFoundError(f"{path}: neither a SavedModel (saved_model.pb) nor an export directory "
                                "with numbered versions; write one with `python -m tfdialemb.export`")
    return os.path.join(path, str(found[-1]))


def version_dir(export_dir: str, version: Optional[int] = None) -> str:
    """Absolute path of the version to write (default: `next_version`); it must not exist."""
    export_dir = os.path.abspath(export_dir)
    version = next_version(export_dir) if version is None else version
    if version < 1:
        raise ValueError(f"version must be a positive integer, got {version}")
    target = os.path.join(export_dir, str(version))
    if os.path.exists(target):
        raise FileExistsError(f"{target}: version {version} already exists; pick another --version")
    return target


def encoder_module(encoder: Encoder, tokenizer: BertTokenizer) -> tf.Module:
    """The object to save, before its signature functions are attached: the tokenizer's
    resources and the encoder's variables.

    The Keras encoder itself is left out: saving it would also trace Keras' own restore
    functions, which TF Serving never calls (a third of the export time for MiniLM-L6).
    """
    module = tf.Module()
    module.tokenizer = tokenizer
    module.encoder_variables = list(encoder.variables)
    return module


def each_then_all(items: Sequence) -> list:
    """Warm-up batches: each item alone (the usual one-item request), then all of them in one
    request, so that both a single row and a full batch are run before serving."""
    return [[item] for item in items] + ([list(items)] if items else [])


def predict_log(signature: str, inputs: Mapping[str, np.ndarray]) -> bytes:
    """One serialized warm-up record: a PredictRequest of `inputs` to `signature`."""
    request = predict_pb2.PredictRequest()
    request.model_spec.signature_name = signature
    for name, value in inputs.items():
        request.inputs[name].CopyFrom(tf.make_tensor_proto(value))
    log = prediction_log_pb2.PredictionLog(
        predict_log=prediction_log_pb2.PredictLog(request=request))
    return log.SerializeToString()


def check_record_count(records: Sequence[bytes], source: str) -> None:
    """ValueError when `records`, made from `source` (e.g. "5 warm-up sentences"), are more
    than TF Serving loads."""
    if not records:
        raise ValueError(f"{source} make no warm-up records")
    if len(records) > MAX_WARMUP_RECORDS:
        raise ValueError(f"{source} make {len(records)} warm-up records; TF Serving loads at "
                         f"most {MAX_WARMUP_RECORDS}")


class Servable(NamedTuple):
    """What one export writes: the module to save, its signatures and the warm-up requests."""
    module: tf.Module
    signatures: Mapping[str, SignatureFunction]
    records: Sequence[bytes]


def write_version(module: tf.Module, signatures: Mapping[str, SignatureFunction],
                  records: Sequence[bytes], export_dir: str, version: Optional[int] = None) -> str:
    """Writes `export_dir/<version>/` (the SavedModel of `module` with `signatures`, and the
    warm-up `records`) and returns its path.

    Everything is written to a hidden sibling first and renamed into place when complete.
    """
    target = version_dir(export_dir, version)
    with atomic_directory(target) as staging:
        tf.saved_model.save(module, staging, signatures=dict(signatures))
        os.makedirs(os.path.dirname(os.path.join(staging, WARMUP_FILE)))
        with tf.io.TFRecordWriter(os.path.join(staging, WARMUP_FILE)) as writer:
            for record in records:
                writer.write(record)
    return target


def describe_signature(name: str, function: SignatureFunction) -> str:
    """`name: input dtype shape, ... -> output dtype shape, ...` of a signature function."""
    concrete = function.get_concrete_function()
    inputs = ", ".join(f"{spec.name} {spec.dtype.name} {spec.shape.as_list()}"
                       for spec in concrete.structured_input_signature[0])
    outputs = ", ".join(f"{key} {value.dtype.name} {value.shape.as_list()}"
                        for key, value in concrete.structured_outputs.items())
    return f"{name}: {inputs} -> {outputs}"
