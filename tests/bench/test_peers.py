"""The peer benchmark: its orchestration with stand-in sides that report fixed seconds, the inputs
it sends, and tfdialemb's side on a tiny checkpoint against an in-process second code path."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tfdialemb.bench import peers

STAND_IN = r"""
import json, sys
name, log, factor, width = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    with open(log, "a") as f:
        f.write(name + "\n")
    reply = {"seconds": factor * request["length"] / 1000}
    if request.get("output"):
        row = [1.0] * width if name == "ours" else [2.0] + [0.0] * (width - 1)
        reply["output"] = [row] * len(request["texts"])
    print(json.dumps(reply), flush=True)
"""
"""A side that answers every request with factor · length ms and, when asked, embeddings of
`width`: all ones ("ours") or (2, 0, ...) ("peer"), logging the order it was called in; argv after
the script: name, log, factor, width, then the checkpoint, threads, policy and compilation every side receives."""


def _stand_ins(tmp_path, width=2):
    log = str(tmp_path / "calls.log")
    return log, *([sys.executable, "-c", STAND_IN, name, log, factor, str(width)]
                  for name, factor in (("ours", "3"), ("peer", "2")))


def test_ratios_are_the_median_seconds_of_interleaved_calls(tmp_path):
    log, ours, reference = _stand_ins(tmp_path)
    report = peers.bench_peers("ckpt", "unused", measures=("encode", "train_step"), lengths=(32, 64),
                               precisions=("float32",), thread_counts=(1,), rounds=3, warmup=1,
                               ours_argv=ours, reference_argv=reference)
    assert report["ratios"] == {"encode/float32/1t/32": 1.5, "encode/float32/1t/64": 1.5,
                                "train_step/float32/1t/32": 1.5, "train_step/float32/1t/64": 1.5}
    assert report["rows"][1]["tfdialemb_s"] == pytest.approx(0.192) and report["rows"][1]["reference_s"] == 0.128
    # Unit rows (1, 1)/√2 and (1, 0): the differences are 1 - 1/√2 = 0.2929 and 1/√2 = 0.7071.
    assert report["encode_max_abs_difference"] == pytest.approx({"encode/32": 2 ** -0.5, "encode/64": 2 ** -0.5})
    with open(log, encoding="utf-8") as f:
        calls = f.read().split()
    # Per measure and length: one warm-up of each, then rounds A B, B A, A B; then encode's output.
    one = ["ours", "peer", "ours", "peer", "peer", "ours", "ours", "peer"]
    assert calls == one + ["ours", "peer"] + one + ["ours", "peer"] + one + one


def test_requests_carry_texts_that_every_side_truncates_to_the_length():
    request = peers.inputs("encode", 32, 2048)
    assert len(request["texts"]) == len(request["positives"]) == 64
    assert {len(text.split()) for text in request["texts"] + request["positives"]} == {32}
    assert len(peers.inputs("cross_encoder", 512, 2048)["texts"]) == 4
    triple = peers.inputs("triple", 64, 2048)
    assert (len(triple["history"]), len(triple["candidates"])) == (peers.TRIPLE_HISTORY, peers.TRIPLE_CANDIDATES)
    assert {len(text.split()) for text in triple["history"] + triple["turns"]} == {64}


def test_unknown_measures_and_a_reference_without_the_peers_are_refused(tmp_path):
    with pytest.raises(ValueError, match="--measures must be among encode, train_step, cross_encoder, triple; got "
                                         "spelling"):
        peers.bench_peers("ckpt", sys.executable, measures=("spelling",))
    with pytest.raises(ValueError, match="--lengths must be at least 8"):
        peers.bench_peers("ckpt", sys.executable, lengths=(4,))
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    problem = peers.reference_problem(str(python))
    assert problem.startswith(f"--reference_python={python} cannot import torch and sentence_transformers; make a venv")


def test_our_side_embeds_as_the_sentence_embedder_does(hf_safetensors_dir, tmp_path):
    from tfdialemb.encoders import load_pretrained
    from tfdialemb.inference.embedder import SentenceEmbedder

    _, _, reference = _stand_ins(tmp_path, width=32)  # tiny_bert's hidden size
    report = peers.bench_peers(hf_safetensors_dir, "unused", lengths=(16,), precisions=("float32",),
                               thread_counts=(1,), batch_tokens=64, rounds=1, warmup=1, reference_argv=reference)
    assert [row["measure"] for row in report["rows"]] == list(peers.MEASURES)
    assert all(np.isfinite(row["tfdialemb_s"]) and row["tfdialemb_s"] > 0 for row in report["rows"])

    request = peers.inputs("encode", 16, 64)
    side = peers.Worker([sys.executable, "-c", peers.OURS, hf_safetensors_dir, "1", "float32", "graph"], 1,
                        "tfdialemb")
    try:
        served = np.asarray(side.call({**request, "output": True})["output"])
    finally:
        side.close()
    eager = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir), pooling="mean",
                                             max_length=16).embed(request["texts"], batch_size=2)
    np.testing.assert_allclose(served, eager, atol=1e-5)
    assert json.dumps(report["ratios"])  # plain JSON


def test_a_side_that_fails_is_named_in_one_line_with_its_log(tmp_path):
    _, ours, _ = _stand_ins(tmp_path)
    failing = [sys.executable, "-c", "import sys; print('no such model', file=sys.stderr); sys.exit(3)"]
    with pytest.raises(ValueError) as refused:
        peers.bench_peers("ckpt", "unused", measures=("encode",), lengths=(32,), precisions=("float32",),
                          ours_argv=ours, reference_argv=failing)
    message = str(refused.value)
    assert message.startswith("the reference side exited 3: no such model (its log: ") and "\n" not in message
    os.remove(message.split("(its log: ")[1].rstrip(")"))


def _side(prepare: str):
    """A side made of the benchmark's own start and request loop around `prepare`, a PREPARE
    function's source."""
    return [sys.executable, "-c", peers.SIDE_START + prepare + peers.WORKER_LOOP]


def test_what_a_side_prints_does_not_reach_the_replies(tmp_path):
    noisy = _side("print('loading...')\ndef PREPARE(request):\n    print('prepared', request['length'])\n"
                  "    return lambda: [[1.0, 0.0]]\n")
    report = peers.bench_peers("ckpt", "unused", measures=("encode",), lengths=(16, 32), precisions=("float32",),
                               rounds=2, warmup=0, ours_argv=noisy, reference_argv=noisy)
    assert sorted(report["ratios"]) == ["encode/float32/1t/16", "encode/float32/1t/32"]
    assert report["encode_max_abs_difference"] == {"encode/16": 0.0, "encode/32": 0.0}


def test_a_side_that_fails_mid_run_keeps_its_log(tmp_path):
    _, ours, _ = _stand_ins(tmp_path)
    failing = _side("def PREPARE(request):\n    if request['length'] == 32:\n"
                    "        raise RuntimeError('out of memory at 32')\n    return lambda: [[1.0]]\n")
    with pytest.raises(ValueError) as refused:
        peers.bench_peers("ckpt", "unused", measures=("train_step",), lengths=(16, 32), precisions=("float32",),
                          rounds=1, warmup=0, ours_argv=ours, reference_argv=failing)
    message = str(refused.value)
    assert message.startswith("the reference side exited 1: RuntimeError: out of memory at 32 (its log: ")
    log = message.split("(its log: ")[1].rstrip(")")
    with open(log, encoding="utf-8") as f:
        assert "Traceback" in f.read()
    os.remove(log)


def test_our_compiled_training_step_is_compiled_once_for_all_its_calls(hf_safetensors_dir):
    """With --jit_compile the step is compiled whole, as `train --jit_compile` compiles it (nested
    inside it, the encoder's own compiled forward makes XLA compile the step again at every call).
    Counted from XLA's own log line for each compilation."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0", TF_CPP_VMODULE="device_compiler=1")
    request = json.dumps(peers.inputs("train_step", 16, 64)) + "\n"
    side = subprocess.run([sys.executable, "-c", peers.OURS, hf_safetensors_dir, "1", "float32", "jit"],
                          input=request * 3, capture_output=True, text=True, env=env, timeout=600)
    assert side.returncode == 0, side.stderr[-2000:]
    replies = [json.loads(line) for line in side.stdout.splitlines()]
    assert len(replies) == 4 and all(np.isfinite(reply["seconds"]) for reply in replies[1:])
    assert side.stderr.count("Compilation of XLA executable time") == 1
