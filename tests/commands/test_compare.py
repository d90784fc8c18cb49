"""`python -m tfdialemb.compare`: configurations named on the command line, the refusal of
configurations that differ in a setting other than the method and its options, and the table of
means, intervals, paired differences and verdicts. End to end (marked slow): two configurations x
two seeds trained on a tiny BERT, the report, and a rerun that redoes only the run whose result
was removed."""
import json
import os
import re
import subprocess
import sys

import pytest

import tiny_bert
from tiny_corpus import SR_SELECT_LINES, corpus
from tfdialemb.commands import compare
from tfdialemb.dialogue import write_dialogues
from tfdialemb.eval.evaluator import get_evaluator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _compare(*flags, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "tfdialemb.compare", *flags], capture_output=True, text=True,
                          timeout=1800, cwd=cwd, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def test_configurations_are_a_flagfile_or_train_flags(tmp_path):
    flagfile = tmp_path / "a.cfg"
    flagfile.write_text("--method=mge\n", encoding="utf-8")
    assert compare.parse_configurations([f"base={flagfile}", "short=--method=mge --turns=2 --mge_variant='paper'"]) == {
        "base": [f"--flagfile={flagfile}"], "short": ["--method=mge", "--turns=2", "--mge_variant=paper"]}
    for values, message in (([f"base={flagfile}"], "at least two --config to compare (1 given)"),
                            ([f"base={flagfile}", f"base={flagfile}"], "base is named twice"),
                            ([f"base={flagfile}", "b=flags/none.cfg"], "flags/none.cfg: no such flagfile"),
                            ([f"base={flagfile}", "--method=mge"], "give NAME=FLAGFILE")):
        with pytest.raises(ValueError, match=re.escape(message)):
            compare.parse_configurations(values)


def test_settings_other_than_the_method_and_its_options_must_agree():
    resolved = {"base": {"method": "mge", "temperature": 0.05, "max_length": 32, "batch_size": 8, "log_every": 50,
                         "model_dir": None},
                "hot": {"method": "mge", "temperature": 0.1, "max_length": 64, "batch_size": 8, "log_every": 1,
                        "model_dir": "runs/mge-jddc"},  # a dataset flagfile's, overridden per run
                "d2v": {"method": "dial2vec", "temperature": 0.05, "max_length": 32, "batch_size": 16,
                        "log_every": 50, "model_dir": None}}
    differences = compare.setting_differences(resolved, ["method", "temperature"])
    assert differences == {"max_length": {"base": 32, "hot": 64, "d2v": 32},
                           "batch_size": {"base": 8, "hot": 8, "d2v": 16}}
    with pytest.raises(ValueError) as refused:
        compare.check_differences(differences, ["batch_size"])
    assert str(refused.value) == (
        "the configurations differ in settings that change what is measured: --max_length (base: 32, hot: 64, "
        "d2v: 32); make them alike, or pass --allow_differences=max_length to compare them anyway")
    compare.check_differences(differences, ["batch_size", "max_length"])


def test_the_command_refuses_before_anything_runs(tmp_path):
    (tmp_path / "train.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "sr.txt").write_text("\n".join(SR_SELECT_LINES) + "\n", encoding="utf-8")
    (tmp_path / "bert").mkdir()
    output = tmp_path / "out"
    shared = (f"--train_file={tmp_path / 'train.jsonl'}", f"--init_checkpoint={tmp_path / 'bert'}", "--max_steps=2",
              "--task=sr", f"--eval_file={tmp_path / 'sr.txt'}", f"--output_dir={output}")
    differing = _compare("--config=short=--method=mge --max_length=32", "--config=long=--method=mge --max_length=64",
                         *shared)
    assert differing.returncode == 2
    assert differing.stderr.strip().splitlines() == [
        "error: the configurations differ in settings that change what is measured: --max_length (short: 32, long: "
        "64); make them alike, or pass --allow_differences=max_length to compare them anyway"]
    # The method's defaults count as its settings: dial2vec's learning rate and length are not MGE's.
    defaults = _compare("--config=mge=--method=mge --max_length=32", "--config=d2v=--method=dial2vec --max_length=32",
                        *shared)
    assert defaults.returncode == 2 and defaults.stderr.startswith(
        "error: the configurations differ in settings that change what is measured: --learning_rate (mge: 5e-05, "
        "d2v: 1e-05); make them alike")
    unknown = _compare("--config=a=--method=mge", "--config=b=--method=mge --temperature=0.1", *shared[:-3],
                       "--task=unknown", f"--output_dir={output}")
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: unknown task 'unknown'; known: ")
    one = _compare("--config=a=--method=mge", *shared)
    assert one.returncode == 2 and one.stderr.strip() == "error: give at least two --config to compare (1 given)"
    missing = _compare("--config=a=--method=mge", "--config=b=--method=mge --temperature=0.1",
                       *shared[:-2], f"--eval_file={tmp_path / 'none.txt'}", f"--output_dir={output}")
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"error: --eval_file={tmp_path / 'none.txt'}: no such file"
    assert not output.exists()


def _result(config, seed, values):
    return {"config": config, "seed": seed, "metrics": values, "wall_time_s": 1.0}


def test_the_table_gives_means_intervals_differences_and_verdicts():
    maps = {"base": [0.40, 0.42, 0.41], "better": [0.45, 0.48, 0.46], "same": [0.41, 0.40, 0.42]}
    results = [_result(config, seed, {"map": values[i], "mrr": 0.5, "p@1": 0.25, "p@5": None, "r@10": 0.9})
               for config, values in maps.items() for i, seed in enumerate((0, 1, 2))]
    summaries = compare.summarise(get_evaluator("sr"), list(maps), [0, 1, 2], results)
    assert summaries["p@5"]["undefined"] == [f"{c} seed {s}" for c in maps for s in (0, 1, 2)]
    assert summaries["map"]["differences"]["better"]["verdict"] == "better"
    assert summaries["map"]["differences"]["same"]["verdict"] == "no detectable difference at 3 seeds"
    assert summaries["mrr"]["differences"]["same"]["interval"] == [0.0, 0.0]
    table = compare.comparison_table(summaries, list(maps), [0, 1, 2], "sr on sr.txt: base, better, same")
    lines = table.splitlines()
    block = lines[lines.index("MAP (higher is better)") + 2:][:3]
    assert block[0].split() == ["base", "0.4100", *_bracketed(summaries["map"]["configurations"]["base"]["interval"])]
    assert block[1].split()[:3] == ["better", "0.4633", *_bracketed(summaries["map"]["configurations"]["better"][
        "interval"])[:1]] and block[1].endswith("better")
    assert block[2].endswith("no detectable difference at 3 seeds")
    assert "P@5 (higher is better)" in lines
    assert lines[lines.index("P@5 (higher is better)") + 1].startswith("  not a number in base seed 0")


def _bracketed(interval):
    return [f"[{interval[0]:.4f},", f"{interval[1]:.4f}]"]


def test_two_seeds_give_means_without_intervals_or_verdicts():
    ranks = {"base": (3.0, 3.2), "new": (2.0, 2.1)}
    results = [_result(config, seed, {"avg_rank": rank})
               for config in ranks for seed, rank in zip((0, 1), ranks[config])]
    summaries = compare.summarise(get_evaluator("sequence_modeling"), ["base", "new"], [0, 1], results)
    entry = summaries["avg_rank"]
    assert not entry["greater_is_better"] and entry["configurations"]["new"]["interval"] is None
    assert entry["differences"]["new"]["verdict"].startswith("no verdict: 2 seeds")
    lines = compare.comparison_table(summaries, ["base", "new"], [0, 1], "sequence_modeling").splitlines()
    assert "with 2 seeds an interval is not meaningful" in lines[2]
    assert lines[-1].split() == ["new", "2.0500", "n/a", "-1.0500", "n/a", "no", "verdict"]


@pytest.mark.slow
def test_two_configurations_over_two_seeds_and_a_rerun_that_redoes_only_the_missing_run(tmp_path, tiny_state):
    (tmp_path / "bert").mkdir()
    tiny_bert.write_hf_safetensors_dir(str(tmp_path / "bert"), tiny_state)
    write_dialogues(corpus(24), str(tmp_path / "train.jsonl"))
    (tmp_path / "sr.txt").write_text("\n".join(SR_SELECT_LINES) + "\n", encoding="utf-8")
    output = tmp_path / "out"
    command = ("--config=base=--method=mge --temperature=0.05", "--config=hot=--method=mge --temperature=0.5",
               "--seeds=0,1", f"--train_file={tmp_path / 'train.jsonl'}", f"--init_checkpoint={tmp_path / 'bert'}",
               "--max_steps=2", "--batch_size=4", "--max_length=16", "--turns=2", "--negatives=2", "--num_shards=1",
               "--freeze_layers=0", "--log_every=100", "--task=sr", f"--eval_file={tmp_path / 'sr.txt'}",
               f"--output_dir={output}")
    first = _compare(*command)
    assert first.returncode == 0, (first.stdout[-3000:], first.stderr[-3000:])
    report = json.loads((output / "report.json").read_text(encoding="utf-8"))
    assert [(run["config"], run["seed"]) for run in report["runs"]] == [("base", 0), ("hot", 0), ("base", 1),
                                                                        ("hot", 1)]
    for run in report["runs"]:
        evaluation = json.loads((output / run["config"] / f"seed-{run['seed']}.evaluation.json").read_text())
        assert run["metrics"] == evaluation["metrics"] and evaluation["weights"]["step"] == 2
        assert run["commands"]["train"][-2:] == [f"--seed={run['seed']}",
                                                 f"--model_dir={output / run['config'] / ('seed-' + str(run['seed']))}"]
        assert run["wall_time_s"] > 0
    maps = {config: [run["metrics"]["map"] for run in report["runs"] if run["config"] == config]
            for config in ("base", "hot")}
    found = report["metrics"]["map"]
    assert abs(found["configurations"]["hot"]["mean"] - sum(maps["hot"]) / 2) < 1e-12
    assert abs(found["differences"]["hot"]["mean"] - (sum(maps["hot"]) - sum(maps["base"])) / 2) < 1e-12
    assert found["differences"]["hot"]["interval"] is None and found["differences"]["hot"]["verdict"].startswith(
        "no verdict")
    assert "with 2 seeds an interval is not meaningful" in first.stdout
    progress = [line for line in first.stdout.splitlines() if line.startswith("[")]
    assert progress[-1].startswith("[4/4] hot, seed 1: done")

    # Stopped before its result was written: rerun, only that run trains (nothing left: its model
    # holds step 2) and is evaluated again; the others are skipped as recorded.
    kept = {(c, s): os.path.getmtime(output / c / f"seed-{s}.result.json") for c in ("base", "hot") for s in (0, 1)}
    os.remove(output / "hot" / "seed-0.result.json")
    os.remove(output / "hot" / "seed-0.evaluation.json")
    again = _compare(*command)
    assert again.returncode == 0, (again.stdout[-3000:], again.stderr[-3000:])
    commands = [line for line in again.stdout.splitlines() if line.startswith("$ python -m ")]
    assert len(commands) == 2 and all(f"--model_dir={output / 'hot' / 'seed-0'}" in line for line in commands)
    assert sum("skipped" in line for line in again.stdout.splitlines() if line.startswith("[")) == 3
    assert f"nothing to train: {output / 'hot' / 'seed-0'} already holds step 2" in again.stdout
    for (config, seed), mtime in kept.items():
        if (config, seed) != ("hot", 0):
            assert os.path.getmtime(output / config / f"seed-{seed}.result.json") == mtime
    assert json.loads((output / "report.json").read_text(encoding="utf-8"))["metrics"] == report["metrics"]
