"""Inference computes in float32 unless asked otherwise, and says which precision it used:
`evaluate`'s report, `encode`'s output line, an exported model's graph, and validation during a
bfloat16 training run (a float32 copy of the model holding the trained weights)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tiny_corpus

from tfdialemb.core import precision
from tfdialemb.encoders import load_pretrained
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.methods.spec import get_method
from tfdialemb.serving.exported_embedder import ExportedSentenceEmbedder
from tfdialemb.serving.sentence import export_sentence_model
from tfdialemb.training.validation_copy import ValidationCopy

SENTENCES = ["hello world", "good morning , how are you ?", "book a taxi please", "fine thanks"]


def _start(module, *args):
    return subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _finish(process):
    stdout, stderr = process.communicate(timeout=300)
    return process.returncode, stdout, stderr


def test_evaluate_reports_its_precision_float32_by_default(tmp_path, hf_safetensors_dir):
    """Four commands at once: evaluate by default and in bfloat16, and the precision flag refused
    where no encoder runs in it (a GloVe baseline, an exported model)."""
    select = tmp_path / "select.txt"
    select.write_text("".join(line + "\n" for line in tiny_corpus.SR_SELECT_LINES), encoding="utf-8")
    (tmp_path / "glove.txt").write_text("hello 1 0\nworld 0 1\n", encoding="utf-8")
    evaluate = ["tfdialemb.evaluate", "--task=sr", f"--eval_file={select}"]
    runs = {name: _start(*evaluate, f"--output={tmp_path / name}.json", f"--init_checkpoint={hf_safetensors_dir}",
                         *flags)
            for name, flags in (("default", []), ("bfloat16", ["--mixed_precision=mixed_bfloat16"]))}
    runs["glove"] = _start(*evaluate, f"--output={tmp_path / 'glove.json'}", "--embedding=glove",
                           f"--glove_file={tmp_path / 'glove.txt'}", "--mixed_precision=mixed_bfloat16")
    runs["saved_model"] = _start("tfdialemb.encode", f"--saved_model={tmp_path}", f"--input={select}",
                                 f"--output={tmp_path / 'out.npy'}", "--mixed_precision=float32")
    results = {name: _finish(process) for name, process in runs.items()}
    reports = {}
    for name in ("default", "bfloat16"):
        assert results[name][0] == 0, results[name][2][-3000:]
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    assert reports["default"]["mixed_precision"] == "float32"
    assert reports["bfloat16"]["mixed_precision"] == "mixed_bfloat16"
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir))  # float32 in this process
    expected = evaluate_semantic_retrieval(str(select), embedder.embed)
    assert reports["default"]["metrics"] == pytest.approx(expected, abs=1e-6)
    code, _, stderr = results["glove"]
    assert code == 2 and "--mixed_precision does not apply to --embedding=glove" in stderr
    code, _, stderr = results["saved_model"]
    assert code != 0 and "fixed in an exported --saved_model" in stderr


def test_an_exported_model_names_the_precision_its_graph_computes_in(tmp_path, hf_safetensors_dir,
                                                                     restore_precision):
    exported = {}
    for policy in ("float32", "mixed_bfloat16"):
        precision.apply(policy)
        embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir))
        exported[policy] = ExportedSentenceEmbedder(
            export_sentence_model(embedder, str(tmp_path / policy), SENTENCES[:1]))
    precision.apply("float32")
    assert {policy: model.policy for policy, model in exported.items()} == {
        "float32": "float32", "mixed_bfloat16": "mixed_bfloat16"}


def test_validation_copy_embeds_the_trained_weights_in_float32(tmp_path, hf_safetensors_dir, restore_precision):
    """Training in bfloat16, validation sees a float32 model holding the current trained weights:
    the embeddings of a float32 encoder given those weights another way (get/set_weights)."""
    spec = get_method("ccl")
    params = spec.resolve({"curved_window": 3})

    def build():
        return spec.make_model(load_pretrained(hf_safetensors_dir).encoder, params)

    precision.apply("mixed_bfloat16")
    trained = build()
    copy_dir = tmp_path / "model"
    copy_dir.mkdir()
    validation = ValidationCopy(build, "float32", str(copy_dir), lambda method, step: {"method": method})
    tokenizer = load_pretrained(hf_safetensors_dir).tokenizer
    inputs = tokenizer(SENTENCES)
    seen = []
    for step in (1, 2):
        for variable in trained.encoder.trainable_variables:  # training moves every weight
            variable.assign(variable * 0.9 + 0.01)
        copy = validation(trained, step)["method"]
        seen.append(copy.encoder.embed(inputs, training=False).numpy())
    assert trained.encoder.compute_dtype == "bfloat16" and copy.encoder.compute_dtype == "float32"
    precision.apply("float32")
    reference = load_pretrained(hf_safetensors_dir).encoder
    reference.set_weights(trained.encoder.get_weights())
    expected = reference.embed(inputs, training=False).numpy()
    np.testing.assert_allclose(seen[1], expected, atol=1e-6, rtol=0)
    assert not np.allclose(seen[0], seen[1], atol=1e-4)  # the second validation saw the newer weights
    bfloat16 = trained.encoder.embed(inputs, training=False).numpy()
    assert not np.allclose(bfloat16, expected, atol=1e-5)
    assert not os.listdir(copy_dir)  # the weights handed over are deleted
