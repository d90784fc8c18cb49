"""Runs as users run them: two MultiWorkerMirroredStrategy processes on 127.0.0.1, and a
training process killed with SIGKILL, then restarted."""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.dialogue import write_dialogues
from tiny_corpus import TOKENIZER, corpus

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def mge_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("mw")
    write_dialogues(corpus(n=24, seed=4), str(root / "train.jsonl"))
    build(str(root / "train.jsonl"), str(root / "built"), make_builder("mge", {"negatives": 2, "context_before": 2,
                                                                                "context_after": 2}),
          TOKENIZER, BuildOptions(max_length=12, num_shards=2, merge_consecutive_turns=False, min_turns=1))
    return root


def test_two_worker_processes_end_with_identical_weights(mge_build, tmp_path):
    # Each worker picks its own port and holds it until its server starts (multi_worker_worker.py):
    # ports picked here and released before the workers start could be taken in between.
    processes = [subprocess.Popen(
        [sys.executable, os.path.join(HERE, "multi_worker_worker.py"), str(mge_build / "built"),
         str(tmp_path / "model"), str(tmp_path / f"w{index}.npz"), str(tmp_path / "ports"), str(index), "2"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for index in range(2)]
    outputs = [p.communicate(timeout=300)[0] for p in processes]
    for p, out in zip(processes, outputs):
        assert p.returncode == 0, out[-3000:]
    first, second = np.load(tmp_path / "w0.npz"), np.load(tmp_path / "w1.npz")
    assert len(first.files) == len(second.files) > 0
    for name in first.files:
        np.testing.assert_array_equal(first[name], second[name])
    assert sorted(n for n in os.listdir(tmp_path / "model") if n.endswith(".index")) == ["ckpt-2.index", "ckpt-3.index"]
    assert not [n for n in os.listdir(tmp_path / "model") if n.startswith(".worker")]


def _recorded_step(model_dir) -> int:
    """The step of the checkpoint TensorFlow has recorded as complete in `model_dir/checkpoint`
    (0: none yet). The state file is replaced atomically after a save's index and data files are
    in place, so a `ckpt-N.index` on disk is not yet a checkpoint a restart will find."""
    try:
        with open(os.path.join(model_dir, "checkpoint"), encoding="utf-8") as f:
            first = f.readline()
    except FileNotFoundError:
        return 0
    return int(first.split('"')[1].rsplit("-", 1)[1])


@pytest.mark.slow
def test_killed_training_resumes_from_its_last_checkpoint(mge_build, tmp_path, hf_safetensors_dir):
    model_dir = tmp_path / "model"
    command = [sys.executable, "-m", "tfdialemb.train", "--method=mge", f"--train_file={mge_build / 'built'}",
               f"--model_dir={model_dir}", f"--init_checkpoint={hf_safetensors_dir}", "--max_steps=16",
               "--batch_size=4", "--checkpoint_every=2", "--freeze_layers=1", "--turns=2", "--negatives=2",
               "--log_every=1", "--max_length=12"]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and first.poll() is None and _recorded_step(model_dir) < 4:
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    # A later save may have completed before the kill landed: the restart takes the last recorded one.
    recorded = _recorded_step(model_dir)
    assert 4 <= recorded < 16
    second = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"resumed from {model_dir / f'ckpt-{recorded}'} at step {recorded}" in second.stderr
    assert "trained to step 16 of 16" in second.stdout
    # The restart logged every step after the checkpoint exactly once.
    logged = [int(step) for step in re.findall(r"(?:^|\r)step (\d+): loss ", second.stderr, re.M)]
    assert logged == list(range(recorded + 1, 17))
