"""Training with BERT's default dropout, killed with SIGKILL at several points and rerun, ends each
time with every tensor of an uninterrupted run, bit for bit, and no leftover files."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tiny_corpus import corpus
from tfdialemb.dialogue import write_dialogues

MAX_STEPS = 20


def _command(tmp_path, model_dir):
    return [sys.executable, "-m", "tfdialemb.train", "--method=mge", f"--train_file={tmp_path / 'train.jsonl'}",
            f"--model_dir={model_dir}", f"--init_checkpoint={tmp_path / 'bert'}", f"--max_steps={MAX_STEPS}",
            "--batch_size=4", "--checkpoint_every=2", "--freeze_layers=0", "--turns=2", "--negatives=2",
            "--max_length=16", "--num_shards=1", "--log_every=100"]


def _kill_when(process, seen, timeout=300.0):
    """SIGKILLs `process` as soon as `seen()` is true; False if it ended first."""
    deadline = time.time() + timeout
    while time.time() < deadline and process.poll() is None:
        if seen():
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.002)
    process.wait()
    return False


def _names(model_dir):
    return os.listdir(model_dir) if os.path.isdir(model_dir) else []


def _saved(model_dir):
    """The checkpoint names the directory's `checkpoint` file lists (written last by a save)."""
    path = os.path.join(model_dir, "checkpoint")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def _kill_points(model_dir, delay):
    """Point name -> a factory of its condition, made when the run it kills starts."""
    def between_checkpoints():
        start = []

        def seen():
            if not start and "ckpt-2" in _saved(model_dir):
                start.append(time.time())
            return bool(start) and time.time() - start[0] > delay
        return seen

    return {
        "during the data build": lambda: lambda: any(n.startswith(".tmp-data") for n in _names(model_dir)),
        "before the first checkpoint": lambda: lambda: "train" in _names(model_dir) and not any(
            n.startswith("ckpt-") for n in _names(model_dir)),
        "during a checkpoint save": lambda: lambda: any(n.endswith("_temp") for n in _names(model_dir)),
        "right after a checkpoint is written": lambda: lambda: '"ckpt-4"' in _saved(model_dir),
        "between checkpoints": between_checkpoints,
    }


def _every_tensor(model_dir):
    reader = tf.train.load_checkpoint(str(model_dir))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if "save_counter" not in name and not name.startswith("_CHECKPOINTABLE_OBJECT_GRAPH")}


def _leftovers(model_dir):
    return [os.path.relpath(os.path.join(root, name), model_dir)
            for root, directories, files in os.walk(model_dir) for name in directories + files
            if name.startswith((".tmp-", ".old-")) or name.endswith("_temp")]


@pytest.mark.slow
def test_killed_at_each_point_and_rerun_ends_like_an_uninterrupted_run(tmp_path):
    state = tiny_bert.random_pytorch_state(seed=3)
    assert tiny_bert.HF_CONFIG["hidden_dropout_prob"] == tiny_bert.HF_CONFIG["attention_probs_dropout_prob"] == 0.1
    (tmp_path / "bert").mkdir()
    tiny_bert.write_hf_safetensors_dir(tmp_path / "bert", state)
    write_dialogues(corpus(n=60, seed=8), str(tmp_path / "train.jsonl"))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")

    straight = subprocess.run(_command(tmp_path, tmp_path / "straight"), capture_output=True, text=True,
                              timeout=600, env=env)
    assert straight.returncode == 0, straight.stderr[-3000:]
    expected = _every_tensor(tmp_path / "straight")
    assert any(name.startswith("dropout_seeds/") for name in expected)

    delay = np.random.default_rng(5).uniform(0.2, 1.0)
    scenarios = [("during the data build", "before the first checkpoint"), ("during a checkpoint save",),
                 ("right after a checkpoint is written",), ("between checkpoints",)]
    for number, points in enumerate(scenarios):
        model_dir = tmp_path / f"killed{number}"
        conditions = _kill_points(str(model_dir), delay)
        for point in points:
            process = subprocess.Popen(_command(tmp_path, model_dir), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, env=env)
            assert _kill_when(process, conditions[point]()), f"the run ended before it could be killed {point}"
        rerun = subprocess.run(_command(tmp_path, model_dir), capture_output=True, text=True, timeout=600, env=env)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert f"trained to step {MAX_STEPS} of {MAX_STEPS}" in rerun.stdout
        got = _every_tensor(model_dir)
        assert sorted(got) == sorted(expected), points
        for name, value in expected.items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"killed {', then '.join(points)}: {name}")
        assert _leftovers(model_dir) == [], points
