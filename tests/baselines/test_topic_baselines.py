"""TF-IDF against a hand-counted toy corpus; LDA's topic distributions and seeding."""
import numpy as np
import pytest

from tfdialemb.baselines.topic import LdaDialogueEmbedder, TfidfDialogueEmbedder, dialogue_words
from tfdialemb.dialogue import Dialogue, Turn


def _dialogue(i, *texts):
    return Dialogue(f"d{i}", tuple(Turn("ab"[t % 2], text) for t, text in enumerate(texts)))


TOY = [_dialogue(0, "Hello world!", "hello"), _dialogue(1, "hello, taxi"),
       _dialogue(2, "book taxi", "taxi.")]
# Vocabulary (sorted): book, hello, taxi, world. Counts per dialogue, punctuation dropped.
COUNTS = np.array([[0, 2, 0, 1], [0, 1, 1, 0], [1, 0, 2, 0]], np.float64)
DOCUMENT_FREQUENCY = np.array([1, 2, 2, 1])


def test_words_are_lower_cased_without_punctuation():
    assert dialogue_words(TOY) == [["hello", "world", "hello"], ["hello", "taxi"],
                                   ["book", "taxi", "taxi"]]


def test_tfidf_of_a_toy_corpus_by_hand():
    idf = np.log((1 + 3) / (1 + DOCUMENT_FREQUENCY)) + 1       # smoothed idf
    expected = COUNTS * idf
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    embedder = TfidfDialogueEmbedder(TOY)
    views = embedder.embed_views(TOY)
    assert list(views) == ["tfidf"]
    assert views["tfidf"].dtype == np.float32
    np.testing.assert_allclose(views["tfidf"], expected, rtol=1e-6)


def test_tfidf_embeds_new_dialogues_with_the_fit_vocabulary():
    vectors = TfidfDialogueEmbedder(TOY).embed([_dialogue(9, "taxi please")])
    np.testing.assert_allclose(vectors, [[0.0, 0.0, 1.0, 0.0]])   # "please" is unknown


def test_tfidf_max_features_keeps_the_most_frequent_words():
    assert TfidfDialogueEmbedder(TOY, max_features=2).embed(TOY).shape == (3, 2)


def _topic_corpus():
    hotel = ["hotel room night stay", "room night hotel price", "stay hotel room"]
    taxi = ["taxi car airport ride", "car taxi ride driver", "airport taxi driver"]
    return [_dialogue(i, text) for i, text in enumerate(hotel + taxi)]


def test_lda_rows_are_seeded_topic_distributions():
    corpus = _topic_corpus()
    first = LdaDialogueEmbedder(corpus, n_components=2, seed=0, max_iter=50).embed_views(corpus)
    assert list(first) == ["lda"]
    topics = first["lda"]
    assert topics.shape == (6, 2) and topics.dtype == np.float32
    assert (topics >= 0).all()
    np.testing.assert_allclose(topics.sum(axis=1), 1.0, rtol=1e-5)
    again = LdaDialogueEmbedder(corpus, n_components=2, seed=0, max_iter=50).embed(corpus)
    np.testing.assert_array_equal(topics, again)
    other = LdaDialogueEmbedder(corpus, n_components=2, seed=4, max_iter=50).embed(corpus)
    assert not np.array_equal(topics, other)
    dominant = topics.argmax(axis=1)
    assert len(set(dominant[:3])) == 1 and len(set(dominant[3:])) == 1
    assert dominant[0] != dominant[3]


@pytest.mark.parametrize("build, message", [
    (lambda: LdaDialogueEmbedder(TOY, n_components=0), "n_components must be a positive int"),
    (lambda: TfidfDialogueEmbedder([]), "needs at least one dialogue"),
    (lambda: TfidfDialogueEmbedder([_dialogue(0, "?!"), _dialogue(1, "...")]), "cannot fit"),
    (lambda: TfidfDialogueEmbedder(TOY).embed([]), "no dialogues to embed"),
])
def test_bad_input_is_refused(build, message):
    with pytest.raises(ValueError, match=message):
        build()
