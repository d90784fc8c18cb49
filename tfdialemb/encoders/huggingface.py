"""Reads Hugging Face BERT and ELECTRA weights (PyTorch-layout safetensors or TF `tf_model.h5`),
no torch.

Both files are first brought to the PyTorch naming and layout (Linear weights [out, in]), then
mapped to Model Garden's BertEncoderV2 names, where the attention projections are per-head
EinsumDense kernels ([H, heads, head_dim] in, [heads, head_dim, H] out).
"""
import re
from typing import Dict

import numpy as np

from tfdialemb.encoders.config import EncoderConfig

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


def pytorch_to_model_garden(
    state: Dict[str, np.ndarray], config: EncoderConfig
) -> Dict[str, np.ndarray]:
    """Maps a PyTorch-layout BERT or ELECTRA state dict (with or without the `bert.` / `electra.`
    prefix) to V2 names."""
    heads = config.num_attention_heads
    head_dim = config.hidden_size // heads
    converted = {}
    for name, value in state.items():
        name = next((name[len(p):] for p in _PREFIXES if name.startswith(p)), name)
        if _IGNORED.match(name):
            continue
        module, _, param = name.rpartition(".")
        param = {"gamma": "weight", "beta": "bias"}.get(param, param)
        layer = _LAYER.match(module)
        if layer:
            index, sub = layer.groups()
            if sub not in _LAYER_TENSORS:
                converted[name] = value  # reported as unexpected by the assignment
                continue
            target = f"transformer/layer_{index}/{_LAYER_TENSORS[sub]}"
        elif module in _TOP_TENSORS:
            target = _TOP_TENSORS[module]
        else:
            converted[name] = value
            continue
        if target.endswith("/embeddings"):
            converted[target] = value
            continue
        is_norm = "layer_norm" in target
        if is_norm:
            converted[f"{target}/{'gamma' if param == 'weight' else 'beta'}"] = value
            continue
        if param == "weight":
            kernel = value.T  # [in, out]
            if target.endswith(("/query", "/key", "/value")):
                kernel = kernel.reshape(config.hidden_size, heads, head_dim)
            elif target.endswith("/attention_output"):
                kernel = kernel.reshape(heads, head_dim, config.hidden_size)
            converted[f"{target}/kernel"] = kernel
        else:
            bias = value
            if target.endswith(("/query", "/key", "/value")):
                bias = bias.reshape(heads, head_dim)
            converted[f"{target}/bias"] = bias
    return converted


def read_safetensors(path: str) -> Dict[str, np.ndarray]:
    """PyTorch-layout tensors of a `model.safetensors` file."""
    from safetensors.numpy import load_file  # pylint: disable=import-outside-toplevel

    return load_file(path)


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
