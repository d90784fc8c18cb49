"""Average GloVe from a hand-made vector file: known words averaged, unknown skipped, headers."""
import numpy as np
import pytest

from tfdialemb.baselines.glove import GloveEmbedder, read_word_vectors

VECTORS = {"hello": [1.0, 0.0, 2.0], "world": [3.0, 4.0, 0.0], "café": [0.0, 1.0, 1.0],
           ",": [5.0, 5.0, 5.0]}


def _write(path, header=None, extra=()):
    lines = ([header] if header else []) + list(extra) + [
        word + " " + " ".join(str(v) for v in vector) for word, vector in VECTORS.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_mean_of_known_lower_cased_tokens(tmp_path):
    embedder = GloveEmbedder(_write(tmp_path / "glove.txt"))
    assert embedder.dim == 3
    vectors = embedder.embed(["Hello, WORLD!", "hello unknownword", "Café", "nothing known"])
    # "Hello, WORLD!" → hello , world ! ; "!" has no vector.
    np.testing.assert_allclose(vectors[0], np.mean([VECTORS["hello"], VECTORS[","],
                                                    VECTORS["world"]], axis=0))
    np.testing.assert_allclose(vectors[1], VECTORS["hello"])
    np.testing.assert_allclose(vectors[2], VECTORS["café"])
    np.testing.assert_array_equal(vectors[3], np.zeros(3))
    assert embedder.coverage() == {"dim": 3, "words_found": 4, "token_coverage": 5 / 9,
                                   "texts_without_vectors": 1}


def test_word2vec_header_and_entries_with_spaces(tmp_path):
    path = _write(tmp_path / "w2v.txt", header="5 3", extra=[". . . 9.0 9.0 9.0"])
    assert GloveEmbedder(path).dim == 3
    vectors = read_word_vectors(path, {"hello", ".", "5"})
    assert sorted(vectors) == ["hello"]
    np.testing.assert_array_equal(vectors["hello"], VECTORS["hello"])


def test_only_needed_words_are_kept(tmp_path):
    assert sorted(read_word_vectors(_write(tmp_path / "glove.txt"), ["world", "x"])) == ["world"]


def test_missing_file_says_where_glove_comes_from(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        GloveEmbedder(str(tmp_path / "glove.840B.300d.txt"))
    message = str(error.value)
    assert "does not exist" in message and "nlp.stanford.edu/projects/glove" in message
    assert "downloads nothing" in message


def test_malformed_line_is_named(tmp_path):
    path = _write(tmp_path / "glove.txt", extra=["hello 1.0 oops 2.0"])
    with pytest.raises(ValueError, match=r"glove.txt:1: expected a word and 3 numbers"):
        read_word_vectors(path, ["hello"])
