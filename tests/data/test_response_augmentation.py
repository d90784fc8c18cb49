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


def _changed(rows, seed, strength=0.2, at_least_one=True, word_starts=None):
    pieces = tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)
    out = aug.augment_responses(pieces, continuation=CONTINUATION, synonyms=SYNONYMS, strength=strength,
                                seed=tf.constant([seed, 2], tf.int64), word_starts=word_starts,
                                at_least_one=at_least_one).to_list()
    return [words_of(a) != words_of(b) for a, b in zip(rows, out)], out


def test_every_view_changes_at_least_one_word_by_default():
    """At p = 0.2 the per-word draws alone leave views equal to their original (EDA's n = max(1, αl)
    rule is off); with the rule every response that any operation can change is changed."""
    rows = [r for r in RESPONSES if r] + [ids("the sat on"), ids("sat sat")]
    unchanged_without = 0
    for seed in range(60):
        changed, out = _changed(rows, seed)
        assert all(changed), [(words_of(a), words_of(b)) for a, b, c in zip(rows, out, changed) if not c]
        unchanged_without += sum(not c for c in _changed(rows, seed, at_least_one=False)[0])
    assert unchanged_without > 0.1 * 60 * len(rows)
    assert _changed([[]], 0)[1] == [[]]  # nothing to change
    assert not any(_changed(rows, 1, strength=0.0)[0])  # p = 0: SimCSE-style identical views


def test_an_operation_that_cannot_apply_is_drawn_again():
    """No draw is lost to an operation that cannot change the response: a single word with synonyms
    is always replaced, two equal words without synonyms always lose one, words without synonyms
    are deleted or swapped about as often as each other."""
    kinds = collections.Counter()
    for seed in range(100):
        _, out = _changed([ids("cat"), ids("sat sat"), ids("the sat on")], seed, at_least_one=False,
                          strength=1.0)
        assert words_of(out[0])[0] in ("feline", "kitten")
        assert words_of(out[1]) == ["sat"]
        kinds[operation_of(ids("the sat on"), out[2])] += 1
    assert set(kinds) <= {"deletion", "swap", "unchanged"} and kinds["deletion"] > 30


def test_chinese_words_without_synonyms_are_deleted_or_swapped():
    """Jieba words (here runs of single-character pieces) are never single vocabulary words with
    synonyms, so every view is a deletion or a swap of whole words, and changed."""
    rows = tf.ragged.constant([[[ID["sat"], ID["on"]], [ID["rug"], ID["un"]], [ID["the"]]]], dtype=tf.int32,
                              ragged_rank=2)
    pieces, starts = aug.words_of_rows(rows)
    kinds = collections.Counter()
    for seed in range(60):
        out = aug.augment_responses(pieces, continuation=CONTINUATION, synonyms=SYNONYMS, strength=0.2,
                                    seed=tf.constant([seed, 3], tf.int64), word_starts=starts).to_list()[0]
        original = pieces.to_list()[0]
        assert out != original
        kinds["deletion" if len(out) < len(original) else "swap"] += 1
    assert min(kinds["deletion"], kinds["swap"]) > 15


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


def test_embedding_synonyms_leave_out_opposites():
    """The nearest neighbours of happy are sad and unhappy, its opposites, then glad and pleased."""
    vocab = ["[PAD]", "happy", "sad", "unhappy", "glad", "pleased", "table", "chair", "river"]
    embeddings = np.zeros([len(vocab), 4], np.float32)
    embeddings[:, 3] = np.arange(len(vocab))  # everything else far apart
    for word, tilt in (("happy", 0.0), ("sad", 0.01), ("unhappy", 0.02), ("glad", 0.2), ("pleased", 0.3)):
        embeddings[vocab.index(word)] = [1.0, tilt, 0.0, 0.0]
    synonyms = aug.embedding_synonyms(vocab, embeddings, set(), per_word=2, candidates_per_word=5)
    assert [vocab[i] for i in synonyms[vocab.index("happy")]] == ["glad", "pleased"]
    assert [vocab[i] for i in synonyms[vocab.index("glad")]] == ["pleased", "happy"]
    assert "happy" not in [vocab[i] for i in synonyms[vocab.index("sad")]]


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
