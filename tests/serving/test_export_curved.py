"""`tfdialemb.export --kind=curved`: a client that holds the vectors itself and calls only the
SavedModel's signatures scores like SequenceScorer and like re-encoding the whole history."""
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops before loading)
from warmup_records import read_warmup_requests

from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.encoders import load_pretrained
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.sequence_scorer import SequenceScorer
from tfdialemb.serving import curved

DIALOGUE = ["hello", "how are you", "fine thanks", "good morning", "book a taxi", "need hotel",
            "please help", "the cafe"]
CANDIDATES = ["book a hotel", "thanks", "how are you", "world"]
MAX_LENGTH = 64
HIDDEN = 32
C3L_SIGNATURES = ["encode_candidates", "encode_context", "score", "score_bi", "score_maxsim"]
CCL_SIGNATURES = ["encode_candidates", "encode_context", "score_bi"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, hf_safetensors_dir):
    """Version 2, a CCL bi-encoder, written by the command (warm-up: the demo corpus) while the
    library writes version 1, a triple-encoder warmed up on DIALOGUE."""
    export_dir = tmp_path_factory.mktemp("curved_export") / "models"
    command = subprocess.Popen(
        [sys.executable, "-m", "tfdialemb.export", "--kind=curved", "--curved=ccl",
         f"--init_checkpoint={hf_safetensors_dir}", f"--export_dir={export_dir}", "--version=2",
         f"--max_length={MAX_LENGTH}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir),
                                                max_length=MAX_LENGTH)
    warmup = [Dialogue("d", tuple(Turn("ab"[i % 2], u) for i, u in enumerate(DIALOGUE))),
              Dialogue("e", (Turn("a", CANDIDATES[0]),))]
    c3l_dir = curved.export_curved_model(embedder, str(export_dir), warmup, version=1)
    stdout, stderr = command.communicate(timeout=300)
    assert command.returncode == 0, stderr[-3000:]
    dirs = {"c3l": c3l_dir, "ccl": str(export_dir / "2")}
    return {"dirs": dirs, "embedder": embedder, "stdout": stdout,
            "signatures": {name: tf.saved_model.load(path).signatures
                           for name, path in dirs.items()}}


def _client_scores(signatures, score, k_last_rows=None):
    """Per turn of DIALOGUE, the scores of CANDIDATES from the signatures alone. The client
    encodes each utterance once, keeps its even and odd rows, and per turn gives u_i the odd
    row when its distance h - i to the next utterance is odd."""
    pool = signatures["encode_candidates"](utterances=tf.constant(CANDIDATES))["after"]
    state, scores = {}, []
    for utterance in DIALOGUE:
        for name, rows in signatures["encode_context"](utterances=tf.constant([utterance])).items():
            state.setdefault(name, []).append(rows.numpy()[0])
        h = len(next(iter(state.values())))
        rows = {name[:-len("_odd")]: tf.constant(np.stack([
            state[name if (h - i) % 2 else name.replace("_odd", "_even")][i] for i in range(h)]))
            for name in state if name.endswith("_odd")}
        if score == "score_bi":
            inputs = {"before": rows.get("b2", rows.get("before"))}
        else:
            inputs = {"b1": rows["b1"], "b2": rows["b2"],
                      "k_last_rows": tf.constant(k_last_rows or 0, tf.int32)}
        scores.append(signatures[score](candidates=pool, **inputs)["scores"].numpy())
    return scores


@pytest.mark.parametrize("export,score,mode,k_last_rows", [
    ("c3l", "score", "c3l", None), ("c3l", "score", "c3l", 2),
    ("c3l", "score_maxsim", "c3l_maxsim", None), ("c3l", "score_maxsim", "c3l_maxsim", 2),
    ("c3l", "score_bi", "bi_b2", None), ("ccl", "score_bi", "ccl", None)])
def test_client_loop_scores_like_the_sequence_scorer(exported, export, score, mode, k_last_rows):
    served = _client_scores(exported["signatures"][export], score, k_last_rows)
    scorer = SequenceScorer(exported["embedder"].embed, mode, k_last_rows)
    for turn, utterance in enumerate(DIALOGUE):
        scorer.add(utterance)
        message = f"{score} k={k_last_rows} after {turn + 1} utterances"
        np.testing.assert_allclose(served[turn], scorer.score(CANDIDATES), atol=1e-5,
                                   err_msg=message)
        np.testing.assert_allclose(served[turn],
                                   scorer.score_from_scratch(DIALOGUE[:turn + 1], CANDIDATES),
                                   atol=1e-5, err_msg=message)
    if k_last_rows:  # rows before the last k drop out once the history is longer than k + 1
        full = _client_scores(exported["signatures"][export], score)
        assert np.abs(full[-1] - served[-1]).max() > 1e-3


def test_context_texts_are_the_training_formats(exported):
    """Each output is the mean-pooled encoding of the text written by hand."""
    embed = exported["embedder"].embed
    utterances = ["hello", "fine thanks"]
    encoded = exported["signatures"]["c3l"]["encode_context"](utterances=tf.constant(utterances))
    assert sorted(encoded) == ["b1_even", "b1_odd", "b2_even", "b2_odd"]
    for name, prefix in (("b1_even", "[B1] [E] [B] "), ("b2_odd", "[B2] [O] [B] ")):
        np.testing.assert_allclose(encoded[name], embed([prefix + u for u in utterances]),
                                   atol=1e-5, err_msg=name)
    plain = curved.curved_module(exported["embedder"], "c3l", speaker_tokens=False)
    encoded = plain.signature_functions["encode_context"](tf.constant(utterances))
    assert sorted(encoded) == ["b1", "b2"]
    np.testing.assert_allclose(encoded["b2"], embed(["[B2] [B] " + u for u in utterances]),
                               atol=1e-5)
    ccl = exported["signatures"]["ccl"]
    np.testing.assert_allclose(
        ccl["encode_context"](utterances=tf.constant(utterances))["before_odd"],
        embed(["[O] [B] " + u for u in utterances]), atol=1e-5)
    np.testing.assert_allclose(
        ccl["encode_candidates"](utterances=tf.constant(utterances))["after"],
        embed(["[A] " + u for u in utterances]), atol=1e-5)


def test_history_rows_pick_parity_by_distance_to_the_end():
    # h = 3: u2 is the most recent (distance 1) -> odd, u1 (distance 2) -> even, u0 -> odd.
    even, odd = np.zeros([3, 2]), np.arange(6.0).reshape(3, 2) + 1
    rows = curved.history_rows({"b1_even": even, "b1_odd": odd}, "b1")
    np.testing.assert_array_equal(rows, [[1, 2], [0, 0], [5, 6]])
    np.testing.assert_array_equal(curved.history_rows({"b2": odd}, "b2"), odd)
    with pytest.raises(ValueError, match="context needs 'b2'"):
        curved.history_rows({"b1_even": even, "b1_odd": odd}, "b2")
    with pytest.raises(ValueError, match="curved must be one of"):
        curved.context_variants("c3l_maxsim")


def test_bad_inputs_fail_clearly(exported):
    signatures = exported["signatures"]["c3l"]
    rows = tf.constant(np.ones([3, HIDDEN], np.float32))
    candidates = rows[:2]
    cases = [
        ("score", {"b1": rows, "b2": rows[:2], "k_last_rows": 0}, "b1 and b2 must hold one row"),
        ("score_maxsim", {"b1": rows[:0], "b2": rows[:0], "k_last_rows": 0}, "history is empty"),
        ("score", {"b1": rows, "b2": rows, "k_last_rows": -1}, "k_last_rows must be >= 0"),
        ("score_bi", {"before": rows[:0]}, "history is empty"),
    ]
    for name, inputs, message in cases:
        if "k_last_rows" in inputs:
            inputs["k_last_rows"] = tf.constant(inputs["k_last_rows"], tf.int32)
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            signatures[name](candidates=candidates, **inputs)


def test_warmup_requests_name_existing_signatures_and_run(exported):
    for export, names in (("c3l", C3L_SIGNATURES), ("ccl", CCL_SIGNATURES)):
        signatures = exported["signatures"][export]
        assert sorted(signatures) == names
        requests = read_warmup_requests(exported["dirs"][export])
        assert sorted({name for name, _ in requests}) == names
        for name, inputs in requests:  # as TF Serving replays them
            specs = signatures[name].structured_input_signature[1]
            assert sorted(inputs) == sorted(specs), name
            outputs = signatures[name](**{key: tf.constant(value, specs[key].dtype)
                                          for key, value in inputs.items()})
            assert all(np.isfinite(value.numpy()).all() for value in outputs.values()), name
    c3l = read_warmup_requests(exported["dirs"]["c3l"])
    assert [inputs["utterances"].tolist() for name, inputs in c3l if name == "encode_context"] == [
        [b"hello"], [u.encode() for u in DIALOGUE]]
    assert [int(inputs["k_last_rows"]) for name, inputs in c3l if name == "score"] == [0, 2]
    history = [inputs["b1"].shape for name, inputs in c3l if name == "score_maxsim"]
    assert history == [(len(DIALOGUE), HIDDEN)] * 2


def test_command_reports_the_signatures(exported):
    out = exported["stdout"]
    rows = f"float32 [None, {HIDDEN}]"
    assert f"wrote TF Serving model version 2 to {exported['dirs']['ccl']}" in out
    assert (f"signature encode_context: utterances string [None] -> before_even {rows}, "
            f"before_odd {rows}") in out
    assert f"signature encode_candidates: utterances string [None] -> after {rows}" in out
    assert (f"signature score_bi: before {rows}, candidates {rows} -> scores float64 [None]"
            in out)
    assert "warm-up: 5 requests from 4 dialogues in" in out
