"""In-graph tokenization (tensorflow-text) and the project's special-token mapping."""
from tfdialemb.text.dialogue_packing import (
    SEPARATORS, DialogueInputs, PackedDialogues, dense_dialogues, pack_dialogues, separator_id)
from tfdialemb.text.special_tokens import BERT_SPECIAL_TOKENS, PROJECT_SPECIAL_TOKENS, map_special_tokens
from tfdialemb.text.tokenizer import BertTokenizer, basic_tokenize, read_vocab

__all__ = [
    "BERT_SPECIAL_TOKENS",
    "BertTokenizer",
    "DialogueInputs",
    "PROJECT_SPECIAL_TOKENS",
    "PackedDialogues",
    "SEPARATORS",
    "basic_tokenize",
    "dense_dialogues",
    "map_special_tokens",
    "pack_dialogues",
    "read_vocab",
    "separator_id",
]
