"""FGC's response augmentation (FGC Sec. 4.2, after EDA, Wei and Zou 2019), in the input pipeline.

Each response gets one operation picked uniformly at random, with strength p (FGC: 0.2):
  - deletion: each word is deleted with probability p; a response that would lose every word keeps
    one of them, drawn uniformly (EDA's rule);
  - swap: word positions are visited in order and each, with probability p, swaps places with
    another position drawn uniformly from the rest, so the words stay the same multiset;
  - synonym: each word that has synonyms (never a stop word) is replaced, with probability p, by
    one of them drawn uniformly.
Words, not word pieces: a word is a piece that does not start with `##` and the `##` pieces after
it (or, for Chinese, a jieba word: `word_starts`), so a multi-piece word moves and goes as a whole; only single-piece words are replaced, since
a synonym table maps vocabulary entries. Augmenting ids in the pipeline rather than text at build
time draws new augmentations every epoch; all randomness is stateless, so a batch's augmentation
depends only on its seed and a resumed run replays the stream exactly
(`tfdialemb.data.batch_seeds`).

Synonyms (`synonym_table`): no registry package ships WordNet's data (nltk and wn download it at
run time), so by default a word's synonyms are its nearest whole-word neighbours by cosine in
the encoder's own input-embedding matrix (data-free; `embedding_synonyms`), or a table read from
a file (`file_synonyms`). Stop words: scikit-learn's maintained English list.
"""
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import tensorflow as tf

OPERATIONS = ("deletion", "swap", "synonym")
WORD_UNITS = ("wordpiece", "jieba")
"""What a word is: a piece and its `##` pieces, or a jieba word (Chinese; see the `fgc` builder)."""
SYNONYMS_PER_WORD = 5


def english_stop_words() -> frozenset:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # pylint: disable=import-outside-toplevel

    return frozenset(ENGLISH_STOP_WORDS)


def replaceable_words(vocab: Sequence[str], stop_words: Iterable[str]) -> np.ndarray:
    """Ids of the vocabulary entries that may be replaced or be a replacement: whole alphabetic
    words of two letters or more that are not stop words."""
    stop = frozenset(stop_words)
    return np.array([i for i, token in enumerate(vocab)
                     if len(token) > 1 and token.isalpha() and token.lower() not in stop], np.int64)


def embedding_synonyms(vocab: Sequence[str], embeddings: np.ndarray, stop_words: Iterable[str],
                       per_word: int = SYNONYMS_PER_WORD, chunk: int = 2048) -> np.ndarray:
    """[V, per_word] int32: each replaceable word's `per_word` nearest other replaceable words by
    cosine of their input embeddings, -1 for every other entry."""
    words = replaceable_words(vocab, stop_words)
    table = np.full([len(vocab), per_word], -1, np.int32)
    if len(words) <= per_word:
        return table
    unit = embeddings[words].astype(np.float32)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    for begin in range(0, len(words), chunk):
        similarity = unit[begin:begin + chunk] @ unit.T
        rows = np.arange(similarity.shape[0])
        similarity[rows, begin + rows] = -np.inf
        nearest = np.argpartition(-similarity, per_word, axis=1)[:, :per_word]
        order = np.argsort(-np.take_along_axis(similarity, nearest, axis=1), axis=1, kind="stable")
        table[words[begin:begin + chunk]] = words[np.take_along_axis(nearest, order, axis=1)]
    return table


def file_synonyms(path: str, vocab: Sequence[str], stop_words: Iterable[str],
                  per_word: int = SYNONYMS_PER_WORD) -> np.ndarray:
    """[V, per_word] int32 from a UTF-8 file of `word<TAB>synonym,synonym,...` lines; words and
    synonyms that are not single replaceable vocabulary entries are left out."""
    ids: Mapping[str, int] = {token: i for i, token in enumerate(vocab)}
    allowed = set(replaceable_words(vocab, stop_words).tolist())
    table = np.full([len(vocab), per_word], -1, np.int32)
    with open(path, encoding="utf-8-sig") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2:
                raise ValueError(f"{path}:{number}: expected `word<TAB>synonym,synonym,...`, got {line.strip()!r}")
            word = ids.get(fields[0].strip())
            if word not in allowed:
                continue
            synonyms = [ids[s.strip()] for s in fields[1].split(",") if ids.get(s.strip()) in allowed]
            synonyms = [s for s in dict.fromkeys(synonyms) if s != word][:per_word]
            table[word, :len(synonyms)] = synonyms
    return table


def continuation_pieces(vocab: Sequence[str]) -> np.ndarray:
    """[V] bool: the `##` pieces that continue a word."""
    return np.array([token.startswith("##") for token in vocab], bool)


def augment_responses(pieces: tf.RaggedTensor, *, continuation: tf.Tensor, synonyms: tf.Tensor,
                      strength: float, seed: tf.Tensor, word_starts: Optional[tf.RaggedTensor] = None
                      ) -> tf.RaggedTensor:
    """One EDA operation per row of `pieces` [B, (pieces)] (see the module docstring).

    `continuation` [V] bool from `continuation_pieces`, `synonyms` [V, K] int32 from a synonym
    table, `seed` a [2] stateless seed. `word_starts` [B, (pieces)] bool, when given, says where
    words start instead (e.g. jieba's words of a Chinese response, `words_of_rows`)."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"augmentation strength must be in [0, 1], got {strength}")
    pieces = tf.cast(pieces, tf.int32)
    rows = tf.cast(pieces.nrows(), tf.int32)
    seeds = tf.unstack(tf.random.experimental.stateless_split(seed, 6))
    operation = tf.random.stateless_uniform([rows], seeds[0], 0, len(OPERATIONS), dtype=tf.int32)

    values = pieces.values
    piece_row = tf.cast(pieces.value_rowids(), tf.int32)
    first_in_row = tf.equal(tf.ragged.range(pieces.row_lengths()).values, 0)
    if word_starts is None:
        starts_word = first_in_row | ~tf.gather(continuation, values)
    else:
        starts_word = first_in_row | tf.cast(word_starts.values, tf.bool)
    word_of_piece = tf.cumsum(tf.cast(starts_word, tf.int32)) - 1
    words_per_row = tf.math.unsorted_segment_sum(tf.cast(starts_word, tf.int32), piece_row, rows)
    total_words = tf.reduce_sum(words_per_row)
    word_row = tf.repeat(tf.range(rows), words_per_row)
    word_operation = tf.gather(operation, word_row)
    first_word = tf.cumsum(words_per_row, exclusive=True)

    values = _replace_synonyms(values, word_of_piece, total_words, word_operation, synonyms, strength,
                               seeds[1])
    deleted = _deleted_words(word_row, word_operation, words_per_row, first_word, strength, seeds[2], seeds[3])
    permutation = _swapped_positions(operation, words_per_row, strength, seeds[4], seeds[5])

    order = tf.RaggedTensor.from_tensor(permutation, lengths=tf.cast(words_per_row, tf.int64))
    order += first_word[:, tf.newaxis]
    kept = tf.ragged.boolean_mask(order, ~tf.gather(deleted, order))
    words = tf.RaggedTensor.from_value_rowids(values, tf.cast(word_of_piece, tf.int64),
                                              nrows=tf.cast(total_words, tf.int64))
    return kept.with_values(tf.gather(words, kept.values)).merge_dims(1, 2)


def words_of_rows(words: tf.RaggedTensor):
    """(pieces [B, (pieces)], word_starts [B, (pieces)]) of responses stored as word rows
    [B, (words), (pieces)]."""
    starts = words.with_values(words.values.with_values(
        tf.equal(tf.ragged.range(words.values.row_lengths()).values, 0)))
    return words.merge_dims(1, 2), starts.merge_dims(1, 2)


def _replace_synonyms(values, word_of_piece, total_words, word_operation, synonyms, strength, seed):
    """Single-piece words of rows doing "synonym", each replaced with probability p."""
    pieces_per_word = tf.math.unsorted_segment_sum(tf.ones_like(word_of_piece), word_of_piece, total_words)
    candidates = tf.gather(synonyms, values)  # [pieces, K]
    available = tf.reduce_sum(tf.cast(candidates >= 0, tf.int32), axis=1)
    draws = tf.random.stateless_uniform([tf.size(values), 2], seed)
    replace = ((tf.gather(word_operation, word_of_piece) == OPERATIONS.index("synonym"))
               & tf.equal(tf.gather(pieces_per_word, word_of_piece), 1)
               & (available > 0) & (draws[:, 0] < strength))
    choice = tf.minimum(tf.cast(draws[:, 1] * tf.cast(available, tf.float32), tf.int32),
                        tf.maximum(available - 1, 0))
    return tf.where(replace, tf.gather(candidates, choice, batch_dims=1), values)


def _deleted_words(word_row, word_operation, words_per_row, first_word, strength, seed, rescue_seed):
    """[words] bool: words of rows doing "deletion" dropped with probability p, one word kept in
    a row that would lose them all."""
    deleted = ((word_operation == OPERATIONS.index("deletion"))
               & (tf.random.stateless_uniform(tf.shape(word_row), seed) < strength))
    rows = tf.shape(words_per_row)[0]
    lost = tf.math.unsorted_segment_sum(tf.cast(deleted, tf.int32), word_row, rows)
    emptied = (lost == words_per_row) & (words_per_row > 0)
    rescued = first_word + tf.minimum(
        tf.cast(tf.random.stateless_uniform([rows], rescue_seed) * tf.cast(words_per_row, tf.float32), tf.int32),
        tf.maximum(words_per_row - 1, 0))
    kept_anyway = tf.gather(emptied, word_row) & tf.equal(tf.range(tf.size(word_row)), tf.gather(rescued, word_row))
    return deleted & ~kept_anyway


def _swapped_positions(operation, words_per_row, strength, seed, partner_seed):
    """[B, W] word order of each row: the identity, or for rows doing "swap" the result of
    visiting positions 0..n-1 and swapping each, with probability p, with a uniform other one."""
    rows = tf.shape(words_per_row)[0]
    width = tf.reduce_max(tf.concat([words_per_row, [0]], axis=0))
    columns = tf.range(width)[tf.newaxis, :]
    draws = tf.random.stateless_uniform([rows, width], seed)
    partners = tf.random.stateless_uniform([rows, width], partner_seed)
    swapping = operation == OPERATIONS.index("swap")

    def visit(position, permutation):
        active = swapping & (position < words_per_row) & (words_per_row > 1) & (draws[:, position] < strength)
        other = tf.cast(partners[:, position] * tf.cast(words_per_row - 1, tf.float32), tf.int32)
        other = tf.minimum(other, tf.maximum(words_per_row - 2, 0))
        other += tf.cast(other >= position, tf.int32)
        here = permutation[:, position]
        there = tf.gather(permutation, tf.maximum(other, 0)[:, tf.newaxis], batch_dims=1)[:, 0]
        at_here = active[:, tf.newaxis] & tf.equal(columns, position)
        at_there = active[:, tf.newaxis] & tf.equal(columns, other[:, tf.newaxis])
        permutation = tf.where(at_here, there[:, tf.newaxis],
                               tf.where(at_there, here[:, tf.newaxis], permutation))
        return position + 1, permutation

    identity = tf.tile(columns, [rows, 1])
    _, permutation = tf.while_loop(lambda position, _: position < width, visit, (0, identity))
    return permutation
