"""Reads Hugging Face BERT and ELECTRA weights (PyTorch-layout safetensors or TF `tf_model.h5`),
no torch.

Both files are first brought to the PyTorch naming and layout (Linear weights [out, in]), then
mapped to Model Garden's BertEncoderV2 names, where the attention projections are per-head
EinsumDense kernels ([H, heads, head_dim] in, [heads, head_dim, H] out).
"""
import json
import os
import re
import struct
from typing import Callable, Dict, Iterator, Mapping, Sequence, Tuple

import ml_dtypes
import numpy as np

from tfdialemb.encoders.config import EncoderConfig
from tfdialemb.encoders.errors import CheckpointError

# Tensors of a Hugging Face BERT or ELECTRA file that the encoder does not use (the pre-training
# heads, ELECTRA's discriminator head and generator).
_IGNORED = re.compile(r"^(embeddings\.position_ids|cls\..*|nsp\..*|mlm\..*|discriminator_predictions\..*|"
                      r"generator.*)$")
_PREFIXES = ("bert.", "electra.")
_LAYER = re.compile(r"^encoder\.layer\.(\d+)\.(.+)$")
_LAYER_TENSORS = {
    "attention.self.query": "self_attention/query",
    "attention.self.key": "self_attention/key",
    "attention.self.value": "self_attention/value",
    "attention.output.dense": "self_attention/attention_output",
    "attention.output.LayerNorm": "self_attention_layer_norm",
    "intermediate.dense": "intermediate",
    "output.dense": "output",
    "output.LayerNorm": "output_layer_norm",
}
_TOP_TENSORS = {
    "embeddings.word_embeddings": "word_embeddings/embeddings",
    "embeddings.position_embeddings": "position_embedding/embeddings",
    "embeddings.token_type_embeddings": "type_embeddings/embeddings",
    "embeddings.LayerNorm": "embeddings/layer_norm",
    "pooler.dense": "pooler_transform",
    "embeddings_project": "embedding_projection",
}


class ConvertedWeights(Mapping):
    """Tensors under Model Garden names, each read from `state` and converted only when asked
    for: a loaded model is never held twice in memory beside the variables it is assigned to."""

    def __init__(self, state: Mapping, plan: Dict[str, Tuple[str, Callable[[np.ndarray], np.ndarray]]]):
        self._state = state
        self._plan = plan

    def __getitem__(self, name: str) -> np.ndarray:
        source, convert = self._plan[name]
        return convert(self._state[source])

    def __contains__(self, name) -> bool:
        return name in self._plan  # without reading the tensor, as Mapping's default would

    def __iter__(self) -> Iterator[str]:
        return iter(self._plan)

    def __len__(self) -> int:
        return len(self._plan)


def pytorch_to_model_garden(state: Mapping, config: EncoderConfig) -> ConvertedWeights:
    """Maps a PyTorch-layout BERT or ELECTRA state dict (with or without the `bert.` / `electra.`
    prefix) to V2 names; names it does not know keep theirs, to be reported as unexpected."""
    plan = {}
    for name in state:
        short = next((name[len(p):] for p in _PREFIXES if name.startswith(p)), name)
        if _IGNORED.match(short):
            continue
        target, convert = _conversion(short, config)
        plan[target] = (name, convert)
    return ConvertedWeights(state, plan)


def _conversion(name: str, config: EncoderConfig) -> Tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """(V2 name, how the value changes) of one tensor: Linear weights [out, in] become kernels
    [in, out], per head for the attention projections."""
    keep = lambda value: value  # noqa: E731
    module, _, param = name.rpartition(".")
    param = {"gamma": "weight", "beta": "bias"}.get(param, param)
    layer = _LAYER.match(module)
    if layer:
        index, sub = layer.groups()
        if sub not in _LAYER_TENSORS:
            return name, keep
        target = f"transformer/layer_{index}/{_LAYER_TENSORS[sub]}"
    elif module in _TOP_TENSORS:
        target = _TOP_TENSORS[module]
    else:
        return name, keep
    if target.endswith("/embeddings"):
        return target, keep
    if "layer_norm" in target:
        return f"{target}/{'gamma' if param == 'weight' else 'beta'}", keep
    hidden, heads = config.hidden_size, config.num_attention_heads
    per_head = [heads, hidden // heads]
    if param == "weight":
        if target.endswith(("/query", "/key", "/value")):
            return f"{target}/kernel", lambda value: value.T.reshape([hidden] + per_head)
        if target.endswith("/attention_output"):
            return f"{target}/kernel", lambda value: value.T.reshape(per_head + [hidden])
        return f"{target}/kernel", lambda value: value.T
    if target.endswith(("/query", "/key", "/value")):
        return f"{target}/bias", lambda value: value.reshape(per_head)
    return f"{target}/bias", keep


SAFETENSORS_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
                      "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
                      "BOOL": np.bool_}


MAX_SAFETENSORS_HEADER = 100 * 1024 * 1024
"""The safetensors format's own limit on the JSON header."""


class SafetensorsError(OSError):
    """A `model.safetensors` that is not one, is cut short or holds a type not read here."""


class SafetensorsFile(Mapping):
    """The tensors of a `model.safetensors` file, each read from disk when asked for.

    The format is an 8-byte little-endian header size, a JSON header {name: {dtype, shape,
    data_offsets}} and the raw tensors. They are read with plain reads rather than the
    safetensors package's memory map, which kept the file's pages resident beside the copies made
    from them (54 MiB of all-MiniLM-L6-v2's loading peak).
    """

    def __init__(self, path: str):
        self._path = path
        try:
            with open(path, "rb") as f:
                (size,) = struct.unpack("<Q", f.read(8))
                file_size = os.fstat(f.fileno()).st_size
                # A Git LFS pointer or other foreign file has no sensible header size.
                if size > min(MAX_SAFETENSORS_HEADER, file_size - 8):
                    raise ValueError(f"a header of {size} bytes does not fit the file")
                header = json.loads(f.read(size))
            self.metadata = header.pop("__metadata__", None) or {}  # e.g. {"format": "pt"}
            self._entries = {name: _checked_entry(name, entry) for name, entry in header.items()}
        except (struct.error, ValueError, TypeError, KeyError, AttributeError) as e:
            raise SafetensorsError(f"{path}: not a safetensors file ({type(e).__name__}: {e})") from None
        self._data_start = 8 + size
        # Told from the header alone, so a copy cut short is refused on opening, not at the tensor it cut.
        needed = self._data_start + max((end for _, _, (_, end) in self._entries.values()), default=0)
        if file_size < needed:
            raise SafetensorsError(f"{path}: cut short: its header places tensors up to byte {needed}, and the "
                                   f"file has {file_size} bytes")

    def __getitem__(self, name: str) -> np.ndarray:
        dtype, shape, (begin, end) = self._entries[name]
        if isinstance(dtype, str):
            raise SafetensorsError(f"{self._path}: {name} has dtype {dtype}, which is not read here")
        count = int(np.prod(shape, dtype=np.int64))
        with open(self._path, "rb") as f:
            f.seek(self._data_start + begin)
            data = np.fromfile(f, dtype=dtype, count=count)
        if data.size != count or end - begin != count * data.itemsize:
            raise SafetensorsError(f"{self._path}: {name} is cut short or mis-sized: the file is incomplete")
        return data.reshape(shape)

    def __contains__(self, name) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _checked_entry(name: str, entry: Mapping) -> Tuple:
    """(little-endian numpy dtype, or the format's name of one not read here; shape; offsets)."""
    begin, end = (int(offset) for offset in entry["data_offsets"])
    if not 0 <= begin <= end:
        raise ValueError(f"{name} has data offsets {begin}..{end}")
    dtype = SAFETENSORS_DTYPES.get(entry["dtype"])
    dtype = np.dtype(dtype).newbyteorder("<") if dtype is not None else entry["dtype"]
    return dtype, tuple(int(d) for d in entry["shape"]), (begin, end)


def read_safetensors(path: str) -> SafetensorsFile:
    """PyTorch-layout tensors of a `model.safetensors` file, read one at a time."""
    return SafetensorsFile(path)


def fill_transformers_model(model, path: str, what: str, optional: Sequence[str] = ()) -> None:
    """Assigns a PyTorch-layout model.safetensors' tensors to a transformers TensorFlow model's
    variables, by transformers' PyTorch→TF names (no torch). `what` names the model in errors; a
    variable whose PyTorch name contains one of `optional` may be missing from the file."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from transformers.modeling_tf_pytorch_utils import (  # pylint: disable=import-outside-toplevel
        load_pytorch_state_dict_in_tf2_model,
    )


    try:
        # Its warnings would call the optional variables a model to train; the checks below name
        # what matters.
        _, info = load_pytorch_state_dict_in_tf2_model(model, read_safetensors(path), allow_missing_keys=True,
                                                       output_loading_info=True, skip_logger_warnings=True)
    except (ValueError, tf.errors.OpError, SafetensorsError) as e:
        first_line = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: its weights do not fit config.json ({first_line})") from None
    missing = [name for name in info["missing_keys"] if not any(part in name for part in optional)]
    if missing:
        raise CheckpointError(f"{path}: lacks {len(missing)} weights of the {what}, e.g. {', '.join(missing[:3])}")


_TF_NAME = re.compile(r"(?:^|/)(?:bert|electra)/((?:embeddings|embeddings_project|encoder|pooler)/.+?)(?::0)?$")


def read_tf_h5(path: str) -> Dict[str, np.ndarray]:
    """Tensors of a transformers `tf_model.h5`, renamed and transposed to the PyTorch layout."""
    import h5py  # pylint: disable=import-outside-toplevel

    state = {}

    def visit(name, item):
        if not isinstance(item, h5py.Dataset):
            return
        match = _TF_NAME.search(name)
        if not match:
            return
        parts = match.group(1).split("/")
        parts = [p.replace("layer_._", "") for p in parts]
        if parts[0] == "encoder":
            parts.insert(1, "layer")
        leaf = parts[-1]
        value = np.asarray(item)
        if leaf == "kernel":
            parts[-1], value = "weight", value.T
        elif leaf in ("gamma", "embeddings"):
            parts[-1] = "weight"
        elif leaf == "beta":
            parts[-1] = "bias"
        state[".".join(parts)] = value

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return state
