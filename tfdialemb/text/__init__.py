"""In-graph tokenization (tensorflow-text) and the project's special-token mapping."""
from tfdialemb.text.special_tokens import BERT_SPECIAL_TOKENS, PROJECT_SPECIAL_TOKENS, map_special_tokens
from tfdialemb.text.tokenizer import BertTokenizer, basic_tokenize, read_vocab

__all__ = [
    "BERT_SPECIAL_TOKENS",
    "BertTokenizer",
    "PROJECT_SPECIAL_TOKENS",
    "basic_tokenize",
    "map_special_tokens",
    "read_vocab",
]
