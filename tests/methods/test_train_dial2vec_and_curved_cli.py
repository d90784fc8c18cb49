"""`python -m tfdialemb.train` for dial2vec, CCL (with the NLI objective) and C3L from the CCL
model, end to end on a tiny corpus as users run them."""
import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
from tiny_corpus import corpus

from tfdialemb.dialogue import Dialogue, write_dialogues
from tfdialemb.encoders import load_pretrained
from tfdialemb.eval.sequence_modeling import evaluate_sequence_modeling
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.model_dir import load_method


def _train(*flags):
    result = subprocess.run([sys.executable, "-m", "tfdialemb.train", *flags, "--num_shards=1",
                             "--log_every=1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _manifest(model_dir):
    with open(model_dir / "data" / "manifest.json", encoding="utf-8") as f:
        return json.load(f)


def test_dial2vec_trains_with_its_defaults_and_validates_on_the_dialogue_task(tmp_path,
                                                                             hf_safetensors_dir):
    dialogues = [Dialogue(d.id, d.turns, {"domain": "ab"[i % 2]})
                 for i, d in enumerate(corpus(n=16, seed=4))]
    write_dialogues(dialogues, str(tmp_path / "train.jsonl"))
    model_dir = tmp_path / "dial2vec"
    result = _train("--method=dial2vec", f"--train_file={tmp_path / 'train.jsonl'}",
                    f"--model_dir={model_dir}", f"--init_checkpoint={hf_safetensors_dir}",
                    "--max_steps=2", "--batch_size=2", "--negatives=2", "--freeze_layers=1",
                    "--max_length=32", "--dial2vec_kept_role=released", "--dial2vec_negative_pool=mixed",
                    "--separator=eou", "--num_roles=3",
                    "--validate_task=dialogue", f"--validate_file={tmp_path / 'train.jsonl'}",
                    "--validate_every=2")
    # The paper's values for every flag not given: lr 1e-5 and temperature 0.2 (not MGE's).
    assert "dial2vec: batch_size 2, learning_rate 1e-05, freeze_layers 1, max_length 32" in result.stdout
    assert "temperature 0.2" in result.stdout
    assert "trained to step 2 of 2" in result.stdout
    manifest = _manifest(model_dir)
    assert manifest["builder"]["method"] == "dial2vec"
    assert manifest["builder"]["params"]["negatives"] == 2
    assert manifest["builder"]["params"]["negative_role"] == "fixed"
    assert manifest["builder"]["params"]["negative_pool"] == "mixed"
    method = json.loads((model_dir / "method.json").read_text(encoding="utf-8"))
    assert method["params"]["dial2vec_negative_pool"] == "mixed"
    assert manifest["builder"]["params"]["max_roles"] == 3
    assert manifest["dialogue_separator"] == "[EOU]"
    history = [json.loads(line) for line in
               (model_dir / "validation.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["step"] for row in history] == [2]
    assert {"purity", "spearman", "map", "adjusted_alignment", "uniformity"} <= set(history[0])
    best = json.loads((model_dir / "best" / "best.json").read_text(encoding="utf-8"))
    assert best == {"step": 2, "metric": "purity", "value": history[0]["purity"], "better": "max"}


@pytest.mark.slow
def test_ccl_with_nli_then_c3l_from_the_ccl_model(tmp_path, hf_safetensors_dir):
    write_dialogues(corpus(n=12, seed=5), str(tmp_path / "train.jsonl"))
    nli = tmp_path / "AllNLI.tsv.gz"
    with gzip.open(nli, "wt", encoding="utf-8") as f:
        f.write("split\tdataset\tfilename\tsentence1\tsentence2\tlabel\n"
                "train\tSNLI\tx\thello world\thello there\tentailment\n"
                "train\tSNLI\tx\tgood morning\tbook taxi\tcontradiction\n")
    ccl, c3l = tmp_path / "ccl", tmp_path / "c3l"
    result = _train("--method=ccl", f"--train_file={tmp_path / 'train.jsonl'}",
                    f"--model_dir={ccl}", f"--init_checkpoint={hf_safetensors_dir}",
                    "--max_steps=2", "--batch_size=4", "--max_length=24", f"--nli_file={nli}")
    assert ("ccl: batch_size 4, learning_rate 2e-05, freeze_layers 0, max_length 24, "
            "weight_decay 0.01, warmup_fraction 0.1, lr_schedule linear") in result.stdout
    assert "ccl_windows paper" in result.stdout
    assert "nli_loss" in result.stdout
    assert _manifest(ccl)["builder"]["method"] == "ccl"
    result = _train("--method=c3l", f"--train_file={tmp_path / 'train.jsonl'}", f"--model_dir={c3l}",
                    f"--init_checkpoint={ccl}", "--max_steps=2", "--batch_size=4", "--max_length=24",
                    "--c3l_labels=released", "--validate_task=sequence_modeling",
                    f"--validate_file={tmp_path / 'train.jsonl'}", "--validate_every=1",
                    "--mixed_precision=float32")  # validated as it is re-evaluated below
    assert "not a CCL model" not in result.stderr  # it starts from one, as the paper trains it
    assert _manifest(c3l)["builder"]["params"]["labels"] == "released"
    # Model selection on the validation set's average rank (lower is better), kept in c3l/best.
    history = [json.loads(line) for line in (c3l / "validation.jsonl").read_text(encoding="utf-8").splitlines()]
    ranks = [row["avg_rank"] for row in history]
    best = json.loads((c3l / "best" / "best.json").read_text(encoding="utf-8"))
    assert [row["step"] for row in history] == [1, 2]
    assert (best["step"], best["value"]) == (1 + ranks.index(min(ranks)), min(ranks))
    kept = load_method(str(c3l / "best"))
    settings = kept.config["inference"]["curved"]
    embedder = SentenceEmbedder.from_settings(kept.model.encoder, kept.tokenizer, settings)
    again = evaluate_sequence_modeling(str(tmp_path / "train.jsonl"), embedder.embed, mode="c3l",
                                       speaker_tokens=settings["speaker_tokens"],
                                       merge_turns=settings["merge_consecutive_turns"])
    assert again["avg_rank"] == pytest.approx(best["value"], abs=1e-9)
    trained = load_pretrained(str(c3l)).encoder.weights
    started = load_pretrained(str(ccl)).encoder.weights
    assert any(not np.array_equal(a.numpy(), b.numpy()) for a, b in zip(trained, started))


def test_a_restart_forgets_a_best_kept_after_its_checkpoint(tmp_path):
    """The steps after the restored checkpoint are trained again, so their best is not kept."""
    from types import SimpleNamespace

    from tfdialemb.training.loop import TrainingLoop, read_best

    (tmp_path / "best").mkdir()
    (tmp_path / "best" / "best.json").write_text(json.dumps({"step": 6, "metric": "map", "value": 0.5}))
    loop = SimpleNamespace(config=SimpleNamespace(model_dir=str(tmp_path)))
    TrainingLoop._forget_best_after(loop, 6)
    assert read_best(str(tmp_path))["step"] == 6
    TrainingLoop._forget_best_after(loop, 4)
    assert read_best(str(tmp_path)) is None and not (tmp_path / "best").exists()
