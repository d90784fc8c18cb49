"""Fresh processes that load a sentence encoder and embed, timed and measured from outside.

Cold start and peak memory can only be measured in a new process. Each side runs the same work
with the same number of threads: tfdialemb from a checkpoint, tfdialemb from an exported
SavedModel, and sentence-transformers on the same checkpoint when an interpreter that has it is
given (it needs torch, which tfdialemb does not). The sides compared compute in float32, as
sentence-transformers does and `encode` does by default; tfdialemb in bfloat16 is a side of its
own (BFLOAT16_SIDE), compared with tfdialemb in float32 only.
"""
import json
import os
import subprocess
import sys
import time
from typing import Dict, List, Optional

from tfdialemb.core import precision

DRIVER = r"""
import json, sys, time
mode, path, sentences_file, batch_size, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def peak_mib():
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM")).split()[1]) / 1024
stages = {"start": [time.time(), peak_mib()]}
SIDE_IMPORTS
stages["imported"] = [time.time(), peak_mib()]
model = load(path)
stages["loaded"] = [time.time(), peak_mib()]
embed(model, ["How are you today?", "I would like to book a table for two."])
stages["first"] = [time.time(), peak_mib()]
if sentences_file != "-":
    with open(sentences_file, encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]
    embed(model, sentences)
    stages["all"] = [time.time(), peak_mib()]
    embed(model, sentences)  # steady state: whatever the first pass traced or warmed is ready
    stages["again"] = [time.time(), peak_mib()]
print(json.dumps(stages))
"""
"""What every measured process runs, SIDE_IMPORTS replaced by the side's imports, `load(path)`
and `embed(model, texts)`."""

OURS = DRIVER.replace("SIDE_IMPORTS", r"""
import tensorflow as tf
tf.config.threading.set_intra_op_parallelism_threads(threads)
tf.config.threading.set_inter_op_parallelism_threads(threads)
if mode != "saved_model":
    from tfdialemb.core import precision
    from tfdialemb.inference.embedder import SentenceEmbedder
    from tfdialemb.encoders.checkpoint import load_pretrained
    precision.apply(mode)  # the policy: float32, as `encode` computes by default, or mixed_bfloat16
    load = lambda path: SentenceEmbedder.from_pretrained(load_pretrained(path))
else:
    from tfdialemb.serving.exported_embedder import ExportedSentenceEmbedder as load
embed = lambda model, texts: model.embed(texts, batch_size=batch_size)
""")

REFERENCE = DRIVER.replace("SIDE_IMPORTS", r"""
import torch
torch.set_num_threads(threads)
from sentence_transformers import SentenceTransformer
load = lambda path: SentenceTransformer(path, device="cpu")
embed = lambda model, texts: model.encode(texts, batch_size=batch_size)
""")

SIDES = {
    "tfdialemb": ("float32", OURS),
    "tfdialemb_saved_model": ("saved_model", OURS),
    "sentence_transformers": ("checkpoint", REFERENCE),
    "tfdialemb_bfloat16": ("mixed_bfloat16", OURS),
}
"""Side → (what it loads: a checkpoint in a precision policy, or the saved model; the script its
process runs)."""
BFLOAT16_SIDE = "tfdialemb_bfloat16"
"""tfdialemb from the checkpoint in bfloat16, timed where the CPU computes it (`bfloat16_measured`)."""


def bfloat16_measured() -> bool:
    """Whether this machine runs the bfloat16 side: train's `auto` picks bfloat16 here."""
    return precision.resolve(precision.AUTO) == "mixed_bfloat16"


def child_env(threads: int) -> Dict[str, str]:
    """The environment of every measured process: quiet, offline and with `threads` threads."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               OMP_NUM_THREADS=str(threads), TF_NUM_INTRAOP_THREADS=str(threads),
               TF_NUM_INTEROP_THREADS=str(threads))
    return env


def reference_unavailable(python: str) -> Optional[str]:
    """Why `python` cannot run the sentence-transformers side, or None when it can."""
    try:
        found = subprocess.run([python, "-c", "import sentence_transformers"], capture_output=True,
                               timeout=300, env=child_env(1)).returncode == 0
    except OSError as e:
        return f"{python}: {e}"
    if found:
        return None
    return (f"sentence-transformers is not importable by {python}: its column is skipped (install it, with "
            "torch, in some environment and pass --reference_python=that environment's python)")


def run_side(side: str, python: str, path: str, sentences_file: Optional[str], batch_size: int,
             threads: int) -> Dict[str, Dict[str, float]]:
    """One fresh process of `side`: per stage (imported, loaded, first, all, again), the seconds since
    the process was started and the peak resident MiB so far."""
    mode, script = SIDES[side]
    start = time.time()
    stdout = run_child([python, "-c", script, mode, path, sentences_file or "-", str(batch_size), str(threads)],
                  threads)
    stages = json.loads(stdout.strip().splitlines()[-1])
    return {name: {"seconds": when - start, "peak_mib": peak} for name, (when, peak) in stages.items()}


PEAK_OF_CHILD = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
    "sys.exit(code)\n"
)
"""Runs a command and prints its peak resident MiB: the largest waited-for child's, so the
small parent itself does not count."""


def peak_mib(argv: List[str], threads: int) -> float:
    """Peak resident MiB of the process `argv` (run to completion)."""
    return float(run_child([sys.executable, "-c", PEAK_OF_CHILD] + argv, threads).strip().splitlines()[-1])


def run_child(argv: List[str], threads: int) -> str:
    """stdout of `argv`; a RuntimeError with the end of its stderr when it fails."""
    result = subprocess.run(argv, capture_output=True, env=child_env(threads), check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited {result.returncode}:\n"
                           f"{result.stderr.decode(errors='replace')[-3000:]}")
    return result.stdout.decode()


def python_of(side: str, reference_python: str) -> str:
    return reference_python if side == "sentence_transformers" else sys.executable
