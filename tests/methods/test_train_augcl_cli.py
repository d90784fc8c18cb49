"""`--method=augcl` end to end as users run it: train on an augmented file (validating on the
dialogue task), evaluate, export; the served embedding is the trained encoder's [CLS] state."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops before loading)
from tiny_corpus import corpus

from tfdialemb.dialogue import Dialogue, write_dialogues
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.model_dir import ModelSource
from tfdialemb.serving.dialogue import dialogue_inputs


def _run(module, *flags):
    result = subprocess.run([sys.executable, "-m", module, *flags], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _augmented(dialogues):
    """Each dialogue, then a view without its first turn (as a crop writes it) where it has 3+."""
    lines = []
    for d in dialogues:
        lines.append(Dialogue(d.id, d.turns, {**d.labels, "source_id": d.id, "augmentations": []}))
        if len(d.turns) >= 3:
            lines.append(Dialogue(f"{d.id}/crop", d.turns[1:], {**d.labels, "source_id": d.id,
                                                                 "augmentations": ["crop"]}))
    return lines


@pytest.mark.slow
def test_augcl_trains_evaluates_and_exports(tmp_path, hf_safetensors_dir):
    dialogues = [Dialogue(d.id, d.turns, {"domain": "ab"[i % 2]}) for i, d in enumerate(corpus(n=16, seed=6))]
    write_dialogues(_augmented(dialogues), str(tmp_path / "augmented.jsonl"))
    write_dialogues(dialogues, str(tmp_path / "eval.jsonl"))
    model_dir = tmp_path / "augcl"
    result = _run("tfdialemb.train", "--method=augcl", f"--train_file={tmp_path / 'augmented.jsonl'}",
                  f"--model_dir={model_dir}", f"--init_checkpoint={hf_safetensors_dir}", "--max_steps=3",
                  "--batch_size=4", "--max_length=48", "--freeze_layers=-1", "--learning_rate=1e-3",
                  "--num_shards=1", "--log_every=1", "--validate_task=dialogue",
                  f"--validate_file={tmp_path / 'eval.jsonl'}", "--validate_every=3")
    # The thesis' values for every flag not given.
    for shown in ("weight_decay 0.01", "lr_schedule constant", "pooling cls", "augcl_loss released", "temperature 0.1",
                  "emb_dropout 0.1", "gather_negatives True", "on_the_fly True", "pair orig_aug",
                  "validate_mixed_precision float32"):
        assert shown in result.stdout.splitlines()[0], shown
    assert "trained to step 3 of 3" in result.stdout
    method = json.loads((model_dir / "method.json").read_text(encoding="utf-8"))
    assert method["inference"]["dialogue"] == {
        "max_length": 48, "merge_consecutive_turns": True, "separator": "sep", "speaker_prefix": True,
        "final_separator": True, "num_roles": 2, "dialogue_pooling": "cls"}
    history = [json.loads(line) for line in (model_dir / "validation.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["step"] for row in history] == [3]

    _run("tfdialemb.evaluate", "--task=dialogue", f"--eval_file={tmp_path / 'eval.jsonl'}", "--label_key=domain",
         f"--model_dir={model_dir}", "--runs=3", f"--output={tmp_path / 'report.json'}")
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["method"] == "augcl"
    assert {k: report["embedding"][k] for k in ("speaker_prefix", "final_separator", "dialogue_pooling")} == {
        "speaker_prefix": True, "final_separator": True, "dialogue_pooling": "cls"}
    assert history[0]["purity"] == pytest.approx(report["metrics"]["views"]["cls"]["purity"], abs=1e-6)

    exported = _run("tfdialemb.export", f"--model_dir={model_dir}", f"--export_dir={tmp_path / 'export'}",
                    f"--warmup_dialogues={tmp_path / 'eval.jsonl'}")
    assert "kind: dialogue" in exported.stdout
    source = ModelSource(str(model_dir))
    embedder = DialogueEmbedder.from_settings(source.pretrained.encoder, source.pretrained.tokenizer,
                                              source.settings("dialogue", {}))
    serve = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    inputs = dialogue_inputs(dialogues)
    served = serve(turns=tf.constant(inputs["turns"]), turn_counts=tf.constant(inputs["turn_counts"]),
                   speakers=tf.constant(inputs["speakers"]))["embeddings"].numpy()
    np.testing.assert_allclose(served, embedder.embed(dialogues)["cls"], atol=1e-5)


@pytest.mark.slow
def test_augcl_validates_with_the_thesis_domain_probes(tmp_path, hf_safetensors_dir):
    """`--validate_task=probes`: the thesis' domain probes on a dev file, a seeded quarter held out,
    select the best weights by accuracy; at the last step they equal `evaluate --task=probes` of the
    trained model on the same file and seed."""
    dialogues = [Dialogue(d.id, d.turns, {"domain": "ab"[i % 2]}) for i, d in enumerate(corpus(n=24, seed=6))]
    write_dialogues(_augmented(dialogues), str(tmp_path / "augmented.jsonl"))
    write_dialogues(dialogues, str(tmp_path / "dev.jsonl"))
    model_dir = tmp_path / "augcl"
    _run("tfdialemb.train", "--method=augcl", f"--train_file={tmp_path / 'augmented.jsonl'}",
         f"--model_dir={model_dir}", f"--init_checkpoint={hf_safetensors_dir}", "--max_steps=2", "--batch_size=4",
         "--max_length=48", "--freeze_layers=-1", "--learning_rate=1e-3", "--num_shards=1", "--log_every=1",
         "--validate_task=probes", f"--validate_file={tmp_path / 'dev.jsonl'}", "--validate_every=2",
         "--mixed_precision=float32")  # evaluation's precision, so nDCG's near-ties rank alike
    [row] = [json.loads(line) for line in (model_dir / "validation.jsonl").read_text(encoding="utf-8").splitlines()]
    best = json.loads((model_dir / "best" / "best.json").read_text(encoding="utf-8"))
    assert (best["step"], best["metric"], best["value"]) == (2, "accuracy", row["accuracy"])
    _run("tfdialemb.evaluate", "--task=probes", f"--eval_file={tmp_path / 'dev.jsonl'}", "--label_key=domain",
         f"--model_dir={model_dir}", "--probe_seed=0", f"--output={tmp_path / 'probes.json'}")
    report = json.loads((tmp_path / "probes.json").read_text(encoding="utf-8"))
    for metric in ("accuracy", "purity", "ndcg@100"):
        assert row[metric] == pytest.approx(report["metrics"][metric], abs=1e-6), metric
    assert (row["fit_dialogues"], row["test_dialogues"]) == (18, 6)
