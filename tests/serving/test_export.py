"""`tfdialemb.export`: a TF Serving SavedModel that a process with only TensorFlow and
tensorflow-text loads, giving the library's own embeddings."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from warmup_records import read_warmup_requests

from tfdialemb.encoders import load_pretrained
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.serving import layout, sentence

SENTENCES = ["I need a taxi", "", "Book me a TABLE for two, please!", "中文 你好 [EOT]",
             "the hotel is not helpful and " * 12]
MAX_LENGTH = 64  # the tiny encoder's positions
HIDDEN = 32
TF_TEXT_OPS = ["FastWordpieceTokenizeWithOffsets", "NormalizeUTF8", "RegexSplitWithOffsets",
               "TFText>RoundRobinTrim"]

# Runs in a fresh interpreter, as a serving client would: TensorFlow and tensorflow-text only.
LOAD_AND_SERVE = r"""
import json, os, sys
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import op_def_registry

def graph_ops(path):
    model = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        model.ParseFromString(f.read())
    graph = model.meta_graphs[0].graph_def
    functions = {f.signature.name for f in graph.library.function}
    ops = {n.op for n in graph.node} | {n.op for f in graph.library.function for n in f.node_def}
    return ops - functions

paths, sentences = sys.argv[1:-1], json.loads(sys.argv[-1])
# Asked before tensorflow_text registers its ops: what a server needs besides core TensorFlow.
result = {"custom_ops": sorted({op for path in paths for op in graph_ops(path)
                                if op_def_registry.get(op) is None})}
import tensorflow_text
for path in paths:
    serve = tf.saved_model.load(path).signatures["serving_default"]
    result[path] = serve(sentences=tf.constant(sentences))["embeddings"].numpy().tolist()
print(json.dumps(result))
"""


def _start(*args):
    """A Python subprocess, started now so that it runs beside the test's own work."""
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _finish(process):
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _export_command(*flags):
    return _start("-m", "tfdialemb.export", *flags)


@pytest.fixture(scope="module")
def exported(tmp_path_factory, hf_safetensors_dir):
    """Version 2 (cls pooling, unit vectors) written by the command while the library writes
    version 1 (mean) and computes its own embeddings of SENTENCES under both settings."""
    root = tmp_path_factory.mktemp("export")
    export_dir = root / "models"
    (export_dir / "notes").mkdir(parents=True)  # not a number: not a version
    warmup = root / "warmup.txt"
    warmup.write_text("I need a taxi\n\nis the cafe open ?\n", encoding="utf-8")
    command = _export_command(f"--init_checkpoint={hf_safetensors_dir}",
                              f"--export_dir={export_dir}", "--version=2", "--pooling=cls", "--normalize",
                              f"--max_length={MAX_LENGTH}", f"--warmup_sentences={warmup}")
    pretrained = load_pretrained(hf_safetensors_dir)
    embedders = {pooling: SentenceEmbedder.from_pretrained(pretrained, pooling=pooling, max_length=MAX_LENGTH,
                                                           normalize=pooling == "cls")
                 for pooling in ("mean", "cls")}
    mean_dir = sentence.export_sentence_model(embedders["mean"], str(export_dir), SENTENCES,
                                              version=1)
    expected = {pooling: embedder.embed(SENTENCES) for pooling, embedder in embedders.items()}
    command = _finish(command)
    assert command.returncode == 0, command.stderr[-3000:]
    return {"export_dir": export_dir, "embedders": embedders, "expected": expected,
            "command": command, "mean": mean_dir, "cls": str(export_dir / "2")}


@pytest.fixture(scope="module")
def inspected(exported):
    """What a fresh interpreter serves from both versions, and what saved_model_cli shows of
    version 1: two processes run side by side, as each pays for importing TensorFlow."""
    fresh = _start("-c", LOAD_AND_SERVE, exported["mean"], exported["cls"], json.dumps(SENTENCES))
    shown = _start("-m", "tensorflow.python.tools.saved_model_cli", "show", "--all",
                   "--dir", exported["mean"])
    return {"fresh": _finish(fresh), "saved_model_cli": _finish(shown)}


def test_fresh_process_serves_the_library_embeddings(exported, inspected):
    result = inspected["fresh"]
    assert result.returncode == 0, result.stderr[-3000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])
    for pooling in ("mean", "cls"):
        expected = exported["expected"][pooling]
        assert expected.shape == (len(SENTENCES), HIDDEN)
        np.testing.assert_allclose(served[exported[pooling]], expected, atol=1e-5)
    assert served["custom_ops"] == TF_TEXT_OPS


def test_normalized_embeddings_are_the_plain_ones_over_their_norms(exported):
    embedder = exported["embedders"]["cls"]
    plain = SentenceEmbedder(embedder.encoder, embedder.tokenizer, pooling="cls", max_length=MAX_LENGTH)
    vectors = plain.embed(SENTENCES)
    np.testing.assert_allclose(exported["expected"]["cls"], vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                               atol=1e-6)
    assert "kind: sentence (unit-length embeddings)" in exported["command"].stdout


def test_command_reports_version_and_signature(exported):
    assert exported["mean"] == str(exported["export_dir"] / "1")
    out = exported["command"].stdout
    assert f"wrote TF Serving model version 2 to {exported['cls']}" in out
    assert f"serving_default: sentences string [None] -> embeddings float32 [None, {HIDDEN}]" in out
    assert sorted(os.listdir(exported["export_dir"])) == ["1", "2", "notes"]


def test_saved_model_cli_shows_the_serving_signature(inspected):
    result = inspected["saved_model_cli"]
    assert result.returncode == 0, result.stderr[-3000:]
    signature = result.stdout.split("signature_def['serving_default']:")[1]
    assert re.search(r"inputs\['sentences'\] tensor_info:\s+dtype: DT_STRING\s+shape: \(-1\)",
                     signature)
    assert re.search(r"outputs\['embeddings'\] tensor_info:\s+dtype: DT_FLOAT\s+"
                     rf"shape: \(-1, {HIDDEN}\)", signature)
    assert "Method name is: tensorflow/serving/predict" in signature


def _warmup_requests(version_dir):
    requests = []
    for signature, inputs in read_warmup_requests(version_dir):
        assert signature == "serving_default" and list(inputs) == ["sentences"]
        requests.append([s.decode("utf-8") for s in inputs["sentences"]])
    return requests


def test_warmup_requests_hold_each_sentence_then_all(exported):
    assert _warmup_requests(exported["mean"]) == [[s] for s in SENTENCES] + [SENTENCES]
    cls_sentences = ["I need a taxi", "is the cafe open ?"]  # the file's non-empty lines
    assert _warmup_requests(exported["cls"]) == [[s] for s in cls_sentences] + [cls_sentences]


def test_versions_count_up_and_existing_ones_are_kept(exported, tmp_path):
    export_dir = str(exported["export_dir"])
    assert layout.next_version(export_dir) == 3
    assert layout.next_version(str(tmp_path / "none")) == 1
    saved = os.path.join(exported["mean"], "saved_model.pb")
    before = os.stat(saved).st_mtime_ns
    with pytest.raises(FileExistsError, match="version 1 already exists"):
        sentence.export_sentence_model(exported["embedders"]["mean"], export_dir, SENTENCES,
                                       version=1)
    assert os.stat(saved).st_mtime_ns == before


def test_interrupted_export_leaves_no_version(exported, tmp_path, monkeypatch):
    written = []

    def disk_full(path):
        written.extend(os.listdir(os.path.dirname(os.path.dirname(path))))
        raise OSError("No space left on device")

    monkeypatch.setattr(tf.io, "TFRecordWriter", disk_full)
    with pytest.raises(OSError, match="No space left"):
        sentence.export_sentence_model(exported["embedders"]["mean"], str(tmp_path), ["hello"])
    assert "saved_model.pb" in written  # the SavedModel was complete, the warm-up file was not
    assert os.listdir(tmp_path) == []


def test_unservable_exports_are_refused_before_writing(exported, tmp_path):
    clamped = SentenceEmbedder(exported["embedders"]["mean"].encoder, exported["embedders"]["mean"].tokenizer,
                               max_length=65)
    assert clamped.max_length == 64  # the encoder's positions: long sentences are truncated, never fail
    with pytest.raises(ValueError, match="TF Serving loads at most 1000"):
        sentence.warmup_records(["hello"] * 1000)
    assert os.listdir(tmp_path) == []


def test_missing_checkpoint_exits_2(tmp_path):
    result = _finish(_export_command(f"--init_checkpoint={tmp_path}/none",
                                     f"--export_dir={tmp_path}/out"))
    assert result.returncode == 2
    assert "none: checkpoint directory does not exist" in result.stderr
    assert not (tmp_path / "out").exists()
