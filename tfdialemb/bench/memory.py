"""Peak memory of encoding a file of sentences: `python -m tfdialemb.encode` (from the checkpoint
and with --saved_model) vs sentence-transformers encoding the same sentences, each in a fresh
process; where tfdialemb's peak builds up (after imports, loading, the first embedding, all, again); and
each side's steady-state encoding time of the file (its second pass: a first pass may still trace).

Ratios to sentence-transformers are of float32 sides (encode's default, as sentence-transformers
computes); where the CPU computes bfloat16, `encode --mixed_precision=mixed_bfloat16` is a row of
its own, compared with tfdialemb in float32."""
import os
import sys
import tempfile

from tfdialemb.bench.demo_data import demo_utterances
from tfdialemb.bench.processes import (BFLOAT16_SIDE, bfloat16_measured, peak_mib, python_of,
                                      reference_unavailable, run_side)
from tfdialemb.bench.startup import export_for_bench

FLOAT32_SIDES = ("tfdialemb", "tfdialemb_saved_model")
"""The tfdialemb sides compared with sentence-transformers."""


def bench_memory(checkpoint: str, reference_python: str, sentences: int, batch_size: int, threads: int) -> dict:
    skipped = reference_unavailable(reference_python)
    with tempfile.TemporaryDirectory() as directory:
        saved_model = export_for_bench(checkpoint, directory)
        source = os.path.join(directory, "sentences.txt")
        with open(source, "w", encoding="utf-8") as f:
            f.writelines(text.replace("\n", " ") + "\n" for text in demo_utterances(sentences))
        encode = [sys.executable, "-m", "tfdialemb.encode", f"--input={source}", f"--batch_size={batch_size}",
                  "--overwrite", f"--output={os.path.join(directory, 'out.npy')}"]
        peaks = {"tfdialemb": peak_mib(encode + [f"--init_checkpoint={checkpoint}"], threads),
                 "tfdialemb_saved_model": peak_mib(encode + [f"--saved_model={saved_model}"], threads)}
        if bfloat16_measured():
            peaks[BFLOAT16_SIDE] = peak_mib(encode + [f"--init_checkpoint={checkpoint}",
                                                      "--mixed_precision=mixed_bfloat16"], threads)
        sides = list(peaks) + ([] if skipped else ["sentence_transformers"])
        stages = {side: run_side(side, python_of(side, reference_python),
                                 saved_model if side == "tfdialemb_saved_model" else checkpoint,
                                 source, batch_size, threads) for side in sides}
        if not skipped:
            # Up to its first pass over the file its process does what `encode` does, so its peak
            # then is the one to compare with (the second pass only times the steady state).
            peaks["sentence_transformers"] = stages["sentence_transformers"]["all"]["peak_mib"]
    report = {"checkpoint": checkpoint, "sentences": sentences, "batch_size": batch_size, "threads": threads,
              "peak_mib": peaks, "tfdialemb_stages_peak_mib": {name: stage["peak_mib"]
                                                               for name, stage in stages["tfdialemb"].items()},
              "encoding_s": {side: side_stages["again"]["seconds"] - side_stages["all"]["seconds"]
                             for side, side_stages in stages.items()},
              "reference_skipped": skipped}
    if not skipped:
        report["ratios"] = {side: peaks[side] / peaks["sentence_transformers"] for side in FLOAT32_SIDES}
        report["encoding_ratios"] = {side: report["encoding_s"][side] / report["encoding_s"]["sentence_transformers"]
                                     for side in FLOAT32_SIDES}
    if BFLOAT16_SIDE in peaks:
        report["bfloat16_vs_float32"] = {"peak": peaks[BFLOAT16_SIDE] / peaks["tfdialemb"],
                                         "encoding": (report["encoding_s"][BFLOAT16_SIDE]
                                                      / report["encoding_s"]["tfdialemb"])}
    return report


def format_report(report: dict) -> str:
    lines = [f"peak resident memory encoding {report['sentences']} sentences, batch {report['batch_size']}, "
             f"{report['threads']} thread(s) ({report['checkpoint']}); tfdialemb in float32 unless named"]
    own = report.get("bfloat16_vs_float32", {})
    for side, peak in report["peak_mib"].items():
        lines.append(f"  {side:<24}{peak:>8.0f} MiB"
                     + _ratio(report.get("ratios", {}).get(side), own.get("peak"), side))
    lines.append(f"steady-state encoding of the {report['sentences']} sentences (a second pass over them):")
    for side, seconds in report["encoding_s"].items():
        lines.append(f"  {side:<24}{seconds:>8.2f} s"
                     + _ratio(report.get("encoding_ratios", {}).get(side), own.get("encoding"), side))
    if report["reference_skipped"]:
        lines.append(report["reference_skipped"])
    previous = 0.0
    lines.append("tfdialemb's peak as it builds up (MiB, and what each stage adds):")
    for stage, peak in report["tfdialemb_stages_peak_mib"].items():
        lines.append(f"  {stage:<10}{peak:>8.0f}  +{peak - previous:.0f}")
        previous = peak
    return "\n".join(lines)


def _ratio(to_reference, bfloat16_to_float32, side: str) -> str:
    """The ratio printed beside a side: float32 sides to sentence-transformers, bfloat16 to float32."""
    if side == BFLOAT16_SIDE:
        return f"  {bfloat16_to_float32:.2f}x tfdialemb (float32)" if bfloat16_to_float32 else ""
    return f"  {to_reference:.2f}x sentence_transformers" if to_reference else ""
