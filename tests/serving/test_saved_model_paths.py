"""`encode` and `evaluate` straight from an exported sentence SavedModel (`--saved_model`): the
same embeddings and metrics as the checkpoint it was exported from, with the pooling it was
exported with."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from tiny_corpus import SR_SELECT_LINES

from tfdialemb.encoders import load_pretrained
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.serving.exported_embedder import ExportedSentenceEmbedder
from tfdialemb.serving.sentence import export_sentence_model

SENTENCES = ["hello world", "good morning , how are you ?", "book a taxi please", "中文 你好"]


def _start(module, *args):
    return subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _finish(process):
    stdout, stderr = process.communicate(timeout=300)
    return process.returncode, stdout, stderr


@pytest.fixture(scope="module")
def cls_export(tmp_path_factory, hf_safetensors_dir):
    """Version 1 of an export directory: the tiny checkpoint with [CLS] pooling (not the
    commands' default, so a command that ignored the SavedModel's own pooling would differ)."""
    root = tmp_path_factory.mktemp("saved")
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir), pooling="cls", max_length=64)
    version = export_sentence_model(embedder, str(root / "export"), SENTENCES, version=1)
    return {"root": root, "export_dir": str(root / "export"), "version": version, "embedder": embedder}


def test_encode_and_evaluate_from_the_saved_model_match_the_checkpoint(cls_export):
    root = cls_export["root"]
    (root / "in.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    (root / "select.txt").write_text("".join(line + "\n" for line in SR_SELECT_LINES), encoding="utf-8")
    encode = _start("tfdialemb.encode", f"--saved_model={cls_export['export_dir']}", f"--input={root}/in.txt",
                    f"--output={root}/emb.npy", "--batch_size=3")
    evaluate = _start("tfdialemb.evaluate", "--task=sr", f"--eval_file={root}/select.txt",
                      f"--saved_model={cls_export['export_dir']}", f"--output={root}/report.json")
    code, _, stderr = _finish(encode)
    assert code == 0, stderr[-3000:]
    np.testing.assert_allclose(np.load(root / "emb.npy"), cls_export["embedder"].embed(SENTENCES), atol=1e-5)
    code, _, stderr = _finish(evaluate)
    assert code == 0, stderr[-3000:]
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    assert report["checkpoint"] == cls_export["export_dir"]
    expected = evaluate_semantic_retrieval(str(root / "select.txt"), cls_export["embedder"].embed)
    assert report["metrics"] == pytest.approx(expected, abs=1e-6)


def test_settings_fixed_at_export_and_other_tasks_are_refused(cls_export, tmp_path):
    (tmp_path / "in.txt").write_text("hello\n", encoding="utf-8")
    with_pooling = _start("tfdialemb.encode", f"--saved_model={cls_export['export_dir']}",
                          f"--input={tmp_path}/in.txt", f"--output={tmp_path}/o.npy", "--pooling=mean")
    dialogue_task = _start("tfdialemb.evaluate", "--task=dialogue", f"--eval_file={tmp_path}/in.txt",
                           f"--saved_model={cls_export['export_dir']}", f"--output={tmp_path}/r.json",
                           "--label_key=domain")
    code, _, stderr = _finish(with_pooling)
    assert code != 0 and "fixed in an exported --saved_model" in stderr
    code, _, stderr = _finish(dialogue_task)
    assert code == 2 and "--saved_model serves sentence embeddings" in stderr
    with pytest.raises(FileNotFoundError, match="neither a SavedModel"):
        ExportedSentenceEmbedder(str(tmp_path))
    assert ExportedSentenceEmbedder(cls_export["version"]).path == cls_export["version"]
