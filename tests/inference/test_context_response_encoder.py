"""ContextResponseEncoder reads a model directory of `--method=context_response` after two training
steps of a tiny BERT and embeds texts as the trained model does: a second code path (the model
object that trained, fed ids tokenized text by text and laid out by hand) gives the same vectors."""
import numpy as np
import pytest

from tiny_corpus import corpus, packed_ids
from training_flags import training_flags
from tfdialemb.dialogue import write_dialogues
from tfdialemb.inference.context_response import ContextResponseEncoder
from tfdialemb.methods.spec import get_method
from tfdialemb.training import cli

MAX_LENGTH = 24
CONTEXTS = [["hello"], ["hello world", "how are you"],
            ["good morning", "book taxi", "need hotel please", "fine thanks"]]  # the last: 4, 3 used
RESPONSES = ["fine", "book a taxi please", "thanks"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, hf_safetensors_dir):
    """(model directory, the model object that trained there)."""
    tmp_path = tmp_path_factory.mktemp("context_response")
    write_dialogues(corpus(n=24, seed=5), str(tmp_path / "train.jsonl"))
    spec = get_method("context_response")
    flags = training_flags(train_file=str(tmp_path / "train.jsonl"), model_dir=str(tmp_path / "model"),
                           init_checkpoint=hf_safetensors_dir, freeze_layers=1, max_length=MAX_LENGTH,
                           batch_size=8)
    models = []
    make_model = spec.make_model
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(cli, "FLAGS", flags)
    monkeypatch.setattr(spec, "make_model", lambda encoder, p: models.append(make_model(encoder, p)) or models[-1])
    try:
        assert cli.run(spec, spec.resolve({"context": 3})) == 0
    finally:
        monkeypatch.undo()
    return str(tmp_path / "model"), models[-1]


def _stack(rows, slots):
    """ids and mask [len(rows), slots, T] of rows of token-id lists, left-aligned, empty slots zero."""
    length = max(len(r) for row in rows for r in row)
    ids = np.zeros([len(rows), slots, length], np.int32)
    for b, row in enumerate(rows):
        for s, r in enumerate(row):
            ids[b, s, :len(r)] = r
    return ids, (ids > 0).astype(np.int32)


def test_embeddings_equal_the_trained_models_projections(trained):
    model_dir, model = trained
    encoder = ContextResponseEncoder.from_model_dir(model_dir)
    assert encoder.context == 3 and encoder.max_length == MAX_LENGTH
    contexts = encoder.embed_contexts(CONTEXTS, batch_size=2)
    responses = encoder.embed_responses(RESPONSES, batch_size=2)
    assert contexts.shape == responses.shape == (3, 256)
    np.testing.assert_allclose(np.linalg.norm(contexts, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(responses, axis=1), 1.0, rtol=1e-5)

    ids, mask = _stack([[packed_ids(t, MAX_LENGTH) for t in c[-3:]] for c in CONTEXTS], 3)
    np.testing.assert_allclose(contexts, model.embed_contexts(ids, mask, training=False).numpy(), atol=2e-5)
    ids, mask = _stack([[packed_ids(t, MAX_LENGTH)] for t in RESPONSES], 1)
    np.testing.assert_allclose(responses, model.embed_responses(ids[:, 0], mask[:, 0], training=False).numpy(),
                               atol=2e-5)


def test_contexts_and_responses_from_utterance_vectors_equal_the_direct_ones(trained):
    """The per-utterance path crop and shuffle use: each utterance embedded once, contexts made by
    laying its vectors into slots, against embedding contexts and responses whole; and the
    similarity matrix made from them, against cosines of the direct embeddings."""
    from tfdialemb.augment.similarity_sources import UtteranceSimilarity

    encoder = ContextResponseEncoder.from_model_dir(trained[0])
    assert encoder.per_utterance
    texts = sorted({text for context in CONTEXTS for text in context} | set(RESPONSES))
    vectors = dict(zip(texts, encoder.embed_utterances(texts, batch_size=2)))
    slots = np.zeros([len(CONTEXTS), 3, len(vectors[texts[0]])], np.float32)
    for i, context in enumerate(CONTEXTS):
        for j, text in enumerate(context[-3:]):
            slots[i, j] = vectors[text]
    np.testing.assert_allclose(encoder.contexts_from_utterances(slots), encoder.embed_contexts(CONTEXTS), atol=2e-5)
    np.testing.assert_allclose(encoder.responses_from_utterances(np.stack([vectors[t] for t in RESPONSES])),
                               encoder.embed_responses(RESPONSES), atol=2e-5)

    dialogue = CONTEXTS[2] + RESPONSES
    [matrix] = UtteranceSimilarity(encoder).matrices([dialogue])
    contexts = encoder.embed_contexts([dialogue[max(0, a - 2):a + 1] for a in range(len(dialogue) - 1)])
    np.testing.assert_allclose(matrix, contexts @ encoder.embed_responses(dialogue[1:]).T, atol=5e-5)


def test_eager_batches_equal_the_traced_graph(trained):
    encoder = ContextResponseEncoder.from_model_dir(trained[0])
    eager = encoder.embed_contexts(CONTEXTS, batch_size=1), encoder.embed_responses(RESPONSES, batch_size=1)
    traced = (encoder.embed_contexts(CONTEXTS * 10, batch_size=1),  # 30 batches: traced
              encoder.embed_responses(RESPONSES * 10, batch_size=1))
    for eager_rows, traced_rows in zip(eager, traced):
        np.testing.assert_allclose(traced_rows, np.tile(eager_rows, [10, 1]), atol=1e-6)


def test_bad_inputs_are_named(trained, hf_safetensors_dir):
    encoder = ContextResponseEncoder.from_model_dir(trained[0])
    with pytest.raises(ValueError, match=r"contexts \[1\] have no utterance"):
        encoder.embed_contexts([["hello"], []])
    with pytest.raises(ValueError, match="method=context_response"):
        ContextResponseEncoder.from_model_dir(hf_safetensors_dir)
