"""One CCL training step, tfdialemb vs sentence-transformers, in fresh processes on the same pairs.

Both sides regress the cosine of two mean-pooled embeddings onto a target (CCL's `cosine_mse`,
sentence-transformers' CosineSimilarityLoss, the loss the triple-encoders code trains with) and
take one AdamW step (lr 2e-5, weight decay 0.01), dropout on, each batch padded to its longest
text; the median step time after warm-up steps is compared. tfdialemb runs with the Grappler
setting that `train` uses by default (`apply_training_graph_options`) and in float32, as
sentence-transformers does; where the CPU computes bfloat16 (`train`'s `auto` picks it there), a
bfloat16 run is a row of its own, compared with tfdialemb's float32 step. The float32 step's first
step is also compared with a later step plus the time to trace the step once (a second trace
would show as a first step well above it).
"""
import json
import os
import sys
import tempfile

from tfdialemb.bench.demo_data import demo_utterances
from tfdialemb.bench.processes import BFLOAT16_SIDE, bfloat16_measured, reference_unavailable, run_child

PREAMBLE = r"""
import json, sys, time
path, pairs_file, max_length, steps, warmup, threads = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                                         int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
policy = sys.argv[7]
with open(pairs_file, encoding="utf-8") as f:
    pairs = json.load(f)
def median_seconds(step):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]
"""

OURS = PREAMBLE + r"""
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(threads)
tf.config.threading.set_inter_op_parallelism_threads(threads)
from tfdialemb.core import precision
from tfdialemb.encoders.checkpoint import load_pretrained
from tfdialemb.losses.cosine_mse import cosine_mse
from tfdialemb.training.graph_options import apply_training_graph_options
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer
precision.apply(policy)
apply_training_graph_options()
pretrained = load_pretrained(path)
encoder = pretrained.encoder
first = pretrained.tokenizer(tf.constant(pairs["first"]), max_length=max_length)
second = pretrained.tokenizer(tf.constant(pairs["second"]), max_length=max_length)
targets = tf.constant(pairs["targets"], tf.float32)
optimizer = create_optimizer(OptimizerConfig(learning_rate=2e-5, weight_decay=0.01), 1000)
optimizer.build(encoder.trainable_variables)

def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(cosine_mse(encoder.embed(first, training=True), encoder.embed(second, training=True),
                                         targets))
    grads = tape.gradient(loss, encoder.trainable_variables)
    optimizer.apply_gradients([(g, v) for g, v in zip(grads, encoder.trainable_variables) if g is not None])
    return loss

start = time.perf_counter()
tf.function(step, autograph=False).get_concrete_function()  # tracing alone, on a twin of the step
trace_s = time.perf_counter() - start
train_step = tf.function(step, autograph=False)
start = time.perf_counter()
train_step().numpy()
first_s = time.perf_counter() - start
print(json.dumps({"step_s": median_seconds(lambda: train_step().numpy()), "first_step_s": first_s,
                  "trace_s": trace_s}))
"""

REFERENCE = PREAMBLE + r"""
import torch
torch.set_num_threads(threads)
from sentence_transformers import SentenceTransformer, losses
model = SentenceTransformer(path, device="cpu")
model.max_seq_length = max_length
loss_model = losses.CosineSimilarityLoss(model)
first, second = model.tokenize(pairs["first"]), model.tokenize(pairs["second"])
targets = torch.tensor(pairs["targets"], dtype=torch.float32)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
model.train()

def train_step():
    optimizer.zero_grad()
    loss_model([first, second], targets).backward()
    optimizer.step()

print(json.dumps({"step_s": median_seconds(train_step)}))
"""


def bench_training_step(checkpoint: str, reference_python: str, batch: int, max_length: int, steps: int,
                        warmup: int, threads: int) -> dict:
    skipped = reference_unavailable(reference_python)
    texts = demo_utterances(2 * batch)
    pairs = {"first": texts[:batch], "second": texts[batch:],
             "targets": [round(i / max(batch - 1, 1), 6) for i in range(batch)]}
    with tempfile.TemporaryDirectory() as directory:
        pairs_file = os.path.join(directory, "pairs.json")
        with open(pairs_file, "w", encoding="utf-8") as f:
            json.dump(pairs, f)
        args = [checkpoint, pairs_file, str(max_length), str(steps), str(warmup), str(threads)]
        ours = _child_figures([sys.executable, "-c", OURS, *args, "float32"], threads)
        seconds = {"tfdialemb": ours["step_s"]}
        if bfloat16_measured():
            seconds[BFLOAT16_SIDE] = _child_figures([sys.executable, "-c", OURS, *args, "mixed_bfloat16"],
                                                    threads)["step_s"]
        if not skipped:
            seconds["sentence_transformers"] = _child_figures([reference_python, "-c", REFERENCE, *args, "float32"],
                                                              threads)["step_s"]
    report = {"checkpoint": checkpoint, "batch": batch, "max_length": max_length, "threads": threads,
              "steps": steps, "step_s": seconds, "first_step_s": ours["first_step_s"], "trace_s": ours["trace_s"],
              "first_step_vs_step_plus_trace": ours["first_step_s"] / (ours["step_s"] + ours["trace_s"]),
              "reference_skipped": skipped}
    if not skipped:
        report["ratio"] = seconds["tfdialemb"] / seconds["sentence_transformers"]
    if BFLOAT16_SIDE in seconds:
        report["bfloat16_vs_float32"] = seconds[BFLOAT16_SIDE] / seconds["tfdialemb"]
    return report


def _child_figures(argv, threads: int) -> dict:
    return json.loads(run_child(argv, threads).strip().splitlines()[-1])


def format_report(report: dict) -> str:
    lines = [f"one CCL training step (cosine MSE, AdamW), {report['batch']} pairs, max length "
             f"{report['max_length']}, {report['threads']} thread(s), median of {report['steps']}:"]
    for side, seconds in report["step_s"].items():
        lines.append(f"  {side:<24}{seconds * 1000:>9.0f} ms")
    lines.append(f"  ratio {report['ratio']:.2f}x sentence_transformers (both float32)" if "ratio" in report
                 else report["reference_skipped"])
    if "bfloat16_vs_float32" in report:
        lines.append(f"  {BFLOAT16_SIDE}: {report['bfloat16_vs_float32']:.2f}x tfdialemb's float32 step")
    lines.append(f"tfdialemb's first step {report['first_step_s']:.2f} s = "
                 f"{report['first_step_vs_step_plus_trace']:.2f}x (a later step + tracing the step once, "
                 f"{report['trace_s']:.2f} s)")
    return "\n".join(lines)
