"""`python -m tfdialemb.thesis_grid` end to end on a tiny BERT and demo dialogues: it trains the
context-response model a-l-m needs, runs the two rows from their flagfiles, and writes Table 3 and
Tables 4-5 from the evaluation reports. In-process, with the commands stood in for: each evaluate
task gets only its own flags, Tables 4-5 read k of k-NN from the reports, and a grid that stops
writes the cells it finished."""
import itertools
import json
import os
import subprocess
import sys

import pytest
from absl import flags

import tiny_bert
from tfdialemb.commands import thesis_grid
from tfdialemb.dialogue import read_dialogues, write_dialogues

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(*args, cwd=ROOT):
    result = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=1800, cwd=cwd,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.mark.slow
def test_the_grid_trains_its_rows_and_writes_the_tables_from_the_reports(tmp_path, tiny_state):
    for name in ("mlm", "bert"):
        (tmp_path / name).mkdir()
    mlm = tiny_bert.write_hf_safetensors_dir(str(tmp_path / "mlm"),
                                             tiny_bert.with_heads(tiny_state, tiny_bert.random_mlm_head()))
    four_layers = dict(tiny_bert.HF_CONFIG, num_hidden_layers=4)  # Table 5 probes the hidden states -2..-4
    encoder = tiny_bert.write_hf_safetensors_dir(str(tmp_path / "bert"),
                                                 tiny_bert.random_pytorch_state(seed=1, config=four_layers),
                                                 four_layers)
    _run("data_prep.make_demo_corpus", f"--output={tmp_path / 'demo.jsonl'}", "--dialogues=72")
    dialogues = read_dialogues(str(tmp_path / "demo.jsonl"))
    for name, count in (("train", 24), ("fit", 24), ("eval", 24)):
        write_dialogues(itertools.islice(dialogues, count), str(tmp_path / f"{name}.jsonl"))
    work = tmp_path / "grid"
    tiny = ("--batch_size=4", "--num_shards=1", "--freeze_layers=-1", "--log_every=1")

    def grid(steps):
        return _run(
            "tfdialemb.thesis_grid", "--sets=a-l-m,a-l-m-dse", f"--encoders=bert={encoder}",
            f"--workdir={work}", f"--train_file={tmp_path / 'train.jsonl'}",
            f"--probe_fit_file={tmp_path / 'fit.jsonl'}", f"--probe_eval_file={tmp_path / 'eval.jsonl'}",
            f"--context_response_init={encoder}",
            *(f"--context_response_flag={f}" for f in tiny + ("--max_steps=2", "--max_length=32")),
            # The tiny BERT's 64 positions hold no whole demo dialogue: cut them rather than drop them all.
            *(f"--train_flag={f}" for f in tiny + (f"--max_steps={steps}", "--drop_long_dialogues=false",
                                                   "--validate_every=0", f"--fill_mask_model={mlm}",
                                                   f"--sentence_encoder={encoder}", "--fill_stop_words=none",
                                                   "--shuffle_min_turns=9", "--shuffle_min_stages=3")),
            "--evaluate_flag=--max_length=64")

    result = grid(steps=2)

    # The context-response model was trained first and scored a-l-m's stages; each row ran its flagfile.
    assert json.loads((work / "context_response" / "method.json").read_text())["method"] == "context_response"
    for row in ("a-l-m", "a-l-m-dse"):
        params = json.loads((work / "runs" / f"{row}-bert" / "method.json").read_text())["params"]
        assert (params["augment_set"], params["on_the_fly"], params["augcl_optimizer"], params["stage_clustering"],
                params["sentence_encoder_context"], params["sentence_encoder_similarity"]) == (
            row, True, "released", "released", 3, "dot")
    assert json.loads((work / "runs" / "a-l-m-bert" / "method.json").read_text())["params"][
        "context_response_model"] == str(work / "context_response")

    def report(name, task):
        return json.loads((work / "reports" / f"{name}-{task}.json").read_text())["metrics"]

    lines = (work / "tables.md").read_text(encoding="utf-8").splitlines()
    assert lines == result.stdout.strip().splitlines()[-len(lines) - 2:-2]
    rows = {line.split(" | ")[0][2:]: line.strip("| ").split(" | ")[1:] for line in lines if line.startswith("| ")}
    table4, table5 = (line.strip("| ").split(" | ")[1:] for line in lines if line.startswith("| BERT"))
    for row, name in (("raw", "raw-bert"), ("a-l-m", "a-l-m-bert"), ("a-l-m-dse", "a-l-m-dse-bert")):
        probes = report(name, "probes")
        assert rows[row] == [f"{100 * probes[k]:.2f}" for k in ("accuracy", "purity", "ndcg@100")], row
    raw, cft = (report(name, "invariance")["representations"] for name in ("raw-bert", "a-l-m-dse-bert"))
    assert table4 == [f"{100 * v:.2f}" for v in (
        raw["embedding"]["logreg_accuracy"], cft["embedding"]["logreg_accuracy"], raw["embedding"]["5nn_accuracy"],
        cft["embedding"]["5nn_accuracy"], raw["embedding"]["view_cosine"]["mean"],
        cft["embedding"]["view_cosine"]["mean"])]
    assert table5 == [
        f"{100 * found[layer]['5nn_accuracy']:.2f}" for found in (raw, cft)
        for layer in ("embedding", "hidden_state[-2]", "hidden_state[-3]", "hidden_state[-4]")]

    # Rerun with the rows trained one step further: the untrained encoder's reports and the probe
    # augmentations (same models, same input) are reused; each row's report is of step 2's weights,
    # so it is evaluated again, and the tables show step 3's figures.
    again = grid(steps=3)
    commands = [line for line in again.stdout.splitlines() if line.startswith("$ python -m ")]
    evaluated = [line for line in commands if line.startswith("$ python -m tfdialemb.evaluate")]
    assert len(evaluated) == 3 and all("--model_dir=" in line for line in evaluated), evaluated
    assert not [line for line in commands if line.startswith("$ python -m tfdialemb.augment")]
    for name, task in (("a-l-m-bert", "probes"), ("a-l-m-dse-bert", "probes"), ("a-l-m-dse-bert", "invariance")):
        assert json.loads((work / "reports" / f"{name}-{task}.json").read_text())["weights"]["step"] == 3
    rows = {line.split(" | ")[0][2:]: line.strip("| ").split(" | ")[1:]
            for line in (work / "tables.md").read_text(encoding="utf-8").splitlines() if line.startswith("| ")}
    probes = report("a-l-m-bert", "probes")
    assert rows["a-l-m"] == [f"{100 * probes[k]:.2f}" for k in ("accuracy", "purity", "ndcg@100")]


@pytest.fixture
def grid_flags():
    """parse(*args) sets the grid's flags as its command line would."""
    def parse(*args):
        flags.FLAGS.unparse_flags()
        flags.FLAGS(["thesis_grid", *args])
    yield parse
    flags.FLAGS.unparse_flags()


def _invariance(logreg, knn, cosine, layers):
    """A --task=invariance report's representations with --invariance_knn=7."""
    return {"embedding": {"logreg_accuracy": logreg, "7nn_accuracy": knn, "view_cosine": {"mean": cosine}},
            **{f"hidden_state[-{k}]": {"logreg_accuracy": 0.0, "7nn_accuracy": value}
               for k, value in zip((2, 3, 4), layers)}}


def test_tables_4_and_5_read_k_from_the_reports():
    results = {("raw", "bert"): {"invariance": _invariance(0.5, 0.25, 0.75, (0.125, 0.375, 0.625))},
               (thesis_grid.CFT_SET, "bert"): {"invariance": _invariance(0.4, 0.2, 0.6, (0.1, 0.3, 0.5))}}
    lines = thesis_grid.tables45(results, ["bert"]).splitlines()
    assert lines[2] == "| model | logreg raw | logreg cft | 7nn raw | 7nn cft | cosine raw | cosine cft |"
    assert lines[4] == "| BERT | 50.00 | 40.00 | 25.00 | 20.00 | 75.00 | 60.00 |"
    assert lines[6].startswith("Table 5: 7-NN accuracy per layer")
    assert lines[10] == "| BERT | 25.00 | 12.50 | 37.50 | 62.50 | 20.00 | 10.00 | 30.00 | 50.00 |"


def test_each_evaluate_task_gets_the_shared_flags_and_only_its_own(grid_flags, monkeypatch):
    grid_flags("--probe_fit_file=fit.jsonl", "--probe_eval_file=eval.jsonl", "--intent_fit_file=b77_train.jsonl",
               "--intent_eval_file=b77_test.jsonl", "--evaluate_flag=--batch_size=8", "--probes_flag=--ndcg_k=50",
               "--intent_flag=--max_length=32", "--invariance_flag=--invariance_knn=7")
    calls = {}

    def evaluation_metrics(path, *args):
        calls[args[0]] = args
        return {"representations": {}}

    monkeypatch.setattr(thesis_grid, "evaluation_metrics", evaluation_metrics)
    thesis_grid.evaluate("reports", "raw-bert", ("--init_checkpoint=bert", "--probe_view=cls"),
                         ("--init_checkpoint=bert", "--pooling=cls"), "augmented.jsonl")
    assert calls["--task=probes"][-4:] == ("--init_checkpoint=bert", "--probe_view=cls", "--batch_size=8",
                                           "--ndcg_k=50")
    assert calls["--task=intent"][-4:] == ("--init_checkpoint=bert", "--pooling=cls", "--batch_size=8",
                                           "--max_length=32")
    assert calls["--task=invariance"][-4:] == ("--init_checkpoint=bert", "--probe_view=cls", "--batch_size=8",
                                               "--invariance_knn=7")


def test_a_grid_that_stops_writes_the_cells_it_finished(grid_flags, monkeypatch, tmp_path):
    for name in ("fit", "eval"):
        (tmp_path / f"{name}.jsonl").write_text("", encoding="utf-8")
    grid_flags("--sets=t-l,t-h", "--encoders=bert=models/bert", f"--workdir={tmp_path / 'grid'}",
               f"--flags_dir={os.path.join(ROOT, 'flags')}", f"--probe_fit_file={tmp_path / 'fit.jsonl'}",
               f"--probe_eval_file={tmp_path / 'eval.jsonl'}")
    monkeypatch.setattr(thesis_grid, "evaluate", lambda *args: {
        "probes": {"accuracy": 0.5, "purity": 0.25, "ndcg@100": 0.125}})

    def train(set_name, *args):
        if set_name == "t-h":
            raise SystemExit("stopped: the command above exited with 2")
        return "runs/t-l-bert"

    monkeypatch.setattr(thesis_grid, "train", train)
    with pytest.raises(SystemExit, match="exited with 2"):
        thesis_grid.main([])
    assert (tmp_path / "grid" / "tables.md").read_text(encoding="utf-8").splitlines() == [
        "Incomplete: the grid stopped (stopped: the command above exited with 2); a dash marks a cell not "
        "reached. Rerun the same command to continue.", "",
        "Table 3: SGD domain probes (percent, higher is better)", "",
        "| set | classif. BERT | cluster. BERT | retrieval BERT |", "|---|---|---|---|",
        "| raw | 50.00 | 25.00 | 12.50 |", "| t-l | 50.00 | 25.00 | 12.50 |", "| t-h | — | — | — |"]

