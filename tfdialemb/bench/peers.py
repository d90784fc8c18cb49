"""tfdialemb against its PyTorch peers, measure by measure, in one run.

Each side is one long-lived process per (threads, precision): tfdialemb in this interpreter, the
peers (sentence-transformers, and triple-encoders for the incremental measure) in
--reference_python. Both load the same checkpoint and receive the same inputs; the parent asks
for one timed call at a time and alternates the order (A B, then B A), so a change in the
machine's load weighs on both sides alike. Every sequence is exactly `length` tokens (texts
longer than that, truncated), and a call carries about `batch_tokens` tokens, so the lengths
compare the same work per call.

Measures (tfdialemb / peer). tfdialemb's side calls its traced functions, what `embed` and
`score` switch to once a run is worth tracing and what an exported model serves; the peers' side
their public calls:
- encode: `SentenceEmbedder.embed_batch` / `SentenceTransformer.encode`, mean pooling; in float32
  the largest absolute difference of the unit-length embeddings is reported too.
- train_step: one step of in-batch contrast on (anchor, positive) pairs, mean pooling, scale 20,
  AdamW lr 2e-5 / `MultipleNegativesRankingLoss` with `torch.optim.AdamW`; dropout on.
- cross_encoder: `PairScorer.score_batch` with FGC's head / `CrossEncoder(num_labels=1).predict` on
  (context, response) pairs packed to `length` (both heads freshly initialised, so scores are
  not compared).
- triple: one turn of incremental scoring with a history of `TRIPLE_HISTORY` utterances of
  `length` tokens, the speakers alternating: `SequenceScorer.add(utterance, speaker)` + `score`
  with `speaker_tokens="by_speaker"` / triple-encoders' `contextualize_utterance(utterance,
  sequence, dialog_partner)` + `sequence_modeling`, against `TRIPLE_CANDIDATES` pre-encoded
  candidates: the same two texts encoded a turn on both sides. (The scorer's default, tokens by
  distance to the candidate, encodes four: `tfdialemb.inference.sequence_scorer`.)

Precisions: float32 on both sides; bfloat16 is tfdialemb's mixed_bfloat16 policy against torch's
`autocast(bfloat16)` on the CPU, by default only where the CPU computes bfloat16 (where `train`'s
`auto` picks it): elsewhere both libraries emulate it, several times slower than float32. A ratio
is tfdialemb's median seconds over the peer's: below 1 is faster.
"""
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Sequence

import numpy as np

from tfdialemb.bench.demo_data import demo_utterances
from tfdialemb.bench.processes import bfloat16_measured, child_env
from tfdialemb.eval.dialogue_metrics import unit_rows

MEASURES = ("encode", "train_step", "cross_encoder", "triple")
PRECISIONS = ("float32", "bfloat16")
LENGTHS = (32, 64, 128, 256, 512)
TRIPLE_HISTORY = 20
TRIPLE_CANDIDATES = 100
POLICY = {"float32": "float32", "bfloat16": "mixed_bfloat16"}
"""tfdialemb's precision policy per compared precision."""

WORKER_LOOP = r"""
import json, sys, time
prepared = {}
print(json.dumps({"ready": True}), file=REPLIES, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    key = (request["measure"], request["length"])
    if key not in prepared:
        prepared.clear()  # one measure and length at a time: the last one's models and tensors go
        prepared[key] = PREPARE(request)
    call = prepared[key]
    start = time.perf_counter()
    output = call()
    seconds = time.perf_counter() - start
    reply = {"seconds": seconds}
    if request.get("output"):
        reply["output"] = [[float(x) for x in row] for row in output]
    print(json.dumps(reply), file=REPLIES, flush=True)
"""
"""Both sides' request loop: a request names a measure and a length and carries its inputs; the
reply is the seconds of one call (and, when asked, what the call returned), on the stdout the
side started with (`SIDE_START` sends whatever else is printed to stderr)."""
SIDE_START = r"""
import sys
REPLIES, sys.stdout = sys.stdout, sys.stderr
"""

OURS = SIDE_START + r"""
import itertools
checkpoint, threads, policy, jit_compile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "jit"
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(threads)
tf.config.threading.set_inter_op_parallelism_threads(threads)
import numpy as np
from tfdialemb.core import precision
from tfdialemb.encoders.checkpoint import load_pretrained
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.inference.sequence_scorer import BY_SPEAKER, SPEAKERS, SequenceScorer
from tfdialemb.losses.in_batch_info_nce import in_batch_info_nce
from tfdialemb.methods.spec import get_method
from tfdialemb.training.graph_options import apply_training_graph_options
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer
precision.apply(policy)
apply_training_graph_options()
pretrained = load_pretrained(checkpoint)

def PREPARE(request):
    measure, length = request["measure"], request["length"]
    # Compiled, the training step is compiled whole with the encoder inside it uncompiled, as
    # `train --jit_compile` compiles it: the encoder's own compiled forward nested in the compiled
    # step makes XLA compile the step again at every call.
    precision.apply(policy, jit_compile_encoders=jit_compile and measure != "train_step")
    if measure == "encode":
        embedder = SentenceEmbedder.from_pretrained(pretrained, pooling="mean", max_length=length)
        texts = tf.constant(request["texts"])
        return lambda: embedder.embed_batch(texts).numpy()
    if measure == "train_step":
        trained = load_pretrained(checkpoint)  # its own weights: the step changes them
        encoder = trained.encoder
        anchors = pretrained.tokenizer(tf.constant(request["texts"]), max_length=length)
        positives = pretrained.tokenizer(tf.constant(request["positives"]), max_length=length)
        optimizer = create_optimizer(OptimizerConfig(learning_rate=2e-5, weight_decay=0.01), 1000)
        optimizer.build(encoder.trainable_variables)

        @tf.function(autograph=False, jit_compile=jit_compile)
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(in_batch_info_nce(encoder.embed(anchors, training=True),
                                                        encoder.embed(positives, training=True), 0.05))
            grads = tape.gradient(loss, encoder.trainable_variables)
            optimizer.apply_gradients([(g, v) for g, v in zip(grads, encoder.trainable_variables) if g is not None])
            return loss
        return lambda: step().numpy()
    if measure == "cross_encoder":
        spec = get_method("fgc")
        scorer = PairScorer(spec.make_model(pretrained.encoder, spec.resolve({})), pretrained.tokenizer,
                            max_length=length)
        turns, responses = tf.constant(request["texts"]), tf.constant(request["positives"])
        counts = tf.ones_like(responses, tf.int32)
        return lambda: scorer.score_batch(turns, counts, responses).numpy()
    embedder = SentenceEmbedder.from_pretrained(pretrained, pooling="mean", max_length=length)
    scorer = SequenceScorer(embedder.embed, "c3l", speaker_tokens=BY_SPEAKER)
    speakers = itertools.cycle(SPEAKERS)  # [E] first, as the peer's dialog_partner=False
    for utterance in request["history"]:
        scorer.add(utterance, next(speakers))
    candidates = scorer.encode_candidates(request["candidates"])
    turns = itertools.cycle(request["turns"])

    def turn():
        scorer.add(next(turns), next(speakers))
        return scorer.score(candidates)
    return turn
""" + WORKER_LOOP

REFERENCE = SIDE_START + r"""
import contextlib, itertools
checkpoint, threads, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import torch
torch.set_num_threads(threads)
torch.set_num_interop_threads(threads)
from sentence_transformers import CrossEncoder, SentenceTransformer, losses

def autocast():
    if policy == "mixed_bfloat16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()

def PREPARE(request):
    measure, length = request["measure"], request["length"]
    if measure == "encode":
        model = SentenceTransformer(checkpoint, device="cpu")
        model.max_seq_length = length
        texts = request["texts"]
        def encode():
            with autocast():
                return model.encode(texts, batch_size=len(texts), show_progress_bar=False)
        return encode
    if measure == "train_step":
        model = SentenceTransformer(checkpoint, device="cpu")
        model.max_seq_length = length
        loss_model = losses.MultipleNegativesRankingLoss(model)
        features = [model.tokenize(request["texts"]), model.tokenize(request["positives"])]
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
        model.train()
        def step():
            optimizer.zero_grad()
            with autocast():
                loss = loss_model(features, None)
            loss.backward()
            optimizer.step()
            return loss
        return step
    if measure == "cross_encoder":
        torch.manual_seed(0)
        model = CrossEncoder(checkpoint, num_labels=1, max_length=length, device="cpu")
        pairs = [[context, response] for context, response in zip(request["texts"], request["positives"])]
        def score():
            with autocast():
                return model.predict(pairs, batch_size=len(pairs), show_progress_bar=False)
        return score
    from triple_encoders.TripleEncodersForConversationalSequenceModeling import (
        TripleEncodersForConversationalSequenceModeling)
    model = TripleEncodersForConversationalSequenceModeling(checkpoint)
    model.model.max_seq_length = length
    with autocast():
        model.load_candidates_from_strings(request["candidates"])
        state = {"sequence": None, "partner": False}
        for utterance in request["history"]:
            state["sequence"] = model.contextualize_utterance(utterance, state["sequence"], state["partner"])
            state["partner"] = not state["partner"]
    turns = itertools.cycle(request["turns"])
    def turn():
        with autocast():
            state["sequence"] = model.contextualize_utterance(next(turns), state["sequence"], state["partner"])
            state["partner"] = not state["partner"]
            return model.sequence_modeling(state["sequence"])
    return turn
""" + WORKER_LOOP


class Worker:
    """One side's long-lived process: `call(request)` sends a request and returns its reply."""

    def __init__(self, argv: List[str], threads: int, name: str):
        self.name = name
        # The libraries' progress bars and warnings go to a file, not a pipe nobody reads; it is kept
        # when the side fails.
        self.log = tempfile.NamedTemporaryFile("w+", prefix=f"tfdialemb-peers-{name}-", suffix=".log",
                                               delete=False)
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        env=child_env(threads), text=True)
        self.failed = False
        self._reply()  # loaded

    def call(self, request: dict) -> dict:
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # the side has exited: `_reply` says why
        return self._reply()

    def _reply(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            self.failed = True
            self.log.seek(0)
            said = [text for text in self.log.read().splitlines() if text.strip()]
            raise ValueError(f"the {self.name} side exited {self.process.returncode}: "
                             f"{said[-1] if said else 'nothing on stderr'} (its log: {self.log.name})")
        return json.loads(line)

    def close(self) -> None:
        """Ends the side; its log is removed unless the side failed (the error names it)."""
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()
        self.process.stdout.close()
        self.log.close()
        if not self.failed:
            os.remove(self.log.name)


def reference_problem(python: str) -> Optional[str]:
    """Why `python` cannot run the peers, or None when it can."""
    try:
        result = subprocess.run([python, "-c", "import torch, sentence_transformers"], capture_output=True,
                                timeout=300, env=child_env(1))
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"--reference_python={python}: {e}"
    if result.returncode != 0:
        return (f"--reference_python={python} cannot import torch and sentence_transformers; make a venv "
                "with `pip install torch --index-url https://download.pytorch.org/whl/cpu sentence-transformers` "
                "(and `pip install --no-deps triple-encoders` for the triple measure) and pass its python "
                "(docs/benchmark.md, \"Against the PyTorch peers\")")
    return None


def has_triple_encoders(python: str) -> bool:
    return subprocess.run([python, "-c", "import triple_encoders"], capture_output=True,
                          env=child_env(1)).returncode == 0


def inputs(measure: str, length: int, batch_tokens: int, seed: int = 0) -> dict:
    """The request of `measure` at `length`: rows of texts longer than `length` tokens (so every
    side truncates them to exactly `length`), about `batch_tokens` tokens in all, or for `triple`
    a history, the turns to add and the candidates, utterances of about `length` words."""
    utterances = demo_utterances(4096, seed)
    position = [0]

    def text(words: int) -> str:
        taken = []
        while len(taken) < words:
            taken.extend(utterances[position[0] % len(utterances)].split())
            position[0] += 1
        return " ".join(taken[:words])

    request = {"measure": measure, "length": length}
    if measure == "triple":
        request.update(history=[text(length) for _ in range(TRIPLE_HISTORY)],
                       turns=[text(length) for _ in range(64)],  # taken in turn, again from the first after the last
                       candidates=[text(min(length, 32)) for _ in range(TRIPLE_CANDIDATES)])
        return request
    rows = max(1, batch_tokens // length)
    request.update(texts=[text(length) for _ in range(rows)], positives=[text(length) for _ in range(rows)])
    return request


def bench_peers(checkpoint: str, reference_python: str, measures: Sequence[str] = MEASURES,
                lengths: Sequence[int] = LENGTHS, precisions: Optional[Sequence[str]] = None,
                thread_counts: Sequence[int] = (1,), batch_tokens: int = 2048, rounds: int = 5,
                warmup: int = 1, jit_compile: bool = False, progress=None, ours_argv=None,
                reference_argv=None) -> Dict:
    """Median seconds per call of each side per (measure, length, precision, threads) and their
    ratio. `ours_argv` / `reference_argv` replace the sides' commands (a test's stand-ins);
    `precisions` None: float32, and bfloat16 where the CPU computes it. `jit_compile`: tfdialemb's
    encoder forward compiled with XLA, and the training step compiled whole as `train
    --jit_compile` compiles it."""
    notes = []
    if precisions is None:
        precisions = PRECISIONS if bfloat16_measured() else ("float32",)
        if len(precisions) == 1:
            notes.append("bfloat16 skipped: this CPU emulates it (--precisions=float32,bfloat16 to time it anyway)")
    for name, values, known in (("measures", measures, MEASURES), ("precisions", precisions, PRECISIONS)):
        unknown = sorted(set(values) - set(known))
        if unknown or not values:
            raise ValueError(f"--{name} must be among {', '.join(known)}; got {', '.join(values) or 'none'}")
    if not lengths or min(lengths) < 8:
        raise ValueError(f"--lengths must be at least 8 tokens each, got {list(lengths)}")
    if rounds < 1 or warmup < 0 or batch_tokens < 1:
        raise ValueError(f"need rounds >= 1, warmup >= 0 and batch_tokens >= 1; got {rounds}, {warmup}, {batch_tokens}")
    if reference_argv is None:
        problem = reference_problem(reference_python)
        if problem:
            raise ValueError(problem)
        if "triple" in measures and not has_triple_encoders(reference_python):
            notes.append(f"triple skipped: {reference_python} cannot import triple_encoders "
                         "(pip install --no-deps triple-encoders)")
            measures = [m for m in measures if m != "triple"]
    rows, agreement = [], {}
    for threads in thread_counts:
        for precision_name in precisions:
            arguments = [checkpoint, str(threads), POLICY[precision_name], "jit" if jit_compile else "graph"]
            ours = Worker((ours_argv or [sys.executable, "-c", OURS]) + arguments, threads, "tfdialemb")
            try:
                sides = (ours, Worker((reference_argv or [reference_python, "-c", REFERENCE]) + arguments, threads,
                                      "reference"))
            except ValueError:
                ours.close()
                raise
            try:
                for measure in measures:
                    for length in lengths:
                        request = inputs(measure, length, batch_tokens)
                        seconds = _interleaved(sides, request, rounds, warmup)
                        rows.append({"measure": measure, "length": length, "precision": precision_name,
                                     "threads": threads, "tfdialemb_s": seconds[0], "reference_s": seconds[1],
                                     "ratio": seconds[0] / seconds[1]})
                        if measure == "encode" and precision_name == "float32":
                            agreement[f"encode/{length}"] = _largest_difference(
                                *(side.call({**request, "output": True})["output"] for side in sides))
                        if progress:
                            progress(rows[-1])
            finally:
                for side in sides:
                    side.close()
    return {"checkpoint": checkpoint, "reference_python": reference_python, "batch_tokens": batch_tokens,
            "rounds": rounds, "warmup": warmup, "jit_compile": jit_compile, "rows": rows,
            "ratios": {_key(row): row["ratio"] for row in rows},
            "encode_max_abs_difference": agreement, "notes": notes}


def _interleaved(sides, request: dict, rounds: int, warmup: int) -> List[float]:
    """Median seconds of each side's call over `rounds`, the order flipping every round, after
    `warmup` untimed calls of each (tracing, caches)."""
    for _ in range(warmup):
        for side in sides:
            side.call(request)
    times = [[], []]
    for index in range(rounds):
        order = (0, 1) if index % 2 == 0 else (1, 0)
        for which in order:
            times[which].append(sides[which].call(request)["seconds"])
    return [float(np.median(t)) for t in times]


def _largest_difference(ours, reference) -> float:
    """The largest absolute difference of the two sides' embeddings of the same texts, each row
    at unit length (`unit_rows` refuses a zero or non-finite row); a ValueError when their shapes
    differ."""
    ours, reference = np.asarray(ours, np.float64), np.asarray(reference, np.float64)
    if ours.shape != reference.shape:
        raise ValueError(f"the sides' embeddings differ in shape ({ours.shape} and {reference.shape}): they did "
                         "not load the same model")
    return float(np.max(np.abs(unit_rows(ours) - unit_rows(reference))))


def _key(row: dict) -> str:
    return f"{row['measure']}/{row['precision']}/{row['threads']}t/{row['length']}"


def format_row(row: dict) -> str:
    return (f"  {row['measure']:<14}{row['precision']:<10}{row['threads']:>3}t {row['length']:>5} tokens "
            f"{row['tfdialemb_s'] * 1000:>9.1f} ms {row['reference_s'] * 1000:>9.1f} ms {row['ratio']:>7.2f}")


def format_report(report: dict) -> str:
    compiled = ", tfdialemb XLA-compiled" if report.get("jit_compile") else ""
    lines = [f"tfdialemb vs the PyTorch peers, about {report['batch_tokens']} tokens a call{compiled}, median of "
             f"{report['rounds']} interleaved rounds (ratio: tfdialemb / peer, below 1 is faster):",
             f"  {'measure':<14}{'precision':<10}{'threads':>4} {'length':>12} {'tfdialemb':>12} {'peer':>12} "
             f"{'ratio':>7}"]
    lines += [format_row(row) for row in report["rows"]]
    if report["encode_max_abs_difference"]:
        lines.append("encode, float32, largest |difference| of the embeddings: " + ", ".join(
            f"{key.split('/')[1]} tokens {value:.1e}" for key, value in report["encode_max_abs_difference"].items()))
    lines += report["notes"]
    return "\n".join(lines)
