"""FGC's EDA operations on word-piece ids: hand-made vocabularies, fixed seeds, and the
properties FGC Sec. 4.2 / EDA ask for, checked on every row of many draws."""
import collections

import numpy as np
import tensorflow as tf

from tfdialemb.data import response_augmentation as aug

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "dog",
         "kitten", "rug", "un", "##believ", "##able", "and", "feline", "puppy", "carpet"]
ID = {t: i for i, t in enumerate(VOCAB)}
STOP = {"the", "on", "and"}


def ids(words):
    return [ID[w] for w in words.split()]


def words_of(row):
    """Whole words of a piece-id row: a `##` piece joins the word before it."""
    out = []
    for i in row:
        token = VOCAB[i]
        if token.startswith("##") and out:
            out[-1] += token[2:]
        else:
            out.append(token)
    return out


def table(mapping):
    synonyms = np.full([len(VOCAB), aug.SYNONYMS_PER_WORD], -1, np.int32)
    for word, replacements in mapping.items():
        synonyms[ID[word], :len(replacements)] = [ID[r] for r in replacements]
    return tf.constant(synonyms)


SYNONYMS = table({"cat": ["feline", "kitten"], "mat": ["rug", "carpet"], "dog": ["puppy"]})
RESPONSES = [ids("the cat sat on the mat"), ids("un ##believ ##able dog"), ids("cat"), [],
             ids("the dog and the cat sat on the rug")]


CONTINUATION = tf.constant(aug.continuation_pieces(VOCAB))


@tf.function(reduce_retracing=True)
def _augment(pieces, seed, strength):
    return aug.augment_responses(pieces, continuation=CONTINUATION, synonyms=SYNONYMS, strength=strength,
                                 seed=seed)


def run(strength, seed, rows=RESPONSES):
    pieces = tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)
    return _augment(pieces, tf.constant([seed, 0], tf.int64), strength).to_list()


def operation_of(original, augmented):
    """Which operation explains a row: same words in order (none or synonym), a sub-sequence
    (deletion) or a permutation (swap)."""
    a, b = words_of(original), words_of(augmented)
    if a == b:
        return "unchanged"
    if len(a) == len(b) and sorted(a) != sorted(b):
        return "synonym"
    if len(a) == len(b):
        return "swap"
    return "deletion"


def test_every_row_is_explained_by_one_operation_and_all_occur():
    seen = collections.Counter()
    for seed in range(60):
        for original, augmented in zip(RESPONSES, run(0.5, seed)):
            kind = operation_of(original, augmented)
            seen[kind] += 1
            a, b = words_of(original), words_of(augmented)
            if kind == "deletion":
                it = iter(a)
                assert all(w in it for w in b), (a, b)  # an ordered sub-sequence
                assert b, "deletion emptied a response"
            elif kind == "swap":
                assert collections.Counter(a) == collections.Counter(b)
            elif kind == "synonym":
                for x, y in zip(a, b):
                    assert x == y or y in {"feline", "kitten", "rug", "carpet", "puppy"}
                    assert x not in STOP or x == y
    assert {"deletion", "swap", "synonym"} <= set(seen)


def test_deletion_never_empties_even_at_strength_one():
    for seed in range(40):
        for original, augmented in zip(RESPONSES, run(1.0, seed)):
            if original:
                assert augmented, (original, seed)
            if operation_of(original, augmented) == "deletion":
                assert len(words_of(augmented)) == 1


def test_multi_piece_words_move_and_go_whole_and_are_never_replaced():
    for seed in range(40):
        augmented = run(1.0, seed, [ids("un ##believ ##able dog")])[0]
        words = words_of(augmented)
        assert all(w in ("unbelievable", "dog", "puppy") for w in words), words


def test_strength_zero_changes_nothing_and_a_seed_replays():
    assert run(0.0, 3) == RESPONSES
    assert run(0.5, 7) == run(0.5, 7)
    assert any(run(0.5, 7) != run(0.5, s) for s in range(8, 12))


def test_embedding_synonyms_are_nearest_whole_words_and_skip_stop_words():
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(len(VOCAB), 8)).astype(np.float32)
    embeddings[ID["feline"]] = embeddings[ID["cat"]] + 0.01
    embeddings[ID["the"]] = embeddings[ID["cat"]] + 0.001  # nearest of all, but a stop word
    synonyms = aug.embedding_synonyms(VOCAB, embeddings, STOP, per_word=2)
    assert synonyms[ID["cat"], 0] == ID["feline"]
    assert ID["the"] not in synonyms
    assert (synonyms[ID["the"]] == -1).all() and (synonyms[ID["##able"]] == -1).all()
    assert (synonyms[ID["[CLS]"]] == -1).all()


def test_file_synonyms_keep_single_vocabulary_words(tmp_path):
    path = tmp_path / "synonyms.tsv"
    path.write_text("cat\tfeline,moggy,the,kitten\nthe\tcat\nzebra\tcat\n", encoding="utf-8")
    synonyms = aug.file_synonyms(str(path), VOCAB, STOP, per_word=3)
    assert synonyms[ID["cat"]].tolist() == [ID["feline"], ID["kitten"], -1]
    assert (synonyms[ID["the"]] == -1).all()


def test_given_word_starts_move_and_delete_whole_words():
    """Jieba's words of a Chinese response (here rows of single-character pieces): deletion and
    swap act on whole rows."""
    rows = tf.ragged.constant([[[ID["un"], ID["the"]], [ID["cat"]], [ID["sat"], ID["on"], ID["mat"]]]],
                              dtype=tf.int32, ragged_rank=2)
    pieces, starts = aug.words_of_rows(rows)
    assert starts.to_list() == [[True, False, True, True, False, False]]
    words = {("un", "the"), ("cat",), ("sat", "on", "mat")}
    for seed in range(40):
        out = aug.augment_responses(pieces, continuation=CONTINUATION, synonyms=SYNONYMS, strength=0.6,
                                    seed=tf.constant([seed, 1], tf.int64), word_starts=starts).to_list()[0]
        tokens = [VOCAB[i] for i in out]
        # Split back into the original words: every word comes out whole or not at all.
        found, at = [], 0
        while at < len(tokens):
            word = next((w for w in words if tuple(tokens[at:at + len(w)]) == w), None)
            if word is None:  # a single-piece word replaced by a synonym
                assert tokens[at] in ("feline", "kitten")
                word = (tokens[at],)
            found.append(word)
            at += len(word)
        assert found and len(found) == len(set(found))
