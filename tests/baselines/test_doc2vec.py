"""dial2vec's Doc2Vec baseline: the fit dialogues' vectors are gensim's own training with gensim
4.2.0's defaults, other dialogues' vectors are gensim's inference from a seeded start, the same in
any order (and process: tests/baselines/test_evaluate_dial2vec_baselines.py)."""
import sys

import numpy as np
import pytest
from gensim.models import doc2vec as gensim_doc2vec   # the test extra installs gensim

from tfdialemb.baselines.doc2vec import Doc2VecDialogueEmbedder
from tfdialemb.dialogue import Dialogue, Turn


def _dialogue(i, *texts):
    return Dialogue(f"d{i}", tuple(Turn("ab"[t % 2], text) for t, text in enumerate(texts)))


FIT = [_dialogue(i, *pair) for i, pair in enumerate(
    [("Book a taxi, please!", "A taxi to the hotel?"), ("hotel room for one night", "the room is booked"),
     ("taxi or hotel?", "hotel, please"), ("a room and a taxi", "the taxi is booked, the room too")] * 3)]
# The words Doc2Vec reads: lower-cased, punctuation dropped.
WORDS = [["book", "a", "taxi", "please", "a", "taxi", "to", "the", "hotel"],
         ["hotel", "room", "for", "one", "night", "the", "room", "is", "booked"],
         ["taxi", "or", "hotel", "hotel", "please"],
         ["a", "room", "and", "a", "taxi", "the", "taxi", "is", "booked", "the", "room", "too"]] * 3
NEW = [_dialogue(20, "a taxi to the room", "please"), _dialogue(21, "the hotel is booked")]
# gensim 4.2.0's Doc2Vec / Word2Vec signature defaults (the version dial2vec's requirements.txt pins).
GENSIM_4_2_DEFAULTS = dict(dm=1, vector_size=100, window=5, min_count=5, sample=1e-3, negative=5, hs=0,
                           alpha=0.025, min_alpha=0.0001, epochs=10)


@pytest.fixture(scope="module", name="embedder")
def fixture_embedder():
    return Doc2VecDialogueEmbedder(FIT, seed=3)


def test_fit_vectors_are_gensims_training_with_its_4_2_defaults(embedder):
    documents = [gensim_doc2vec.TaggedDocument(words, [i]) for i, words in enumerate(WORDS)]
    reference = gensim_doc2vec.Doc2Vec(documents, seed=3, workers=1, **GENSIM_4_2_DEFAULTS)
    fitted = embedder.fitted()
    assert fitted.shape == (12, 100) and fitted.dtype == np.float32
    np.testing.assert_array_equal(fitted, reference.dv.vectors)
    assert embedder.settings == GENSIM_4_2_DEFAULTS


def test_inference_is_gensims_infer_vector_from_the_seeded_start(embedder, monkeypatch):
    words = ["a", "taxi", "to", "the", "room", "please"]
    ours = embedder.embed(NEW[:1])[0]
    start, stream = embedder.inference_start(words)
    monkeypatch.setattr(gensim_doc2vec, "pseudorandom_weak_vector", lambda size, seed_string: start.copy())
    embedder.model.random = stream
    reference = embedder.model.infer_vector(words)
    np.testing.assert_array_equal(ours, reference)
    assert not np.allclose(ours, start)   # trained away from the start


def test_inferred_vectors_do_not_depend_on_the_order(embedder):
    """Nor on the process: the evaluate test runs it in another one, with another PYTHONHASHSEED."""
    np.testing.assert_array_equal(embedder.embed(NEW[::-1])[::-1], embedder.embed(NEW))


@pytest.mark.parametrize("build, message", [
    (lambda: Doc2VecDialogueEmbedder([]), "needs at least one dialogue"),
    (lambda: Doc2VecDialogueEmbedder(FIT[:1]), "no word occurs min_count=5 times in the 1 fit dialogues"),
    (lambda: Doc2VecDialogueEmbedder(FIT, size=3), r"unknown Doc2Vec settings \['size'\]"),
    (lambda: Doc2VecDialogueEmbedder(FIT, epochs=1).embed([]), "no dialogues to embed"),
])
def test_bad_input_is_refused(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_missing_gensim_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gensim.models", None)
    with pytest.raises(ValueError, match="needs the gensim package: pip install gensim"):
        Doc2VecDialogueEmbedder(FIT)
