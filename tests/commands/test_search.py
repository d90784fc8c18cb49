"""`python -m tfdialemb.search` on tiny trained directories (MGE for sentences, dial2vec for
dialogues): its table lists the corpus entries by the cosine of the runtime's embeddings, computed
here in numpy; missing inputs end in one line and exit status 2."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from tiny_corpus import corpus
from training_flags import train_one_step

from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder

SENTENCES = ["hello world", "book a taxi please", "good morning , how are you ?", "fine thanks",
             "the hotel is not helpful", "need a cafe"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, hf_safetensors_dir):
    root = tmp_path_factory.mktemp("search")
    write_dialogues(corpus(n=8, seed=3), str(root / "train.jsonl"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        sentence_model = train_one_step(root, hf_safetensors_dir, monkeypatch, "mge", negatives=1)
        model = train_one_step(root, hf_safetensors_dir, monkeypatch, "dial2vec", negatives=1, separator="eou")
    (root / "sentences.txt").write_text("\n".join(SENTENCES[:3]) + "\n\n" + "\n".join(SENTENCES[3:]) + "\n",
                                        encoding="utf-8")
    return root, sentence_model, model


def _start(*flags):
    return subprocess.Popen([sys.executable, "-m", "tfdialemb.search", *flags], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _finished(process):
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _table(result):
    """(score, entry) of each row under the header."""
    assert result.returncode == 0, result.stderr[-3000:]
    header, *rows = result.stdout.splitlines()
    assert header.split() in (["rank", "score", "sentence"], ["rank", "score", "dialogue"])
    parsed = []
    for rank, row in enumerate(rows, start=1):
        number, score, entry = row.split(maxsplit=2)
        assert int(number) == rank
        parsed.append((float(score), entry))
    return parsed


def _nearest(vectors, query, k):
    """Indices and cosines of the k rows of `vectors` nearest `query`, in numpy."""
    cosines = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    order = np.argsort(-cosines, kind="stable")[:k]
    return list(order), cosines[order]


def test_search_lists_the_nearest_sentences_and_dialogues(trained):
    root, sentence_model, model = trained
    dialogue_query = '["book taxi please", "need help"]'
    sentences, dialogues = map(_finished, (
        _start(f"--model_dir={sentence_model}", f"--corpus={root / 'sentences.txt'}", "--query=book a taxi",
               "--top_k=4"),
        _start(f"--model_dir={model}", f"--corpus={root / 'train.jsonl'}", f"--query={dialogue_query}")))

    embedder = SentenceEmbedder.load(str(sentence_model))
    order, cosines = _nearest(embedder.embed(SENTENCES), embedder.embed(["book a taxi"])[0], 4)
    table = _table(sentences)
    assert [entry for _, entry in table] == [SENTENCES[i] for i in order]
    np.testing.assert_allclose([score for score, _ in table], cosines, atol=1e-4)
    assert "6/6 sentences" in sentences.stderr and "1/1 sentences" not in sentences.stderr  # no bar for the query

    dialogue_embedder = DialogueEmbedder.load(str(model))
    stored = corpus(n=8, seed=3)
    query = Dialogue("query", (Turn("A", "book taxi please"), Turn("B", "need help")))
    views = dialogue_embedder.embed(stored + [query])[dialogue_embedder.pooling]
    order, cosines = _nearest(views[:-1], views[-1], 5)
    table = _table(dialogues)
    assert [entry.split(":")[0] for _, entry in table] == [stored[i].id for i in order]
    np.testing.assert_allclose([score for score, _ in table], cosines, atol=1e-4)


def test_missing_inputs_and_a_bad_query_end_in_one_line(trained, tmp_path):
    root, _, model = trained
    no_corpus, no_model, bad_query = map(_finished, (
        _start(f"--model_dir={model}", f"--corpus={tmp_path / 'none.txt'}", "--query=hello"),
        _start(f"--model_dir={tmp_path / 'no_model'}", f"--corpus={root / 'sentences.txt'}", "--query=hello"),
        _start(f"--model_dir={model}", f"--corpus={root / 'train.jsonl'}", "--query=" + json.dumps(["hello", ""]))))
    for result, message in ((no_corpus, "none.txt: corpus does not exist"),
                            (no_model, "no_model: model directory does not exist"),
                            (bad_query, "--query: turn 1 has empty text")):
        assert result.returncode == 2, result.stderr[-3000:]
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ") and last.endswith(message), result.stderr[-3000:]
        assert result.stdout == ""
