"""Cold start: process start → first embedding and model load → first embedding, in fresh
processes, tfdialemb (from the checkpoint and from its exported SavedModel, in float32) vs
sentence-transformers on the same checkpoint, alternating sides on every repeat."""
import os
import tempfile

import numpy as np

from tfdialemb.bench.processes import (
    BFLOAT16_SIDE,
    SIDES,
    python_of,
    reference_unavailable,
    run_side,
)


def export_for_bench(checkpoint: str, directory: str) -> str:
    """The checkpoint's sentence SavedModel (mean pooling, 128 tokens) under `directory`."""
    from tfdialemb.encoders.checkpoint import load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.inference.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel
    from tfdialemb.serving.sentence import export_sentence_model  # pylint: disable=import-outside-toplevel

    embedder = SentenceEmbedder.from_pretrained(load_pretrained(checkpoint))
    return export_sentence_model(embedder, os.path.join(directory, "export"), ["How are you?"])


def bench_startup(checkpoint: str, reference_python: str, repeats: int, threads: int) -> dict:
    skipped = reference_unavailable(reference_python)
    sides = [side for side in SIDES if side != BFLOAT16_SIDE and not (skipped and side == "sentence_transformers")]
    with tempfile.TemporaryDirectory() as directory:
        saved_model = export_for_bench(checkpoint, directory)
        runs = {side: [] for side in sides}
        for _ in range(repeats):
            for side in sides:
                path = saved_model if side == "tfdialemb_saved_model" else checkpoint
                runs[side].append(run_side(side, python_of(side, reference_python), path, None, 1, threads))
    figures = {side: {
        "imports_s": _median(r["imported"]["seconds"] for r in side_runs),
        "load_to_first_s": _median(r["first"]["seconds"] - r["imported"]["seconds"] for r in side_runs),
        "start_to_first_s": _median(r["first"]["seconds"] for r in side_runs),
    } for side, side_runs in runs.items()}
    report = {"checkpoint": checkpoint, "threads": threads, "repeats": repeats, "sides": figures,
              "reference_skipped": skipped}
    if not skipped:
        reference = figures["sentence_transformers"]
        report["ratios"] = {side: {name: figures[side][name] / reference[name] for name in reference}
                            for side in ("tfdialemb", "tfdialemb_saved_model")}
    return report


def _median(values) -> float:
    return float(np.median(list(values)))


def format_report(report: dict) -> str:
    lines = [f"cold start, {report['threads']} thread(s), median of {report['repeats']} fresh processes per side "
             f"({report['checkpoint']})",
             f"{'side':<24}{'imports s':>11}{'load->first s':>15}{'start->first s':>16}"]
    for side, figures in report["sides"].items():
        lines.append(f"{side:<24}{figures['imports_s']:>11.2f}{figures['load_to_first_s']:>15.2f}"
                     f"{figures['start_to_first_s']:>16.2f}")
    if report.get("ratios"):
        lines.append("ratio to sentence_transformers (lower is faster):")
        for side, ratios in report["ratios"].items():
            lines.append(f"{side:<24}{ratios['imports_s']:>10.2f}x{ratios['load_to_first_s']:>14.2f}x"
                         f"{ratios['start_to_first_s']:>15.2f}x")
    else:
        lines.append(report["reference_skipped"])
    return "\n".join(lines)
