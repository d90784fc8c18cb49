"""The sentence-transformers call shapes of the runtimes against their own methods: `encode` of
both embedders against `embed`, `PairScorer.predict` and `rank` against `score`.

sentence-transformers documents: `encode` of one string gives one vector, of a list a matrix,
`normalize_embeddings` unit vectors; `CrossEncoder.predict` of pairs an array of scores, of one pair
one score; `CrossEncoder.rank` a list of {"corpus_id", "score"[, "text"]} sorted by score, highest
first, cut to top_k."""
import logging

import numpy as np
import pytest
import tensorflow as tf
import tiny_bert
from tiny_corpus import TOKENIZER, corpus

from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.methods.models.fgc import FineGrainedContrastModel

SENTENCES = ["hello world", "book a taxi please to the hotel", "fine"]


def _encoder():
    tf.keras.utils.set_random_seed(5)
    return Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()


@pytest.fixture(scope="module")
def sentence_embedder():
    return SentenceEmbedder(_encoder(), TOKENIZER)


def _unit(rows):
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def test_encode_is_embed_in_sentence_transformers_shapes(sentence_embedder, capfd):
    embedded = sentence_embedder.embed(SENTENCES)
    encoded = sentence_embedder.encode(SENTENCES)
    assert isinstance(encoded, np.ndarray) and encoded.shape == (3, 32) and encoded.dtype == np.float32
    np.testing.assert_allclose(encoded, embedded, atol=1e-6)
    one = sentence_embedder.encode("fine")  # one string, one vector
    assert one.shape == (32,)
    np.testing.assert_allclose(one, embedded[2], atol=1e-6)
    np.testing.assert_allclose(sentence_embedder.encode(SENTENCES, normalize_embeddings=True), _unit(embedded),
                               atol=1e-6)
    for tensor in (sentence_embedder.encode(SENTENCES, convert_to_numpy=False),
                   sentence_embedder.encode(SENTENCES, convert_to_tensor=True)):
        assert isinstance(tensor, tf.Tensor) and tensor.shape == (3, 32)
        np.testing.assert_allclose(tensor.numpy(), embedded, atol=1e-6)
    assert sentence_embedder.encode([]).shape == (0, 32)
    capfd.readouterr()
    sentence_embedder.encode(SENTENCES, batch_size=2, show_progress_bar=True)
    assert "3/3 sentences" in capfd.readouterr().err
    logger = logging.getLogger("tfdialemb")
    level = logger.level
    try:
        for shown in (logging.WARNING, logging.INFO):
            logger.setLevel(shown)
            sentence_embedder.encode(SENTENCES)  # None: a bar when tfdialemb's logger passes INFO
            assert ("3/3 sentences" in capfd.readouterr().err) == (shown == logging.INFO)
    finally:
        logger.setLevel(level)
    with pytest.raises(ValueError, match="sentence 1: expected a string, got int"):
        sentence_embedder.encode(["hello", 3])


def test_dialogue_encode_takes_objects_canonical_json_and_turn_lists():
    embedder = DialogueEmbedder(_encoder(), TOKENIZER)
    dialogues = corpus(n=3, seed=8)  # speakers a, b alternating
    views = embedder.embed(dialogues)
    as_json = [dialogue.to_json() for dialogue in dialogues]
    as_turns = [[turn.text for turn in dialogue.turns] for dialogue in dialogues]
    for form in (dialogues, as_json, as_turns):
        np.testing.assert_allclose(embedder.encode(form), views["interlocutor"], atol=1e-6)
    np.testing.assert_allclose(embedder.embed(as_json)["p2"], views["p2"], atol=1e-6)  # embed takes them too
    for one in (dialogues[1], as_json[1]):  # one dialogue, one vector
        np.testing.assert_allclose(embedder.encode(one), views["interlocutor"][1], atol=1e-6)
    mixed = embedder.encode([dialogues[0], as_json[1], as_turns[2]], normalize_embeddings=True, convert_to_tensor=True)
    assert isinstance(mixed, tf.Tensor)
    np.testing.assert_allclose(mixed.numpy(), _unit(views["interlocutor"]), atol=1e-6)


def test_a_malformed_dialogue_is_named_by_its_position():
    embedder = DialogueEmbedder(_encoder(), TOKENIZER)
    good = Dialogue("g", (Turn("u", "hello"), Turn("s", "fine thanks")))
    cases = [([good, {"id": "x", "turns": []}], "dialogue 1: no turns"),
             ([good, good.to_json(), ["hello", ""]], "dialogue 2: turn 1 has empty text"),
             ([good, 5], "dialogue 1: expected a canonical dialogue object, a list of turn texts or a Dialogue, "
                         "got int"),
             (["hello", "fine"], "dialogue 0: expected .* got str"),
             ([{"turns": [{"speaker": "u", "text": "hi"}]}], "dialogue 0: 'id' must be a non-empty string")]
    for dialogues, message in cases:
        with pytest.raises(ValueError, match=message):
            embedder.encode(dialogues)
    with pytest.raises(ValueError, match="expected a list of dialogues, got one str"):
        embedder.embed("hello")


@pytest.fixture(scope="module")
def scorer():
    return PairScorer(FineGrainedContrastModel(_encoder()), TOKENIZER, max_length=32)


CONTEXTS = [["hello there", "how are you"], ["book a taxi"], ["fine", "thanks", "bye"]]
RESPONSES = ["fine thanks", "to the hotel please", "good"]


def test_predict_is_score_in_cross_encoder_shapes(scorer):
    scores = scorer.score(CONTEXTS, RESPONSES)
    predicted = scorer.predict(list(zip(CONTEXTS, RESPONSES)))
    assert isinstance(predicted, np.ndarray) and predicted.shape == (3,) and predicted.dtype == np.float32
    np.testing.assert_allclose(predicted, scores, atol=1e-6)
    single = scorer.predict(("book a taxi", "to the hotel please"))  # a text context is one turn
    assert np.ndim(single) == 0
    np.testing.assert_allclose(single, scores[1], atol=1e-6)
    np.testing.assert_allclose(scorer.predict([(CONTEXTS[0], RESPONSES[0])], convert_to_tensor=True).numpy(),
                               scores[:1], atol=1e-6)
    assert scorer.predict([]).shape == (0,)
    with pytest.raises(ValueError, match=r"pair 1: expected \(context, response\)"):
        scorer.predict([("hello", "fine"), ("hello", 3)])


def test_rank_sorts_candidates_by_their_scores(scorer):
    context = CONTEXTS[0]
    candidates = ["fine thanks", "to the hotel please", "good", "fine thanks", "book a taxi"]
    scores = scorer.score([context] * len(candidates), candidates)
    # By hand from the scores: highest first, the duplicate candidates (equal scores) in candidate order.
    expected = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    assert expected.index(0) < expected.index(3)
    ranked = scorer.rank(context, candidates)
    assert [hit["corpus_id"] for hit in ranked] == expected and all(set(hit) == {"corpus_id", "score"}
                                                                    for hit in ranked)
    np.testing.assert_allclose([hit["score"] for hit in ranked], scores[expected], atol=1e-6)
    top = scorer.rank(context, candidates, top_k=2, return_documents=True)
    assert [(hit["corpus_id"], hit["text"]) for hit in top] == [(i, candidates[i]) for i in expected[:2]]
    assert len(scorer.rank(context, candidates, top_k=10)) == 5
    with pytest.raises(ValueError, match="candidate 1: expected a response text, got int"):
        scorer.rank(context, ["fine", 2])
    with pytest.raises(ValueError, match="top_k must be None or a positive integer, got 0"):
        scorer.rank(context, candidates, top_k=0)
