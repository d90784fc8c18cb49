"""Input-pipeline efficiency on the demo corpus: how much of each batch is real tokens in uniform
batches padded to their longest sequence (training's default), in length-bucketed batches and
when padded to the maximum length, and whether the pipeline outruns the encoder that consumes it."""
import tempfile
import time
from typing import Dict

import numpy as np

from tfdialemb.bench.demo_data import demo_build, padding_feeds
from tfdialemb.bench.encoder import time_encoder
from tfdialemb.data.examples import make_builder
from tfdialemb.data.records import read_manifest


def batch_tokens(batch) -> tuple:
    """(real tokens, processed token positions) of one dense batch from `make_dataset`."""
    real = processed = 0
    for name, value in batch.items():
        if name.endswith("_mask"):
            mask = value.numpy()
            real += int(mask.sum())
            processed += mask.size
    return real, processed


def _epoch(dataset) -> Dict[str, float]:
    real = processed = batches = 0
    shapes = []
    start = time.perf_counter()
    for batch in dataset:
        r, p = batch_tokens(batch)
        real, processed, batches = real + r, processed + p, batches + 1
        shapes.append({k: v.shape for k, v in batch.items() if not k.endswith("_mask")})
    seconds = time.perf_counter() - start
    return {"real": real, "processed": processed, "batches": batches, "seconds": seconds, "shapes": shapes}


def bench_pipeline(dialogues: int, method: str, max_length: int, batch: int, checkpoint: str,
                   seed: int = 0, steps: int = 5, warmup: int = 1) -> Dict:
    from tfdialemb.data.build import BuildOptions  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.checkpoint import load_pretrained  # pylint: disable=import-outside-toplevel

    pretrained = load_pretrained(checkpoint)
    with tempfile.TemporaryDirectory(prefix="tfdialemb-bench-") as tmp:
        built = demo_build(tmp, dialogues, make_builder(method), pretrained.tokenizer,
                           BuildOptions(max_length=max_length, seed=seed, num_shards=4))
        manifest = read_manifest(built)
        variants = padding_feeds(built, batch, seed, max_length)
        epochs = {name: _epoch(dataset) for name, dataset in variants.items()}
        timed = _epoch(variants["uniform"])  # a second pass: traced and warm
    # The encoder's consumption rate on the training batches' median shape (sequences x tokens).
    sequence_counts, lengths = [], []
    for shapes in epochs["uniform"]["shapes"]:
        sequence_counts.append(sum(int(np.prod(s[:-1])) for s in shapes.values() if len(s) > 1))
        lengths.append(max(int(s[-1]) for s in shapes.values() if len(s) > 1))
    sequences, length = int(np.median(sequence_counts)), int(np.median(lengths))
    _, train_s = time_encoder(pretrained.encoder, sequences, length, steps, warmup)
    encoder_tokens_per_s = sequences * length / train_s
    pipeline_tokens_per_s = timed["processed"] / timed["seconds"]
    report = {
        "method": method,
        "dialogues": dialogues,
        "examples": manifest["counts"]["examples"],
        "batch": batch,
        "max_length": max_length,
        "pipeline_examples_per_s": manifest["counts"]["examples"] / timed["seconds"],
        "pipeline_processed_tokens_per_s": pipeline_tokens_per_s,
        "encoder_train_tokens_per_s": encoder_tokens_per_s,
        "pipeline_vs_encoder": pipeline_tokens_per_s / encoder_tokens_per_s,
        "median_batch_shape": [sequences, length],
    }
    for name, epoch in epochs.items():
        report[f"padding_efficiency_{'max_length' if name == 'padded' else name}"] = epoch["real"] / epoch["processed"]
    return report


def format_report(report: Dict) -> str:
    return "\n".join([
        f"pipeline: {report['method']} examples from {report['dialogues']} demo dialogues "
        f"({report['examples']} examples), batch {report['batch']}, max_length {report['max_length']}",
        "  padding efficiency (real tokens / processed positions):",
        f"    uniform batches, dynamic padding (default): {report['padding_efficiency_uniform']:.1%}",
        f"    length-bucketed batches:                    {report['padding_efficiency_bucketed']:.1%}",
        f"    uniform batches padded to max_length:       {report['padding_efficiency_max_length']:.1%}",
        f"  processed positions per real token: uniform {1 / report['padding_efficiency_uniform']:.2f}, "
        f"bucketed {1 / report['padding_efficiency_bucketed']:.2f}, "
        f"max_length {1 / report['padding_efficiency_max_length']:.2f}",
        f"  pipeline: {report['pipeline_examples_per_s']:,.0f} examples/s, "
        f"{report['pipeline_processed_tokens_per_s']:,.0f} tokens/s",
        f"  encoder forward+backward on the median batch {report['median_batch_shape']}: "
        f"{report['encoder_train_tokens_per_s']:,.0f} tokens/s",
        f"  pipeline / encoder rate: {report['pipeline_vs_encoder']:.1f}x (above 1: the encoder is never starved)",
    ])
