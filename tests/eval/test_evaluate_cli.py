"""`python -m tfdialemb.evaluate` end to end on a tiny checkpoint, and its exit statuses."""
import hashlib
import json
import os
import subprocess
import sys

import pytest
import tiny_bert
from tiny_corpus import SR_SELECT_LINES

from tfdialemb.encoders import load_pretrained
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval
from tfdialemb.inference.embedder import SentenceEmbedder


def _run(*args):
    return subprocess.run([sys.executable, "-m", "tfdialemb.evaluate", *args],
                          capture_output=True, text=True, timeout=300)


def test_sr_report_matches_the_library(tmp_path, hf_safetensors_dir):
    eval_file = tmp_path / "select.txt"
    eval_file.write_text("".join(line + "\n" for line in SR_SELECT_LINES), encoding="utf-8")
    output = tmp_path / "out" / "report.json"
    result = _run("--task=sr", f"--eval_file={eval_file}",
                  f"--init_checkpoint={hf_safetensors_dir}", f"--output={output}", "--batch_size=2")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text(encoding="utf-8"))
    assert result.stdout.splitlines()[:2] == [
        f"sr on {eval_file}", " " * len(os.path.basename(hf_safetensors_dir)) + "   MAP ↑   MRR ↑   P@1 ↑  P@5 ↑  R@10 ↑"]  # P@5: no number
    assert {key: report[key] for key in ("task", "eval_file", "checkpoint", "pooling")} == {
        "task": "sr", "eval_file": str(eval_file), "checkpoint": str(hf_safetensors_dir),
        "pooling": "mean"}
    # What was evaluated: the command line, and the weights file with its content's hash.
    assert report["arguments"] == ["--task=sr", f"--eval_file={eval_file}", f"--init_checkpoint={hf_safetensors_dir}",
                                   f"--output={output}", "--batch_size=2"]
    assert report["weights"] == {"weights": "model.safetensors", "sha256": hashlib.sha256(
        open(f"{hf_safetensors_dir}/model.safetensors", "rb").read()).hexdigest()}

    embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir))
    expected = evaluate_semantic_retrieval(str(eval_file), embedder.embed)
    assert report["metrics"] == pytest.approx(expected, abs=1e-6)
    assert report["metrics"]["queries"] == 2
    # --json prints the report instead of the table; without --output nothing is written.
    printed = _run("--task=sr", f"--eval_file={eval_file}", f"--init_checkpoint={hf_safetensors_dir}", "--json",
                   "--batch_size=2")
    assert printed.returncode == 0, printed.stderr[-3000:]
    assert json.loads(printed.stdout)["metrics"] == pytest.approx(expected, abs=1e-6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "select.txt"]


def test_several_models_give_one_report_each_and_one_table(tmp_path, hf_safetensors_dir):
    """Comma-separated and repeated --model_dir; a directory whose name holds a comma is one model;
    the model named twice gets two rows."""
    eval_file = tmp_path / "select.txt"
    eval_file.write_text("".join(line + "\n" for line in SR_SELECT_LINES), encoding="utf-8")
    (tmp_path / "other").mkdir()
    other = tiny_bert.write_hf_safetensors_dir(tmp_path / "other", tiny_bert.random_pytorch_state(seed=5))
    (tmp_path / "seed,7").mkdir()
    comma = tiny_bert.write_hf_safetensors_dir(tmp_path / "seed,7", tiny_bert.random_pytorch_state(seed=7))
    output = tmp_path / "reports.json"
    result = _run("--task=sr", f"--eval_file={eval_file}", f"--model_dir={hf_safetensors_dir},{other}",
                  f"--model_dir={comma}", f"--model_dir={hf_safetensors_dir}", f"--output={output}")
    assert result.returncode == 0, result.stderr[-3000:]
    reports = json.loads(output.read_text(encoding="utf-8"))
    checkpoints = (hf_safetensors_dir, other, comma, hf_safetensors_dir)
    assert [report["checkpoint"] for report in reports] == [str(c) for c in checkpoints]
    # None has a record: all evaluated with the flags' defaults, so no row is marked (6 lines, no note).
    assert {"max_length", "pooling"} <= set(reports[0]["settings"])
    assert all(report["settings"] == reports[0]["settings"] for report in reports)
    table = result.stdout.strip().splitlines()
    assert table[0] == f"sr on {eval_file}" and table[1].split() == ["MAP", "↑", "MRR", "↑", "P@1", "↑", "P@5", "↑",
                                                                       "R@10", "↑"]
    names = [os.path.basename(hf_safetensors_dir), "other", "seed,7", f"{os.path.basename(hf_safetensors_dir)} (4)"]
    for row, name, checkpoint in zip(table[2:], names, checkpoints):
        expected = evaluate_semantic_retrieval(str(eval_file),
                                               SentenceEmbedder.from_pretrained(load_pretrained(checkpoint)).embed)
        assert expected["p@5"] is None and expected["r@10"] is None  # 4 and 5 candidates: all in the top 5
        assert row.rsplit(maxsplit=5) == [name] + [f"{expected[key]:.4f}" for key in ("map", "mrr", "p@1")] + ["-", "-"]
    assert len(table) == 6


def test_bad_eval_file_exits_1_missing_file_or_checkpoint_exits_2(tmp_path, hf_safetensors_dir):
    output = tmp_path / "report.json"
    bad = tmp_path / "select.txt"
    bad.write_text("0\thello world\tgreet\t1\t7\n1\tgood morning\tgreet\t\t\n")
    result = _run("--task=sr", f"--eval_file={bad}", f"--model_dir={hf_safetensors_dir}",
                  f"--output={output}")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == f"error: {bad}:1: unknown candidate ids ['7']"
    result = _run("--task=dsts", f"--eval_file={tmp_path}/none.txt",
                  f"--model_dir={hf_safetensors_dir}", f"--output={output}")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path}/none.txt: eval file does not exist")
    (tmp_path / "sts.txt").write_text("1\thello\tworld\n3\tgood\tmorning\n5\tfine\tthanks\n", encoding="utf-8")
    result = _run("--task=dsts", f"--eval_file={tmp_path}/sts.txt", f"--model_dir={tmp_path}",
                  f"--output={output}")
    assert result.returncode == 2 and "not a checkpoint directory" in result.stderr
    assert not output.exists()
