"""The augmentation thesis' auxiliary models through the commands users run: `train` (with the
context-response validation), `evaluate --task=context_response` and `export`, whose SavedModel
embeds as `ContextResponseEncoder` does; and `train --method=utterance_sorting`."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the exported graph's tokenizer ops)

from tfdialemb.dialogue import write_dialogues
from tfdialemb.eval.context_response import evaluate_context_response
from tfdialemb.inference.context_response import ContextResponseEncoder
from tfdialemb.methods.spec import get_method
from tfdialemb.training import cli
from tiny_corpus import corpus
from training_flags import training_flags


def _run(*args):
    result = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.slow
def test_train_evaluate_and_export_the_auxiliary_models(tmp_path, hf_safetensors_dir):
    dialogues = str(tmp_path / "dialogues.jsonl")
    write_dialogues(corpus(n=20, seed=4), dialogues)
    model_dir = str(tmp_path / "context_response")
    common = [f"--train_file={dialogues}", f"--init_checkpoint={hf_safetensors_dir}", "--max_steps=2",
              "--batch_size=8", "--freeze_layers=1", "--max_length=16", "--num_shards=1", "--log_every=1"]
    trained = _run("tfdialemb.train", "--method=context_response", f"--model_dir={model_dir}", *common,
                   "--validate_task=context_response", f"--validate_file={dialogues}", "--validate_every=2")
    assert "accuracy@5" in trained.stdout and "validation/accuracy@5" in trained.stderr

    report_path = str(tmp_path / "report.json")
    _run("tfdialemb.evaluate", "--task=context_response", f"--model_dir={model_dir}", f"--eval_file={dialogues}",
         f"--output={report_path}", "--pairs_per_batch=8")
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    encoder = ContextResponseEncoder.from_model_dir(model_dir)
    expected = evaluate_context_response(dialogues, encoder, batch_size=8)
    assert report["metrics"] == pytest.approx(expected) and report["metrics"]["pairs"] == 20
    assert report["embedding"]["context"] == 3

    export_dir = str(tmp_path / "export")
    exported = _run("tfdialemb.export", f"--model_dir={model_dir}", f"--export_dir={export_dir}")
    assert "kind: context_response" in exported.stdout
    served = tf.saved_model.load(f"{export_dir}/1")
    contexts = [["hello", "how are you"], ["good morning", "book taxi", "need hotel", "fine thanks"][-3:]]
    turns = tf.constant([t for c in contexts for t in c])
    counts = tf.constant([len(c) for c in contexts], tf.int32)
    np.testing.assert_allclose(served.signatures["serving_default"](turns=turns, turn_counts=counts)["embeddings"],
                               encoder.embed_contexts(contexts), atol=1e-5)
    responses = ["fine thanks", "book a taxi please"]
    np.testing.assert_allclose(served.signatures["responses"](responses=tf.constant(responses))["embeddings"],
                               encoder.embed_responses(responses), atol=1e-5)

    sorting = _run("tfdialemb.train", "--method=utterance_sorting", f"--model_dir={tmp_path / 'sorting'}", *common)
    assert "sorting_quality" in sorting.stdout and "trained to step 2 of 2" in sorting.stdout


@pytest.mark.parametrize("task, dialogues, batch_size, message", [
    ("context_response", 20, 4, "20 context-response pair(s) (one per dialogue of at least 2 utterances) in "
                                "batches of 4 leave no batch of more than 5 pairs"),
    ("context_response", 3, 8, "3 context-response pair(s)"),
    ("dsts", 0, 8, "every gold score is 3; a correlation needs pairs with different gold scores"),
])
def test_a_validation_set_that_cannot_be_scored_is_refused_before_training(
        tmp_path, hf_safetensors_dir, monkeypatch, capsys, task, dialogues, batch_size, message):
    """Validating accuracy@5 at a batch of at most 5 pairs (or on a set that gives no larger batch),
    or Spearman on one gold score, gives NaN: best.json would keep a NaN for ever."""
    write_dialogues(corpus(n=20, seed=4), str(tmp_path / "train.jsonl"))
    validate_file = tmp_path / ("sts.txt" if task == "dsts" else "validate.jsonl")
    if task == "dsts":
        validate_file.write_text("3\thello there\thi\n3\tgood morning\tmorning\n", encoding="utf-8")
    else:
        write_dialogues(corpus(n=dialogues, seed=5), str(validate_file))
    monkeypatch.setattr(cli, "FLAGS", training_flags(
        train_file=str(tmp_path / "train.jsonl"), model_dir=str(tmp_path / "model"), init_checkpoint=hf_safetensors_dir,
        batch_size=batch_size, max_length=16, validate_task=task, validate_file=str(validate_file),
        validate_every=1))
    spec = get_method("context_response")
    assert cli.run(spec, spec.resolve({})) == 2
    assert message in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "model")  # refused before training: the directory it made is gone
