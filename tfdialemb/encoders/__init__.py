"""BERT encoders: Model Garden BertEncoderV2, pooling, freezing and checkpoint loading."""
from tfdialemb.encoders.checkpoint import (Pretrained, detect_kind, load_pretrained, load_tokenizer,
                                           packaged_minilm_path, save_pretrained)
from tfdialemb.encoders.config import ConfigError, EncoderConfig
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.pooling import POOLING_METHODS, masked_mean, pool
from tfdialemb.encoders.weights import CheckpointError

__all__ = [
    "CheckpointError",
    "ConfigError",
    "Encoder",
    "EncoderConfig",
    "POOLING_METHODS",
    "Pretrained",
    "detect_kind",
    "load_pretrained",
    "load_tokenizer",
    "masked_mean",
    "packaged_minilm_path",
    "pool",
    "save_pretrained",
]
