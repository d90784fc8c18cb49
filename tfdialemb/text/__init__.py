"""In-graph tokenization (tensorflow-text) and the project's special-token mapping."""
from tfdialemb.core.lazy_exports import lazy_exports

EXPORTS = {
    "BERT_SPECIAL_TOKENS": "special_tokens",
    "BertTokenizer": "tokenizer",
    "DialogueInputs": "dialogue_packing",
    "PROJECT_SPECIAL_TOKENS": "special_tokens",
    "PackedDialogues": "dialogue_packing",
    "SEPARATORS": "dialogue_packing",
    "basic_tokenize": "tokenizer",
    "dense_dialogues": "dialogue_packing",
    "map_special_tokens": "special_tokens",
    "pack_dialogues": "dialogue_packing",
    "read_vocab": "tokenizer",
    "separator_id": "dialogue_packing",
}
__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
