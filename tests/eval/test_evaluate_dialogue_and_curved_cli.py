"""`python -m tfdialemb.evaluate` on the dial2vec and triple-encoder tasks: the report holds what the
library computes, the plots are written, and flags that do not fit the task are refused."""
import json
import subprocess
import sys

import pytest
from tiny_corpus import corpus

from data_prep.build_stp_set import build_stp_set
from tfdialemb.dialogue import Dialogue, write_dialogues
from tfdialemb.encoders import load_pretrained, save_pretrained
from tfdialemb.eval.dialogue_embedding import evaluate_dialogue_embeddings
from tfdialemb.eval.sequence_modeling import evaluate_sequence_modeling
from tfdialemb.eval.short_term_planning import evaluate_short_term_planning
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder


def _run(*args):
    return subprocess.run([sys.executable, "-m", "tfdialemb.evaluate", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def labelled_file(tmp_path_factory):
    dialogues = [Dialogue(d.id, d.turns, {"domain": "ab"[i % 2]})
                 for i, d in enumerate(corpus(n=12, seed=3))]
    path = tmp_path_factory.mktemp("dialogue_eval") / "labelled.jsonl"
    write_dialogues(dialogues, str(path))
    return path


def test_dialogue_report_and_plots(tmp_path, labelled_file, hf_safetensors_dir):
    """A model directory with a validation history also gets the alignment-uniformity plot."""
    output, plots, model_dir = tmp_path / "report.json", tmp_path / "plots", tmp_path / "model"
    pretrained = load_pretrained(hf_safetensors_dir)
    save_pretrained(pretrained.encoder, pretrained.tokenizer, str(model_dir))
    (model_dir / "validation.jsonl").write_text(
        "".join(json.dumps({"step": step, "adjusted_alignment": -0.1 * step, "uniformity": -step})
                + "\n" for step in (10, 20)), encoding="utf-8")
    result = _run("--task=dialogue", f"--eval_file={labelled_file}", "--label_key=domain",
                  f"--model_dir={model_dir}", f"--output={output}", "--runs=2",
                  f"--plot_dir={plots}")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text(encoding="utf-8"))
    embedder = DialogueEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir))
    expected = evaluate_dialogue_embeddings(str(labelled_file), "domain", embedder.embed, runs=2,
                                            spearman_repeats=2)
    assert set(report["metrics"]["views"]) == {"interlocutor", "mean", "cls", "p1", "p2"}
    views = report["metrics"].pop("views")
    assert report["metrics"] == {k: v for k, v in expected.items() if k != "views"}
    for view, metrics in expected["views"].items():
        assert views[view] == pytest.approx(metrics, abs=1e-5), view
    assert sorted(p.name for p in plots.iterdir()) == sorted(
        [f"projection-{view}.png" for view in expected["views"]] + ["alignment_uniformity.png"])


def test_sequence_modeling_report(tmp_path, labelled_file, hf_safetensors_dir):
    output = tmp_path / "report.json"
    result = _run("--task=sequence_modeling", f"--eval_file={labelled_file}",
                  f"--init_checkpoint={hf_safetensors_dir}", f"--output={output}",
                  "--k_last_rows=2", "--history_lengths=2,3", "--rank_ties=optimistic")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text(encoding="utf-8"))
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir))
    expected = evaluate_sequence_modeling(str(labelled_file), embedder.embed, mode="c3l",
                                          k_last_rows=2, history_lengths=[2, 3], ties="optimistic")
    assert report["metrics"] == pytest.approx(expected, abs=1e-9)
    assert report["embedding"]["rank_ties"] == "optimistic"


def test_stp_report_with_the_released_scorer(tmp_path, labelled_file, hf_safetensors_dir):
    stp, output = str(tmp_path / "stp.jsonl"), tmp_path / "report.json"
    build_stp_set(str(labelled_file), stp, history_lengths=[2], goal_distances=[1, 2],
                  distractors=5, seed=1)
    result = _run("--task=stp", f"--eval_file={stp}", f"--init_checkpoint={hf_safetensors_dir}",
                  f"--output={output}", "--c3l_stp_scorer=released", "--rank_ties=optimistic")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text(encoding="utf-8"))
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir))
    expected = evaluate_short_term_planning(stp, embedder.embed, "c3l", scorer="released",
                                            ties="optimistic")
    assert report["metrics"].pop("distractor_sources") == expected.pop("distractor_sources") == [
        "random_pool seed=1"]
    assert report["metrics"] == pytest.approx(expected, abs=1e-9)
    assert (report["embedding"]["c3l_stp_scorer"], report["embedding"]["rank_ties"]) == (
        "released", "optimistic")


@pytest.mark.parametrize("flags, message", [
    (["--task=sr", "--label_key=domain"], "--label_key does not apply to --task=sr"),
    (["--task=dialogue", "--embedding=whitening"], "--task=dialogue takes --embedding in"),
    (["--task=dialogue"], "--task=dialogue needs --label_key"),
    (["--task=stp", "--embedding=encoder", "--separator=eou"], "--separator does not apply"),
])
def test_flags_that_do_not_fit_the_task_exit_2(tmp_path, labelled_file, hf_safetensors_dir,
                                                flags, message):
    result = _run(*flags, f"--eval_file={labelled_file}", f"--init_checkpoint={hf_safetensors_dir}",
                  f"--output={tmp_path / 'report.json'}")
    assert result.returncode == 2
    assert message in result.stderr
