"""A recipe's steps reuse an output only when it is of the very same step: an evaluation report of
the same arguments and of the weights its model holds now, any other output by its stamp. A model
trained further since is evaluated again, never shown with its earlier figures."""
import hashlib
import json
import os

import tensorflow as tf

from tfdialemb.commands import steps
from tfdialemb.encoders.checkpoint import weights_fingerprint


def _train_to(directory, step, value):
    """A training run's checkpoint `ckpt-STEP` holding `value`, as the training loop's manager names it."""
    counter = tf.Variable(step, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(weight=tf.Variable(value), step=counter)
    tf.train.CheckpointManager(checkpoint, str(directory), max_to_keep=1).save(checkpoint_number=counter)


def test_the_fingerprint_names_the_step_and_hashes_the_newest_index(tmp_path):
    _train_to(tmp_path, 4, 1.0)
    _train_to(tmp_path, 6, 2.0)
    index = tmp_path / "ckpt-6.index"
    assert weights_fingerprint(str(tmp_path)) == {
        "weights": "ckpt-6.index", "step": 6, "sha256": hashlib.sha256(index.read_bytes()).hexdigest()}
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "model.safetensors").write_bytes(b"weights")
    assert weights_fingerprint(str(tmp_path / "hf")) == {
        "weights": "model.safetensors", "sha256": hashlib.sha256(b"weights").hexdigest()}
    (tmp_path / "empty").mkdir()
    assert weights_fingerprint(str(tmp_path / "empty")) is None


def _fake_evaluate(runs):
    """run_step standing in for `python -m tfdialemb.evaluate`: writes a report recording its
    arguments and the weights of --model_dir, as the command does, with the step as its figure."""
    def run_step(module, *arguments):
        assert module == "tfdialemb.evaluate"
        runs.append(arguments)
        values = dict(argument[2:].split("=", 1) for argument in arguments)
        weights = weights_fingerprint(values["model_dir"])
        report = {"task": values["task"], "checkpoint": values["model_dir"], "arguments": list(arguments),
                  "weights": weights, "metrics": {"step": weights["step"]}}
        with open(values["output"], "w", encoding="utf-8") as f:
            json.dump(report, f)
    return run_step


def test_a_report_is_evaluated_again_when_the_model_trained_on_or_the_arguments_changed(tmp_path, monkeypatch,
                                                                                          capsys):
    model, report = tmp_path / "model", str(tmp_path / "probes.json")
    runs = []
    monkeypatch.setattr(steps, "run_step", _fake_evaluate(runs))
    _train_to(model, 2, 1.0)
    arguments = ("--task=probes", f"--model_dir={model}")
    assert steps.evaluation_metrics(report, *arguments) == {"step": 2}
    assert steps.evaluation_metrics(report, *arguments) == {"step": 2} and len(runs) == 1  # reused
    _train_to(model, 5, 3.0)  # the run resumed and went on
    assert steps.evaluation_metrics(report, *arguments) == {"step": 5} and len(runs) == 2
    assert "evaluated other weights than" in capsys.readouterr().out
    assert steps.evaluation_metrics(report, *arguments, "--batch_size=8") == {"step": 5}
    assert len(runs) == 3 and runs[-1][-2:] == ("--batch_size=8", f"--output={report}")
    with open(report, "w", encoding="utf-8") as f:  # a report written before reports recorded their step
        json.dump({"task": "probes", "checkpoint": str(model), "metrics": {"step": 1}}, f)
    assert steps.evaluation_metrics(report, *arguments) == {"step": 5} and len(runs) == 4


def test_an_output_is_made_again_when_a_model_or_input_it_depends_on_changed(tmp_path, monkeypatch):
    model, source = tmp_path / "model", tmp_path / "probe.jsonl"
    output, leftovers = tmp_path / "data" / "augmented.jsonl", tmp_path / "data" / "augmented.jsonl.partial"
    _train_to(model, 1, 1.0)
    source.write_text("first\n", encoding="utf-8")
    runs = []

    def run_step(module, *arguments):
        runs.append((module, arguments))
        assert not leftovers.exists()  # an earlier state's leftovers are gone before the command runs
        output.write_text(f"made from {source.read_text(encoding='utf-8').strip()}\n", encoding="utf-8")

    monkeypatch.setattr(steps, "run_step", run_step)

    def make():
        return steps.run_once(str(output), "tfdialemb.augment", [f"--input={source}", f"--output={output}"],
                                      depends_on=[str(source), str(model)], discard=[str(leftovers)])

    assert make() and not make() and len(runs) == 1
    assert json.loads((tmp_path / "data" / "augmented.jsonl.step.json").read_text(encoding="utf-8")) == {
        "arguments": [f"--input={source}", f"--output={output}"],
        "depends_on": {str(source): {"sha256": hashlib.sha256(b"first\n").hexdigest()},
                       str(model): weights_fingerprint(str(model))}}
    _train_to(model, 3, 2.0)
    leftovers.mkdir()
    assert make() and len(runs) == 2
    source.write_text("second\n", encoding="utf-8")
    assert make() and output.read_text(encoding="utf-8") == "made from second\n"
    os.remove(output)  # interrupted after the stamp: the same step runs again, keeping its leftovers
    leftovers.mkdir()
    with_leftovers = []
    monkeypatch.setattr(steps, "run_step", lambda *a: with_leftovers.append(leftovers.exists()))
    assert make() and with_leftovers == [True]
