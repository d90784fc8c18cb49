"""In-graph BERT WordPiece tokenizer (tensorflow-text), identical in ids to transformers' BertTokenizer.

One object serves tf.data pipelines, training code and exported SavedModels. Basic tokenization
follows BERT's reference steps, written as string ops so that it runs inside the graph:
  1. control and unassigned characters are dropped and every whitespace becomes a space;
  2. special tokens ([CLS], [SEP], [EOT], ...) in the text are kept whole, as transformers does;
  3. CJK ideographs are split into single-character words;
  4. NFC normalisation; with lower-casing, lower case then NFD with combining marks removed;
  5. split on whitespace and on every punctuation character (ASCII symbols count as punctuation);
  6. WordPiece, greedy longest-match-first; a word over `max_chars_per_word` characters, or one
     that cannot be pieced, becomes [UNK].
"""
import re
from typing import Dict, Mapping, Optional, Sequence

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.core.pybinds import pywrap_fast_wordpiece_tokenizer_model_builder

from tfdialemb.text.basic_words import CJK, COMBINING_MARK, CONTROL, PUNCTUATION, SPLIT, WHITESPACE
from tfdialemb.text.special_tokens import BERT_SPECIAL_TOKENS, map_special_tokens

_SEPARATOR_RUN = r"[\t\n\r\p{Z}]+"
"""Characters that end up splitting words (whitespace that step 1 turns into a space, and every
Unicode separator), in runs."""


def clean_text(texts) -> tf.Tensor:
    """Step 1: drops control and unassigned characters, turns every whitespace into a space.

    It comes before any regex_split, which stops at a NUL byte.
    """
    texts = tf.convert_to_tensor(texts, tf.string)
    texts = tf.strings.regex_replace(texts, WHITESPACE, " ")
    return tf.strings.regex_replace(texts, CONTROL, "")


def basic_tokenize(texts, lower_case: bool) -> tf.RaggedTensor:
    """BERT's words before WordPiece (steps 1, 3-5), e.g. for length statistics without a vocab."""
    return _split_words(clean_text(texts), lower_case)


def _split_words(texts: tf.Tensor, lower_case: bool) -> tf.RaggedTensor:
    """Steps 3-5: cleaned strings [N] → words [N, (words)]."""
    texts = tf.strings.regex_replace(texts, CJK, r" \0 ")
    texts = tf_text.normalize_utf8(texts, "NFC")
    if lower_case:
        texts = tf.strings.lower(texts, encoding="utf-8")
        texts = tf_text.normalize_utf8(texts, "NFD")
        texts = tf.strings.regex_replace(texts, COMBINING_MARK, "")
    return tf_text.regex_split(texts, SPLIT, keep_delim_regex_pattern=PUNCTUATION)


def _special_rows_replaced(piece_ids: tf.RaggedTensor, special: tf.Tensor) -> tf.RaggedTensor:
    """`piece_ids` [P, (ids)] with each row whose `special` id [P] is not -1 replaced by that one id.

    Built from row offsets with dense gathers: the same rows through ragged masks and a ragged
    concat took a third of a first eager call of the tokenizer.
    """
    is_special = special >= 0
    old_splits = piece_ids.row_splits
    lengths = tf.where(is_special, tf.ones_like(old_splits[1:]), old_splits[1:] - old_splits[:-1])
    splits = tf.concat([tf.zeros([1], lengths.dtype), tf.cumsum(lengths)], axis=0)
    row = tf.repeat(tf.range(tf.size(lengths, out_type=lengths.dtype)), lengths)
    source = tf.gather(old_splits, row) + tf.range(splits[-1]) - tf.gather(splits, row)
    values = piece_ids.flat_values
    # A special row's source index is never read; the appended zero keeps it in range.
    padded = tf.concat([values, tf.zeros([1], values.dtype)], axis=0)
    source = tf.minimum(source, tf.cast(tf.size(values), source.dtype))
    ids = tf.where(tf.gather(is_special, row), tf.gather(special, row), tf.gather(padded, source))
    return tf.RaggedTensor.from_row_splits(ids, splits, validate=False)


class BertTokenizer(tf.Module):
    """Text → WordPiece ids → `[CLS] a [SEP] (b [SEP])` model inputs, all as TensorFlow ops.

    Args:
      vocab: the vocabulary, one token per id (the lines of `vocab.txt`).
      lower_case: lower-case and strip accents (uncased checkpoints).
      special_tokens: overrides for the project's special-token slots, see `map_special_tokens`.
      max_chars_per_word: longer words become [UNK] (BERT's default 100).
    """

    _TF_MODULE_IGNORED_PROPERTIES = tf.Module._TF_MODULE_IGNORED_PROPERTIES | {"vocab", "_ids"}

    def __init__(
        self,
        vocab: Sequence[str],
        lower_case: bool,
        special_tokens: Optional[Mapping[str, str]] = None,
        max_chars_per_word: int = 100,
        name: Optional[str] = None,
    ):
        super().__init__(name=name)
        # Plain Python values, not tracked: wrapping 30k strings for checkpoint tracking took 0.45 s
        # of every model load, and tf.Module would walk them whenever its variables are listed.
        self.vocab = self._no_dependency(list(vocab))
        missing = [t for t in BERT_SPECIAL_TOKENS if t not in self.vocab]
        if missing:
            raise ValueError(f"the vocabulary lacks BERT's special tokens {missing}")
        self.lower_case = bool(lower_case)
        self.max_chars_per_word = int(max_chars_per_word)
        self.special_tokens = map_special_tokens(self.vocab, special_tokens)
        self._ids = self._no_dependency({token: i for i, token in enumerate(self.vocab)})
        self.cls_id = self._ids["[CLS]"]
        self.sep_id = self._ids["[SEP]"]
        self.pad_id = self._ids["[PAD]"]
        self.unk_id = self._ids["[UNK]"]
        self.mask_id = self._ids["[MASK]"]
        whole = {t: self._ids[t] for t in BERT_SPECIAL_TOKENS}
        whole.update({t: self._ids[v] for t, v in self.special_tokens.items()})
        self._special_pattern = "|".join(re.escape(t) for t in sorted(whole, key=len, reverse=True))
        self._special_table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(list(whole)), tf.constant(list(whole.values()), tf.int32)
            ),
            default_value=-1,
        )
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            model_buffer=_wordpiece_model(self.vocab, self.max_chars_per_word), token_out_type=tf.int32)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def token_id(self, token: str) -> int:
        """Id of a vocabulary token or of a project special token such as "[EOT]"."""
        token = self.special_tokens.get(token, token)
        if token not in self._ids:
            raise KeyError(f"{token!r} is neither in the vocabulary nor a project special token")
        return self._ids[token]

    def config(self) -> Dict:
        """What, with the vocabulary, rebuilds this tokenizer (saved next to checkpoints)."""
        return {
            "lower_case": self.lower_case,
            "special_tokens": dict(self.special_tokens),
            "max_chars_per_word": self.max_chars_per_word,
        }

    def tokenize(self, texts, max_tokens: Optional[int] = None) -> tf.RaggedTensor:
        """Strings [N] → WordPiece ids [N, (pieces)] int32, without [CLS] / [SEP].

        With `max_tokens`, only the first of them are needed: each text is cut to a character
        budget first (`bound_texts`), so the work and memory of one huge text stay bounded.
        """
        if max_tokens is not None:
            texts = self.bound_texts(texts, max_tokens)
        pieces = tf_text.regex_split(clean_text(texts), self._special_pattern, self._special_pattern)
        flat = pieces.flat_values
        special = self._special_table.lookup(flat)
        words = _split_words(flat, self.lower_case)
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > self.max_chars_per_word
        word_ids = self._wordpiece.tokenize(tf.where(too_long, "[UNK]", words.flat_values))
        piece_ids = words.with_flat_values(word_ids).merge_dims(1, 2)
        return pieces.with_flat_values(_special_rows_replaced(piece_ids, special)).merge_dims(1, 2)

    def bound_texts(self, texts, max_tokens: int) -> tf.Tensor:
        """Texts whose first `max_tokens` tokens are those of `texts`, at most
        max_tokens · (max_chars_per_word + 1) characters long: runs of separators become one
        space (which splits words the same), then the text is cut. Only text made mostly of
        characters the tokenizer drops, or of words longer than max_chars_per_word, can lose
        tokens it would otherwise keep; every command bounds the same way, so all see the same ids."""
        texts = tf.strings.regex_replace(tf.convert_to_tensor(texts, tf.string), _SEPARATOR_RUN, " ")
        budget = max_tokens * (self.max_chars_per_word + 1)
        return tf.strings.substr(texts, 0, budget, unit="UTF8_CHAR")

    def pack(
        self, segments: Sequence[tf.RaggedTensor], max_length: int, pad_to: Optional[int] = None
    ) -> Dict[str, tf.Tensor]:
        """`[CLS] s1 [SEP] (s2 [SEP])` with round-robin trimming to `max_length` tokens.

        Round-robin trimming keeps the same tokens as transformers' "longest_first". Rows are
        padded to the longest row of the batch, or to `pad_to` when a fixed shape is needed.
        """
        budget = max_length - len(segments) - 1
        if budget < len(segments):
            raise ValueError(f"max_length {max_length} leaves no room for {len(segments)} segment(s)")
        trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(list(segments))
        ids, type_ids = tf_text.combine_segments(trimmed, self.cls_id, self.sep_id)
        if pad_to is not None:
            word_ids, mask = tf_text.pad_model_inputs(ids, max_seq_length=pad_to, pad_value=self.pad_id)
            type_ids, _ = tf_text.pad_model_inputs(type_ids, max_seq_length=pad_to)
        else:
            word_ids = ids.to_tensor(default_value=self.pad_id)
            mask = tf.ones_like(ids).to_tensor()
            type_ids = type_ids.to_tensor()
        return {
            "input_word_ids": tf.cast(word_ids, tf.int32),
            "input_mask": tf.cast(mask, tf.int32),
            "input_type_ids": tf.cast(type_ids, tf.int32),
        }

    def __call__(self, texts, pairs=None, max_length: int = 128, pad_to: Optional[int] = None):
        """Strings [N] (and optional second segments [N]) → padded model inputs."""
        segments = [self.tokenize(texts, max_length)]
        if pairs is not None:
            segments.append(self.tokenize(pairs, max_length))
        return self.pack(segments, max_length=max_length, pad_to=pad_to)


def require_tokens(pieces: tf.RaggedTensor, name: str) -> tf.RaggedTensor:
    """`pieces` [N, (pieces)] of the texts of input `name`, once every text has a token: an empty,
    blank or invisible text is refused, as in training data (`dialogue.parse_dialogue`), which
    holds none. The one rule of every served input of texts."""
    check = tf.debugging.assert_positive(
        pieces.row_lengths(), message=f"{name}: every text needs at least one token; an empty or blank text is refused")
    with tf.control_dependencies([check]):
        return pieces.with_flat_values(tf.identity(pieces.flat_values))


def _wordpiece_model(vocab: Sequence[str], max_chars_per_word: int) -> tf.Tensor:
    """FastWordpieceTokenizer's model for `vocab`, built as its constructor builds it from a vocabulary
    (greedy longest match, "##" suffixes, [UNK], words already split), as a uint8 tensor.

    The constructor turns the model's bytes into a Python list of ints first: for a 30k vocabulary
    that took 0.13 s of every load, where this takes 2 ms. Its byte limit is well above the
    character limit, which is enforced separately, as BERT counts characters.
    """
    model = pywrap_fast_wordpiece_tokenizer_model_builder.build_fast_wordpiece_model(
        list(vocab), 4 * max_chars_per_word, "##", "[UNK]", True, False)
    return tf.constant(np.frombuffer(model, np.uint8))


def read_vocab(path: str) -> list:
    """Lines of a BERT `vocab.txt`, one token per line (trailing newline and `\\r` stripped)."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").rstrip("\r") for line in f]
