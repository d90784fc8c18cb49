"""FGC's response augmentation (FGC Sec. 4.2, after EDA, Wei and Zou 2019), in the input pipeline.

Each response gets one operation picked uniformly at random, with strength p (FGC: 0.2):
  - deletion: each word is deleted with probability p; a response that would lose every word keeps
    one of them, drawn uniformly (EDA's rule);
  - swap: word positions are visited in order and each, with probability p, swaps places with
    another position drawn uniformly from the rest, so the words stay the same multiset;
  - synonym: each word that has synonyms (never a stop word) is replaced, with probability p, by
    one of them drawn uniformly.
The operation is drawn among those that can change the response: deletion needs two words, swap
two different words, synonym replacement a word with synonyms (never the case for Chinese, whose
words are not single vocabulary entries), so no draw is spent on an operation that cannot apply.
With `at_least_one` (the default) an operation that changed nothing changes one word: EDA replaces
and swaps n = max(1, ⌊αl⌋) words (jasonwei20/eda_nlp code/eda.py), and its rule is extended to
deletion here; without it a third of the demo corpus's responses at p = 0.2 come out
unchanged, a dropout-only view (FGC Table 6's weaker SimCSE-style setting). At p = 0 nothing
changes either way.
Words, not word pieces: a word is a piece that does not start with `##` and the `##` pieces after
it (or, for Chinese, a jieba word: `word_starts`), so a multi-piece word moves and goes as a whole;
only single-piece words are replaced, since a synonym table maps vocabulary entries. Augmenting ids
in the pipeline rather than text at build time draws new augmentations every epoch; all randomness
is stateless, so a batch's augmentation depends only on its seed and a resumed run replays the
stream exactly (`tfdialemb.data.batch_seeds`).

Synonyms (`synonym_table`): no registry package ships WordNet's data (nltk and wn download it at
run time), so by default a word's synonyms are its nearest whole-word neighbours by cosine in
the encoder's own input-embedding matrix (data-free; `embedding_synonyms`), without the
neighbours that are its opposites (`tfdialemb.data.antonyms`: embedding neighbours include
good→bad, happy→unhappy, cold→warm), or a table read from a file (`file_synonyms`; WordNet's
synonyms, as EDA uses, are the faithful choice: docs/methods/fgc.md). Stop words:
scikit-learn's maintained English list.
"""
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import tensorflow as tf

from tfdialemb.data import antonyms

OPERATIONS = ("deletion", "swap", "synonym")
SYNONYMS_PER_WORD = 5


def replaceable_words(vocab: Sequence[str], stop_words: Iterable[str]) -> np.ndarray:
    """Ids of the vocabulary entries that may be replaced or be a replacement: whole alphabetic
    words of two letters or more that are not stop words."""
    stop = frozenset(stop_words)
    return np.array([i for i, token in enumerate(vocab)
                     if len(token) > 1 and token.isalpha() and token.lower() not in stop], np.int64)


def embedding_synonyms(vocab: Sequence[str], embeddings: np.ndarray, stop_words: Iterable[str],
                       per_word: int = SYNONYMS_PER_WORD, chunk: int = 2048,
                       candidates_per_word: int = 3 * SYNONYMS_PER_WORD) -> np.ndarray:
    """[V, per_word] int32: each replaceable word's `per_word` nearest other replaceable words by
    cosine of their input embeddings that are not its opposites (`antonyms.are_opposites`), among
    its `candidates_per_word` nearest; -1 for every other entry and unfilled slot."""
    words = replaceable_words(vocab, stop_words)
    table = np.full([len(vocab), per_word], -1, np.int32)
    if len(words) <= per_word:
        return table
    considered = min(max(candidates_per_word, per_word), len(words) - 1)
    unit = embeddings[words].astype(np.float32)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    for begin in range(0, len(words), chunk):
        similarity = unit[begin:begin + chunk] @ unit.T
        rows = np.arange(similarity.shape[0])
        similarity[rows, begin + rows] = -np.inf
        nearest = np.argpartition(-similarity, considered, axis=1)[:, :considered]
        order = np.argsort(-np.take_along_axis(similarity, nearest, axis=1), axis=1, kind="stable")
        for word, neighbours in zip(words[begin:begin + chunk], words[np.take_along_axis(nearest, order, axis=1)]):
            kept = [n for n in neighbours if not antonyms.are_opposites(vocab[word], vocab[n])][:per_word]
            table[word, :len(kept)] = kept
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
                      strength: float, seed: tf.Tensor, word_starts: Optional[tf.RaggedTensor] = None,
                      at_least_one: bool = True) -> tf.RaggedTensor:
    """One EDA operation per row of `pieces` [B, (pieces)] (see the module docstring).

    `continuation` [V] bool from `continuation_pieces`, `synonyms` [V, K] int32 from a synonym
    table, `seed` a [2] stateless seed. `word_starts` [B, (pieces)] bool, when given, says where
    words start instead (e.g. jieba's words of a Chinese response, `words_of_rows`). The operation
    is drawn among those that can change the row; with `at_least_one` (and a strength above 0) it
    changes at least one word."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"augmentation strength must be in [0, 1], got {strength}")
    pieces = tf.cast(pieces, tf.int32)
    rows = tf.cast(pieces.nrows(), tf.int32)
    seeds = tf.unstack(tf.random.experimental.stateless_split(seed, 12))

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
    first_word = tf.cumsum(words_per_row, exclusive=True)
    words = tf.RaggedTensor.from_value_rowids(values, tf.cast(word_of_piece, tf.int64),
                                              nrows=tf.cast(total_words, tf.int64))
    word_text = tf.strings.reduce_join(tf.strings.as_string(words), axis=1, separator=" ")

    replaceable = _replaceable_pieces(values, word_of_piece, total_words, synonyms)
    # What each operation needs to change a row: two words (deletion), two different words (swap),
    # a single-piece word with synonyms (synonym replacement).
    distinct = tf.math.unsorted_segment_max(
        tf.cast(tf.not_equal(word_text, tf.gather(word_text, tf.gather(first_word, word_row))), tf.int32),
        word_row, rows) > 0
    has_synonym = tf.math.unsorted_segment_max(tf.cast(replaceable, tf.int32), piece_row, rows) > 0
    applicable = tf.stack([words_per_row > 1, distinct, has_synonym], axis=1)
    operation = _draw_applicable(applicable, seeds[0])
    word_operation = tf.gather(operation, word_row)
    forced = at_least_one and strength > 0

    values = _replace_synonyms(values, piece_row, rows, word_of_piece, word_operation, replaceable, synonyms,
                               strength, seeds[1], seeds[6] if forced else None)
    deleted = _deleted_words(word_row, word_operation, words_per_row, first_word, strength, seeds[2], seeds[3],
                             seeds[7] if forced else None)
    permutation = _swapped_positions(operation, words_per_row, strength, seeds[4], seeds[5])
    if forced:
        permutation = _swap_if_unchanged(permutation, operation, word_text, word_row, words_per_row, first_word,
                                         seeds[8], seeds[9])

    order = tf.RaggedTensor.from_tensor(permutation, lengths=tf.cast(words_per_row, tf.int64))
    order += first_word[:, tf.newaxis]
    kept = tf.ragged.boolean_mask(order, ~tf.gather(deleted, order))
    words = words.with_values(values)
    return kept.with_values(tf.gather(words, kept.values)).merge_dims(1, 2)


def words_of_rows(words: tf.RaggedTensor):
    """(pieces [B, (pieces)], word_starts [B, (pieces)]) of responses stored as word rows
    [B, (words), (pieces)]."""
    starts = words.with_values(words.values.with_values(
        tf.equal(tf.ragged.range(words.values.row_lengths()).values, 0)))
    return words.merge_dims(1, 2), starts.merge_dims(1, 2)


def _replaceable_pieces(values, word_of_piece, total_words, synonyms):
    """[pieces] bool: single-piece words that have synonyms (only a whole word is replaced)."""
    pieces_per_word = tf.math.unsorted_segment_sum(tf.ones_like(word_of_piece), word_of_piece, total_words)
    available = tf.reduce_sum(tf.cast(tf.gather(synonyms, values) >= 0, tf.int32), axis=1)
    return tf.equal(tf.gather(pieces_per_word, word_of_piece), 1) & (available > 0)


def _draw_applicable(applicable, seed):
    """[B] int32: per row an operation drawn uniformly among its applicable ones ([B, 3] bool), -1
    where none applies (the row stays as it is): drawing again until one applies, in one draw."""
    count = tf.reduce_sum(tf.cast(applicable, tf.int32), axis=1)
    pick = tf.minimum(tf.cast(tf.random.stateless_uniform(tf.shape(count), seed) * tf.cast(count, tf.float32),
                              tf.int32), tf.maximum(count - 1, 0))
    rank = tf.cumsum(tf.cast(applicable, tf.int32), axis=1) - 1
    chosen = applicable & tf.equal(rank, pick[:, tf.newaxis])
    return tf.where(count > 0, tf.argmax(tf.cast(chosen, tf.int32), axis=1, output_type=tf.int32), -1)


def _one_per_row(candidates, item_row, rows, seed):
    """[items] bool: one item drawn uniformly among the `candidates` of each row that has any."""
    count = tf.math.unsorted_segment_sum(tf.cast(candidates, tf.int32), item_row, rows)
    pick = tf.minimum(tf.cast(tf.random.stateless_uniform([rows], seed) * tf.cast(count, tf.float32), tf.int32),
                      tf.maximum(count - 1, 0))
    rank = tf.cumsum(tf.cast(candidates, tf.int32)) - 1 - tf.gather(tf.cumsum(count, exclusive=True), item_row)
    return candidates & tf.equal(rank, tf.gather(pick, item_row))


def _replace_synonyms(values, piece_row, rows, word_of_piece, word_operation, replaceable, synonyms, strength,
                      seed, force_seed):
    """Replaceable words of rows doing "synonym", each replaced with probability p (with
    `force_seed`, one drawn uniformly in a row where none was)."""
    candidates = tf.gather(synonyms, values)  # [pieces, K]
    available = tf.reduce_sum(tf.cast(candidates >= 0, tf.int32), axis=1)
    draws = tf.random.stateless_uniform([tf.size(values), 2], seed)
    eligible = (tf.gather(word_operation, word_of_piece) == OPERATIONS.index("synonym")) & replaceable
    replace = eligible & (draws[:, 0] < strength)
    if force_seed is not None:
        none = tf.math.unsorted_segment_max(tf.cast(replace, tf.int32), piece_row, rows) == 0
        replace |= _one_per_row(eligible & tf.gather(none, piece_row), piece_row, rows, force_seed)
    choice = tf.minimum(tf.cast(draws[:, 1] * tf.cast(available, tf.float32), tf.int32),
                        tf.maximum(available - 1, 0))
    return tf.where(replace, tf.gather(candidates, choice, batch_dims=1), values)


def _deleted_words(word_row, word_operation, words_per_row, first_word, strength, seed, rescue_seed, force_seed):
    """[words] bool: words of rows doing "deletion" dropped with probability p (with `force_seed`,
    one drawn uniformly in a row where none was), one word kept in a row that would lose them all."""
    doing = word_operation == OPERATIONS.index("deletion")
    deleted = doing & (tf.random.stateless_uniform(tf.shape(word_row), seed) < strength)
    rows = tf.shape(words_per_row)[0]
    if force_seed is not None:
        none = tf.math.unsorted_segment_sum(tf.cast(deleted, tf.int32), word_row, rows) == 0
        deleted |= _one_per_row(doing & tf.gather(none, word_row), word_row, rows, force_seed)
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


def _swap_if_unchanged(permutation, operation, word_text, word_row, words_per_row, first_word, seed, partner_seed):
    """`permutation` [B, W] where it changes the text of a row doing "swap"; elsewhere in such rows
    two different words drawn uniformly (the first among all, the second among those unlike it)
    change places."""
    rows = tf.shape(words_per_row)[0]
    columns = tf.range(tf.shape(permutation)[1])[tf.newaxis, :]
    valid = columns < words_per_row[:, tf.newaxis]
    text = tf.concat([word_text, [""]], axis=0)  # the extra entry stands for positions past a row's end
    beyond = tf.size(word_text)
    placed = tf.gather(text, tf.where(valid, permutation + first_word[:, tf.newaxis], beyond))
    original = tf.gather(text, tf.where(valid, columns + first_word[:, tf.newaxis], beyond))
    unchanged = (operation == OPERATIONS.index("swap")) & tf.reduce_all(tf.equal(placed, original), axis=1)
    position = tf.range(tf.size(word_row)) - tf.gather(first_word, word_row)  # each word's place in its row
    in_unchanged = tf.gather(unchanged, word_row)
    first = _one_per_row(in_unchanged, word_row, rows, seed)
    first_place = tf.math.unsorted_segment_max(tf.where(first, position, -1), word_row, rows)
    first_text = tf.gather(text, tf.where(first_place >= 0, first_word + first_place, beyond))
    second = _one_per_row(in_unchanged & tf.not_equal(word_text, tf.gather(first_text, word_row)), word_row, rows,
                          partner_seed)
    second_place = tf.math.unsorted_segment_max(tf.where(second, position, -1), word_row, rows)
    swap = unchanged & (first_place >= 0) & (second_place >= 0)
    at_first = swap[:, tf.newaxis] & tf.equal(columns, first_place[:, tf.newaxis])
    at_second = swap[:, tf.newaxis] & tf.equal(columns, second_place[:, tf.newaxis])
    identity = tf.tile(columns, [rows, 1])
    forced = tf.where(at_first, second_place[:, tf.newaxis], tf.where(at_second, first_place[:, tf.newaxis], identity))
    return tf.where(swap[:, tf.newaxis], forced, permutation)
