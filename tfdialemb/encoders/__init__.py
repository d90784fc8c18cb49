"""BERT encoders: Model Garden BertEncoderV2, pooling, freezing and checkpoint loading."""
from tfdialemb.encoders.checkpoint import Pretrained, detect_kind, load_pretrained, save_pretrained
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
    "masked_mean",
    "pool",
    "save_pretrained",
]
