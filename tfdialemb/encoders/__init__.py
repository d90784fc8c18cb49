"""BERT encoders: Model Garden BertEncoderV2, pooling, freezing and checkpoint loading."""
from tfdialemb.core.lazy_exports import lazy_exports

EXPORTS = {
    "CheckpointError": "errors",
    "ConfigError": "config",
    "Encoder": "encoder",
    "EncoderConfig": "config",
    "POOLING_METHODS": "pooling",
    "Pretrained": "checkpoint",
    "detect_kind": "checkpoint",
    "load_pretrained": "checkpoint",
    "load_tokenizer": "checkpoint",
    "masked_mean": "pooling",
    "packaged_minilm_path": "packaged",
    "pool": "pooling",
    "save_pretrained": "checkpoint",
}
__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
