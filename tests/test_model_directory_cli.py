"""`evaluate`, `export`, `encode` and the embedders' `load(path)` on trained dial2vec and C3L model
directories need no method flags: the directory's method.json sets them; a flag contradicting it
exits 2 naming both values, and --max_length overrides it with a warning."""
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tiny_corpus import corpus
from training_flags import train_one_step

from tfdialemb.dialogue import Dialogue, read_dialogues, write_dialogues
from tfdialemb.encoders import load_pretrained
from tfdialemb.core.files import directory_lock
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.pair_scorer import PairScorer


@pytest.fixture(scope="module")
def trained(tmp_path_factory, hf_safetensors_dir):
    root = tmp_path_factory.mktemp("dirs")
    dialogues = [Dialogue(d.id, d.turns, {"domain": "ab"[i % 2]}) for i, d in enumerate(corpus(n=16, seed=4))]
    write_dialogues(dialogues, str(root / "train.jsonl"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        dial2vec = train_one_step(root, hf_safetensors_dir, monkeypatch, "dial2vec", negatives=1, separator="eou",
                                  num_roles=3)
        c3l = train_one_step(root, hf_safetensors_dir, monkeypatch, "c3l", curved_window=3, speaker_tokens=False)
    return {"root": root, "dial2vec": dial2vec, "c3l": c3l}


def _start(module, *flags):
    return subprocess.Popen([sys.executable, "-m", module, *flags], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _results(*processes):
    outputs = [p.communicate(timeout=300) for p in processes]
    return [subprocess.CompletedProcess(p.args, p.returncode, *out) for p, out in zip(processes, outputs)]


def test_dial2vec_directory(trained):
    root, model = trained["root"], trained["dial2vec"]
    common = ("--task=dialogue", f"--eval_file={root / 'train.jsonl'}", "--label_key=domain", "--runs=1",
              f"--model_dir={model}")
    plain, contradicting, longer, exported, unoffered = _results(
        _start("tfdialemb.evaluate", *common, f"--output={root / 'd.json'}"),
        _start("tfdialemb.evaluate", *common, "--separator=sep", f"--output={root / 'x.json'}"),
        _start("tfdialemb.evaluate", *common, "--max_length=16", f"--output={root / 'l.json'}"),
        _start("tfdialemb.export", f"--model_dir={model}", f"--export_dir={root / 'export'}"),
        _start("tfdialemb.export", f"--model_dir={model}", f"--export_dir={root / 'sentence'}", "--kind=sentence"))
    assert plain.returncode == 0, plain.stderr[-3000:]
    report = json.loads((root / "d.json").read_text(encoding="utf-8"))
    assert report["method"] == "dial2vec"
    assert {k: report["embedding"][k] for k in ("separator", "num_roles", "max_length", "merge_consecutive_turns")} \
        == {"separator": "eou", "num_roles": 3, "max_length": 32, "merge_consecutive_turns": True}
    assert set(report["metrics"]["views"]) >= {"interlocutor", "p1", "p2", "p3"}
    assert contradicting.returncode == 2
    assert "--separator=sep contradicts" in contradicting.stderr and "separator=eou" in contradicting.stderr
    assert longer.returncode == 0, longer.stderr[-3000:]
    assert "--max_length=16 overrides max_length=32" in longer.stderr
    assert json.loads((root / "l.json").read_text(encoding="utf-8"))["embedding"]["max_length"] == 16
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert "kind: dialogue" in exported.stdout and "p3 float32" in exported.stdout
    assert f"weights: step 1 of {model}" in exported.stdout
    assert unoffered.returncode == 2 and not (root / "sentence").exists()
    assert unoffered.stderr.splitlines()[-1] == (f"error: {model}: a dial2vec model serves --kind=dialogue, "
                                        "not --kind=sentence")


def test_a_directory_a_training_run_holds_is_not_exported(trained):
    """Its checkpoints still change under the export; the refusal names the holder and the step."""
    root, model = trained["root"], trained["dial2vec"]
    with directory_lock(str(model), "training run"):
        held, = _results(_start("tfdialemb.export", f"--model_dir={model}", f"--export_dir={root / 'held'}"))
    assert held.returncode == 2 and not (root / "held").exists()
    assert held.stderr.splitlines()[-1] == (f"error: {model}: a training run holds it (pid {os.getpid()} on "
                                   f"{socket.gethostname()}) and is still writing checkpoints (the latest is step "
                                   "1); export it when the run ends")


def test_c3l_directory(trained):
    root, model = trained["root"], trained["c3l"]
    common = ("--task=sequence_modeling", f"--eval_file={root / 'train.jsonl'}", f"--model_dir={model}",
              "--history_lengths=2,3")
    plain, tokens, mode, exported, other_curve, former_name = _results(
        _start("tfdialemb.evaluate", *common, f"--output={root / 's.json'}"),
        _start("tfdialemb.evaluate", *common, "--speaker_tokens", f"--output={root / 't.json'}"),
        _start("tfdialemb.evaluate", *common, "--curved_mode=ccl", f"--output={root / 'm.json'}"),
        _start("tfdialemb.export", f"--model_dir={model}", f"--export_dir={root / 'curved'}"),
        _start("tfdialemb.export", f"--model_dir={model}", f"--export_dir={root / 'other'}", "--curved=ccl"),
        _start("tfdialemb.export", f"--model_dir={model}", f"--export_dir={root / 'former'}", "--kind=triple"))
    assert plain.returncode == 0, plain.stderr[-3000:]
    report = json.loads((root / "s.json").read_text(encoding="utf-8"))
    assert report["method"] == "c3l"
    assert report["embedding"]["mode"] == "c3l" and report["embedding"]["speaker_tokens"] is False
    assert tokens.returncode == 2 and "--speaker_tokens=true contradicts" in tokens.stderr
    assert "speaker_tokens=false" in tokens.stderr
    assert mode.returncode == 2 and "--curved_mode=ccl does not score a c3l model" in mode.stderr
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert "kind: curved" in exported.stdout and "score_maxsim" in exported.stdout
    assert "b1 float32" in exported.stdout  # no speaker tokens: one b1 / b2 variant
    assert other_curve.returncode == 2 and "--curved=ccl contradicts" in other_curve.stderr
    assert former_name.returncode == 0, former_name.stderr[-3000:]
    assert "kind: curved" in former_name.stdout and "--kind=triple is now --kind=curved" in former_name.stderr


def _recorded_sentence_embeddings(model, texts):
    """The reference: the encoder `load_pretrained` restores, fed "[CLS] pieces [SEP]" cut to the
    max length method.json records, its last layer mean-pooled and L2-normalised in numpy."""
    stated = json.loads((model / "method.json").read_text(encoding="utf-8"))["inference"]["sentence"]
    assert (stated["pooling"], stated["max_length"]) == ("mean", 32)
    pretrained = load_pretrained(str(model))
    tokenizer, rows = pretrained.tokenizer, []
    for pieces in tokenizer.tokenize(texts).to_list():
        ids = [tokenizer.cls_id] + pieces[:stated["max_length"] - 2] + [tokenizer.sep_id]
        states = pretrained.encoder({"input_word_ids": tf.constant([ids], tf.int32),
                                     "input_mask": tf.ones([1, len(ids)], tf.int32)})["sequence_output"]
        mean = np.asarray(states, np.float64)[0].mean(axis=0)
        rows.append(mean / np.linalg.norm(mean))
    return np.array(rows)


def test_encode_reads_the_model_directory_and_the_embedders_load_it_by_path(trained):
    """`encode --model_dir --normalize` from standard input to JSON Lines, `SentenceEmbedder.load(path)`
    and `from_pretrained(path)` all give the recorded embedding computed by hand from the restored
    encoder (`_recorded_sentence_embeddings`)."""
    root, model = trained["root"], trained["c3l"]
    texts = ["hello world", "book a taxi please", "good morning , how are you ?"]
    result = subprocess.run([sys.executable, "-m", "tfdialemb.encode", f"--model_dir={model}", "--normalize",
                             "--input=-", f"--output={root / 'e.jsonl'}", "--mixed_precision=float32"],
                            input="\n".join(texts) + "\n", capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"wrote 3 x 32 embeddings (unit length) to {root / 'e.jsonl'}" in result.stdout
    rows = [json.loads(line) for line in (root / "e.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["text"] for row in rows] == texts
    encoded = np.array([row["embedding"] for row in rows], np.float32)
    reference = _recorded_sentence_embeddings(model, texts)
    np.testing.assert_allclose(encoded, reference, atol=1e-5)

    plain = SentenceEmbedder.load(str(model))
    vectors = plain.embed(texts)
    np.testing.assert_allclose(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), reference, atol=1e-5)
    np.testing.assert_allclose(SentenceEmbedder.from_pretrained(model, normalize=True).embed(texts), reference,
                               atol=1e-5)
    with pytest.raises(ValueError, match="selection scores need a trained head"):
        PairScorer.load(str(model))


def test_the_dialogue_embedder_loads_its_recorded_settings_by_path(trained):
    model = trained["dial2vec"]
    embedder = DialogueEmbedder.load(str(model))
    assert (embedder.num_roles, embedder.max_length, embedder.merge_consecutive_turns) == (3, 32, True)
    assert embedder.separator == embedder.tokenizer.token_id("[EOU]")
    dialogues = list(read_dialogues(str(trained["root"] / "train.jsonl")))[:3]
    views = embedder.embed(dialogues)
    unit = DialogueEmbedder.from_pretrained(model, normalize=True).embed(dialogues)
    for name, vectors in views.items():
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.testing.assert_allclose(unit[name], np.where(norms > 0, vectors / np.maximum(norms, 1e-12), 0.0),
                                   atol=1e-5, err_msg=name)
    with pytest.raises(ValueError, match="--separator=sep contradicts"):
        DialogueEmbedder.load(str(model), separator="sep")
    # One signature for a path and a loaded Pretrained: the settings' names (the pooling served is
    # dialogue_pooling), the same refusal for another name.
    pretrained = load_pretrained(str(model))
    for source in (str(model), pretrained):
        with pytest.raises(TypeError, match="not pooling; the dialogue's pooling is dialogue_pooling"):
            DialogueEmbedder.from_pretrained(source, pooling="mean")
    by_path = DialogueEmbedder.from_pretrained(model, separator="eou", num_roles=3, dialogue_pooling="mean")
    by_object = DialogueEmbedder.from_pretrained(pretrained, separator="eou", num_roles=3, dialogue_pooling="mean",
                                                 max_length=32)
    for embedder in (by_path, by_object):
        assert (embedder.pooling, embedder.num_roles, embedder.max_length, embedder.merge_consecutive_turns) == (
            "mean", 3, 32, True)
    np.testing.assert_allclose(by_object.embed(dialogues)["mean"], views["mean"], atol=1e-5)
