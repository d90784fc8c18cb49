"""`python -m tfdialemb.evaluate --embedding=...`: each Table 2 baseline end to end, its flags."""
import json
import subprocess
import sys

import numpy as np
import pytest
import tiny_corpus

from tfdialemb.baselines.glove import GloveEmbedder
from tfdialemb.baselines.whitening import Whitening
from tfdialemb.dialogue import write_dialogues
from tfdialemb.encoders import load_pretrained
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval
from tfdialemb.inference.embedder import SentenceEmbedder

GLOVE = ["hello 1 0 0", "world 1 1 0", "good 0 1 0", "morning 0 1 1", "book 0 0 1",
         "taxi 1 0 1", "hotel 0 1 1"]


def _run(*args):
    return subprocess.run([sys.executable, "-m", "tfdialemb.evaluate", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(name="files")
def fixture_files(tmp_path):
    """The SR eval file, a fit corpus of 40 dialogues (156 utterances, more than the tiny BERT's
    32 dimensions) and a tiny GloVe file."""
    (tmp_path / "select.txt").write_text("".join(line + "\n" for line in tiny_corpus.SR_SELECT_LINES), encoding="utf-8")
    write_dialogues(tiny_corpus.corpus(n=40, seed=1), str(tmp_path / "fit.jsonl"))
    (tmp_path / "glove.txt").write_text("\n".join(GLOVE) + "\n", encoding="utf-8")
    return tmp_path


def _evaluate(files, *flags):
    output = files / "report.json"
    result = _run("--task=sr", f"--eval_file={files / 'select.txt'}", f"--output={output}",
                  *flags)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text(encoding="utf-8"))
    assert result.stdout.splitlines()[0] == f"sr on {files / 'select.txt'}"  # the table; the report in the file
    return report


def test_encoder_is_the_default(files, hf_safetensors_dir):
    report = _evaluate(files, f"--init_checkpoint={hf_safetensors_dir}")
    assert report["embedding"] == {"kind": "encoder"}
    assert report["pooling"] == "mean"


def test_whitening_fitted_on_the_fit_file(files, hf_safetensors_dir):
    report = _evaluate(files, f"--init_checkpoint={hf_safetensors_dir}", "--embedding=whitening",
                       f"--fit_file={files / 'fit.jsonl'}", "--fit_utterances=1000")
    utterances = [turn.text for dialogue in tiny_corpus.corpus(n=40, seed=1)
                  for turn in dialogue.turns]
    # 31 of BERT's 32 dimensions: the final LayerNorm leaves one without variance.
    assert report["embedding"] == {"kind": "whitening", "fit_file": str(files / "fit.jsonl"),
                                   "fit_utterances": len(utterances), "fit_seed": 0, "dim": 31}
    # Fewer utterances than --fit_utterances: the sample is the whole file.
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir))
    whitening = Whitening.fit(embedder.embed(utterances))
    expected = evaluate_semantic_retrieval(str(files / "select.txt"),
                                           lambda texts: whitening.transform(embedder.embed(texts)))
    assert report["metrics"] == pytest.approx(expected, abs=1e-6)


def test_flow_records_its_architecture_and_training(files, hf_safetensors_dir):
    report = _evaluate(files, f"--init_checkpoint={hf_safetensors_dir}", "--embedding=flow",
                       f"--fit_file={files / 'fit.jsonl'}", "--fit_utterances=50",
                       "--flow_epochs=2", "--flow_batch_size=16", "--fit_seed=3")
    embedding = report["embedding"]
    losses = embedding.pop("bits_per_dim_by_epoch")
    assert len(losses) == 2 and all(np.isfinite(losses))
    assert embedding == {"kind": "flow", "fit_file": str(files / "fit.jsonl"),
                         "fit_utterances": 50, "fit_seed": 3, "dim": 32, "levels": 3, "depth": 3,
                         "width": 32, "coupling": "additive", "permutation": "reverse",
                         "epochs": 2, "batch_size": 16, "learning_rate": 1e-3}
    assert 0.0 < report["metrics"]["map"] <= 1.0 and report["metrics"]["queries"] == 2


def test_glove_needs_no_checkpoint(files):
    report = _evaluate(files, "--embedding=glove", f"--glove_file={files / 'glove.txt'}")
    assert report["checkpoint"] is None and report["pooling"] is None
    glove = GloveEmbedder(str(files / "glove.txt"))
    expected = evaluate_semantic_retrieval(str(files / "select.txt"), glove.embed)
    assert report["metrics"] == pytest.approx(expected, abs=1e-6)
    assert report["embedding"] == {"kind": "glove", "glove_file": str(files / "glove.txt"),
                                   **glove.coverage()}


@pytest.mark.parametrize("flags, message", [
    (["--embedding=glove"], "--embedding=glove needs --glove_file"),
    (["--embedding=flow", "--fit_file=x.jsonl"],
     "--embedding=flow needs --model_dir, --init_checkpoint or --saved_model"),
    (["--embedding=glove", "--glove_file=g.txt", "--init_checkpoint=CKPT"],
     "--embedding=glove uses no encoder: drop --model_dir/--init_checkpoint/--saved_model"),
    (["--init_checkpoint=CKPT", "--whitening_dim=4"],
     "--whitening_dim does not apply to --embedding=encoder"),
])
def test_wrong_embedding_flags_exit_2(files, flags, message):
    output = files / "report.json"
    result = _run("--task=sr", f"--eval_file={files / 'select.txt'}", f"--output={output}", *flags)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {message}"
    assert not output.exists()


def test_missing_glove_file_exits_2_naming_its_source(files):
    result = _run("--task=sr", f"--eval_file={files / 'select.txt'}", "--embedding=glove",
                  f"--glove_file={files / 'none.txt'}", f"--output={files / 'report.json'}")
    assert result.returncode == 2
    assert "nlp.stanford.edu/projects/glove" in result.stderr
