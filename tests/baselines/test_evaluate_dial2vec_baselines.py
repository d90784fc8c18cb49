"""`python -m tfdialemb.evaluate --task=dialogue --embedding=...` with dial2vec's LDA, Doc2Vec and
RoBERTa / T5 baselines: what each reports, and the flags they refuse."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

import tiny_plm
from tiny_corpus import corpus
from tfdialemb.baselines.doc2vec import Doc2VecDialogueEmbedder
from tfdialemb.baselines.plm_mean import PlmMeanDialogueEmbedder
from tfdialemb.baselines.topic import LdaDialogueEmbedder
from tfdialemb.baselines.transformers_encoder import load_transformers_encoder
from tfdialemb.dialogue import Dialogue, write_dialogues
from tfdialemb.eval.dialogue_embedding import evaluate_dialogue_embeddings

DIALOGUES = [Dialogue(d.id, d.turns, {"domain": "ab"[i % 2]}) for i, d in enumerate(corpus(n=12, seed=3))]


@pytest.fixture(scope="module", name="files")
def fixture_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dial2vec_baselines")
    write_dialogues(DIALOGUES, str(folder / "labelled.jsonl"))
    write_dialogues(corpus(n=40, seed=1), str(folder / "fit.jsonl"))
    return folder


def _evaluate(files, *flags, env=None):
    output = files / "report.json"
    result = subprocess.run([sys.executable, "-m", "tfdialemb.evaluate", "--task=dialogue",
                             f"--eval_file={files / 'labelled.jsonl'}", "--label_key=domain",
                             f"--output={output}", "--overwrite", "--runs=2", *flags],
                            capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(output.read_text(encoding="utf-8"))


def test_lda_reports_domain_categorization_of_its_topics_only(files):
    report = _evaluate(files, "--embedding=lda", "--fit_seed=5")
    labels = np.array([d.labels["domain"] == "b" for d in DIALOGUES], int)
    scores = {"purity": [], "accuracy": [], "ari": [], "nmi": []}
    for seed in (5, 6):   # --runs LDA fits, seeds --fit_seed + r
        topics = LdaDialogueEmbedder(DIALOGUES, n_components=2, seed=seed).embed(DIALOGUES).argmax(axis=1)
        counts = np.zeros((2, 2), int)
        np.add.at(counts, (topics, labels), 1)
        rows, columns = linear_sum_assignment(-counts)
        scores["purity"].append(counts.max(axis=1).sum() / len(labels))
        scores["accuracy"].append(counts[rows, columns].sum() / len(labels))
        scores["ari"].append(adjusted_rand_score(labels, topics))
        scores["nmi"].append(normalized_mutual_info_score(labels, topics))
    expected = {name: np.mean(values) for name, values in scores.items()}
    expected.update(purity_std=np.std(scores["purity"]), runs=2)
    assert report["metrics"]["views"]["lda"] == pytest.approx(expected, abs=1e-9)
    assert report["embedding"] == {"kind": "lda", "fit_file": str(files / "labelled.jsonl"), "fit_dialogues": 12,
                                   "topics": 2, "seed": 5, "metrics": "categorization", "fits": 2}


def test_doc2vec_infers_the_evaluated_dialogues_from_a_fit_file(files):
    # Another hash seed than this process's: the inferred vectors must not depend on it.
    report = _evaluate(files, "--embedding=doc2vec", f"--fit_file={files / 'fit.jsonl'}", "--fit_seed=2",
                       env={"PYTHONHASHSEED": "7"})
    doc2vec = Doc2VecDialogueEmbedder(corpus(n=40, seed=1), seed=2)
    expected = evaluate_dialogue_embeddings(str(files / "labelled.jsonl"), "domain",
                                            lambda dialogues: {"doc2vec": doc2vec.embed(dialogues)},
                                            runs=2, spearman_repeats=2)
    assert report["metrics"]["views"]["doc2vec"] == pytest.approx(expected["views"]["doc2vec"], abs=1e-6)
    assert report["embedding"] == {"kind": "doc2vec", "fit_file": str(files / "fit.jsonl"), "fit_dialogues": 40,
                                   "seed": 2, **doc2vec.settings, "vectors": "inferred"}


def test_plm_mean_of_a_roberta_directory(files, tmp_path):
    directory, _ = tiny_plm.roberta_dir(tmp_path / "roberta")
    report = _evaluate(files, "--embedding=plm_mean", f"--init_checkpoint={directory}",
                       "--dial2vec_plm_input=released", "--max_length=16")
    embedder = PlmMeanDialogueEmbedder(load_transformers_encoder(directory), "released", max_length=16)
    expected = evaluate_dialogue_embeddings(str(files / "labelled.jsonl"), "domain", embedder.embed_views,
                                            runs=2, spearman_repeats=2)
    assert report["metrics"]["views"]["mean"] == pytest.approx(expected["views"]["mean"], abs=1e-5)
    assert report["embedding"] == {"kind": "plm_mean", "model_type": "roberta", "dial2vec_plm_input": "released",
                                   "max_length": 16}


def test_plm_mean_without_init_checkpoint_exits_2(files, tmp_path):
    result = subprocess.run([sys.executable, "-m", "tfdialemb.evaluate", "--task=dialogue", "--label_key=domain",
                             f"--eval_file={files / 'labelled.jsonl'}", f"--output={tmp_path / 'refused.json'}",
                             "--embedding=plm_mean", f"--model_dir={tmp_path}"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "error: --embedding=plm_mean reads a Hugging Face RoBERTa or T5 directory: give it as --init_checkpoint")
