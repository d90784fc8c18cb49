"""`python -m tfdialemb.train --method=siamese_m` end to end on a tiny corpus, as users run it."""
import json
import os
import subprocess
import sys

import numpy as np

from tfdialemb.dialogue import write_dialogues
from tfdialemb.encoders import load_pretrained
from tiny_corpus import corpus


def test_siamese_m_trains_and_its_model_dir_loads_as_an_encoder(tmp_path, hf_safetensors_dir):
    write_dialogues(corpus(n=16, seed=3), str(tmp_path / "train.jsonl"))
    model_dir = tmp_path / "model"
    (tmp_path / "sts.txt").write_text("5\thello world\thello world\n1\tbook a taxi\tgood morning\n"
                                      "3\tfine thanks\tthanks\n", encoding="utf-8")
    command = [sys.executable, "-m", "tfdialemb.train", "--method=siamese_m",
               f"--train_file={tmp_path / 'train.jsonl'}", f"--model_dir={model_dir}",
               f"--init_checkpoint={hf_safetensors_dir}", "--max_steps=2", "--batch_size=4",
               "--freeze_layers=1", "--turns=2", "--negatives=2", "--temperature=0.5",
               "--max_length=16", "--num_shards=1", "--log_every=1", "--validate_task=dsts",
               f"--validate_file={tmp_path / 'sts.txt'}", "--validate_every=2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "trained to step 2 of 2" in result.stdout
    assert "accuracy" in result.stdout
    assert "validation/spearman" in result.stderr  # the validation hook ran at step 2
    with open(model_dir / "data" / "manifest.json", encoding="utf-8") as f:
        built = json.load(f)["builder"]
    assert built["method"] == "siamese"
    assert built["params"]["context_turns"] == 2 and built["params"]["negatives"] == 2
    assert "ckpt-2.index" in os.listdir(model_dir)
    # The directory is a checkpoint like any other: the trained encoder, evaluated mean-pooled.
    trained = load_pretrained(str(model_dir)).encoder.weights
    initial = load_pretrained(hf_safetensors_dir).encoder.weights
    assert len(trained) == len(initial)
    assert any(not np.array_equal(a.numpy(), b.numpy()) for a, b in zip(trained, initial))
