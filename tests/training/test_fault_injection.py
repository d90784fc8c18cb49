"""Training killed with SIGKILL during the data build, during a checkpoint save and at a random
step, and rerun each time, ends with the weights of an uninterrupted run and no leftover files."""
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

MAX_STEPS = 40


def _command(tmp_path, model_dir):
    return [sys.executable, "-m", "tfdialemb.train", "--method=mge", f"--train_file={tmp_path / 'train.jsonl'}",
            f"--model_dir={model_dir}", f"--init_checkpoint={tmp_path / 'bert'}", f"--max_steps={MAX_STEPS}",
            "--batch_size=4", "--checkpoint_every=2", "--freeze_layers=0", "--turns=2", "--negatives=2",
            "--max_length=16", "--num_shards=1", "--log_every=100"]


def _kill_when(process, seen, timeout=240.0):
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


def _after(seconds, condition):
    """A condition true once `seconds` have passed from now and `condition()` holds."""
    start = time.time()
    return lambda: time.time() - start > seconds and condition()


def _entries(model_dir, test):
    return os.path.isdir(model_dir) and any(test(name) for name in os.listdir(model_dir))


def _final_weights(model_dir):
    reader = tf.train.load_checkpoint(str(model_dir))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if "save_counter" not in name and not name.startswith("_CHECKPOINTABLE_OBJECT_GRAPH")}


@pytest.mark.slow
def test_killed_three_times_ends_like_an_uninterrupted_run(tmp_path):
    state = tiny_bert.random_pytorch_state(seed=3)
    config = dict(tiny_bert.HF_CONFIG, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (tmp_path / "bert").mkdir()
    tiny_bert.write_hf_safetensors_dir(tmp_path / "bert", state, config=config)
    write_dialogues(corpus(n=60, seed=8), str(tmp_path / "train.jsonl"))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")

    straight = subprocess.run(_command(tmp_path, tmp_path / "straight"), capture_output=True, text=True,
                              timeout=600, env=env)
    assert straight.returncode == 0, straight.stderr[-3000:]

    model_dir = tmp_path / "killed"
    delay = np.random.default_rng(5).uniform(1.0, 4.0)
    kill_points = {  # each makes its condition when its run starts
        "data build": lambda: lambda: _entries(model_dir, lambda n: n.startswith(".tmp-data")),
        "checkpoint save": lambda: lambda: _entries(model_dir, lambda n: n.endswith("_temp")),
        "random step": lambda: _after(delay, lambda: _entries(model_dir, lambda n: n.startswith("ckpt-"))),
    }
    hit = []
    for point, make_condition in kill_points.items():
        condition = make_condition()
        process = subprocess.Popen(_command(tmp_path, model_dir), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, env=env)
        if _kill_when(process, condition):
            hit.append(point)
    print(f"killed during: {hit}")
    assert "data build" in hit and len(hit) >= 2, hit
    final = subprocess.run(_command(tmp_path, model_dir), capture_output=True, text=True, timeout=600, env=env)
    assert final.returncode == 0, final.stderr[-3000:]
    assert f"trained to step {MAX_STEPS} of {MAX_STEPS}" in final.stdout

    expected, got = _final_weights(tmp_path / "straight"), _final_weights(model_dir)
    assert sorted(got) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    leftovers = [n for n in os.listdir(model_dir) if n.startswith((".tmp-", ".old-")) or n.endswith("_temp")]
    assert leftovers == []
