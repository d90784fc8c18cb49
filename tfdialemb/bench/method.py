"""A method's training step against the bare encoder on the same tokens.

The ratio (bare encoder forward+backward time / method step time) says how much the method's own
layers, loss and data handling cost on top of encoding: 1.0 means nothing. Both see identical
sequences, the same frozen layers and the same optimizer update; each method chooses which
sequences those are: MGE the non-empty context turns and the candidates, dial2vec every sample
of every dialogue ([B·S, T]).

dial2vec is also measured against the released code's input: every packed dialogue padded to 512
tokens (REFERENCE_CODE_NOTES 1.2), where the library feeds length-bucketed, dynamically padded
batches of the same build.
"""
import tempfile
from typing import Dict, List, Tuple

import numpy as np

from tfdialemb.bench.pipeline import batch_tokens
from tfdialemb.bench.demo_data import demo_build, padding_feeds
from tfdialemb.bench.timing import time_alternating

REFERENCE_PAD_LENGTH = 512
"""dial2vec's released data provider pads every dialogue to max_seq_length 512 (REFERENCE_CODE_NOTES 1.2)."""


def time_steps(model, batch: Dict, sequences: List[Tuple], steps: int, warmup: int) -> Dict:
    """Median seconds of `model`'s training step on `batch` and of its encoder's forward+backward
    on `sequences` [(ids [N, T], mask [N, T]), ...], each followed by an AdamW update. The model's
    variables must exist before its first step (MGE and dial2vec make them at construction)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    import tf_keras  # pylint: disable=import-outside-toplevel

    encoder = model.encoder
    optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-5, weight_decay=0.0)
    method_optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-5, weight_decay=0.0)
    # Slots made up front: a first call that creates variables would trace each step twice.
    optimizer.build(encoder.trainable_variables)
    method_optimizer.build(model.trainable_variables)

    @tf.function(autograph=False)
    def method_step():
        with tf.GradientTape() as tape:
            losses, _ = model.per_example_loss(batch, training=True)
            loss = tf.reduce_mean(losses)
        variables = model.trainable_variables
        grads = tape.gradient(loss, variables)
        method_optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
        return loss

    @tf.function(autograph=False)
    def encoder_step():
        results = []
        with tf.GradientTape() as tape:
            for ids, mask in sequences:
                states = encoder({"input_word_ids": ids, "input_mask": mask}, training=True)["sequence_output"]
                results.append(tf.reduce_mean(states))
            loss = tf.add_n(results)
        variables = encoder.trainable_variables
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
        return loss

    method_s, encoder_s = time_alternating(lambda: method_step().numpy(), lambda: encoder_step().numpy(),
                                           steps, warmup)
    tokens = int(sum(int(tf.reduce_sum(mask)) for _, mask in sequences))
    return {
        "sequences": int(sum(int(ids.shape[0]) for ids, _ in sequences)),
        "real_tokens": tokens,
        "processed_positions": int(sum(int(tf.size(ids)) for ids, _ in sequences)),
        "method_step_s": method_s,
        "encoder_step_s": encoder_s,
        "method_tokens_per_s": tokens / method_s,
        "encoder_tokens_per_s": tokens / encoder_s,
        "throughput_ratio": encoder_s / method_s,
    }


def bench_mge(dialogues: int, batch: int, max_length: int, checkpoint: str, freeze_layers: int,
              steps: int = 5, warmup: int = 2, seed: int = 0) -> Dict:
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.pipeline import make_dataset  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.mge import MatchingGuidedEmbeddingModel, select_context  # pylint: disable=import-outside-toplevel

    pretrained = load_pretrained(checkpoint)
    pretrained.encoder.freeze_bottom(freeze_layers)
    model = MatchingGuidedEmbeddingModel(pretrained.encoder)
    with tempfile.TemporaryDirectory(prefix="tfdialemb-bench-") as tmp:
        built = demo_build(tmp, dialogues, make_builder("mge", {"context_before": 3, "context_after": 3}),
                           pretrained.tokenizer, max_length, seed)
        batch_data = next(iter(make_dataset(built, batch, training=True, seed=seed)))
    context, context_mask, _ = select_context(
        batch_data["context_before"], batch_data["context_before_mask"], batch_data["context_after"],
        batch_data["context_after_mask"], model.turns, model.variant)
    candidates = batch_data["candidates"][:, : model.negatives + 1]
    candidates_mask = batch_data["candidates_mask"][:, : model.negatives + 1]
    # The very sequences MGE encodes: non-empty context turns and the candidates.
    sequences = [_non_empty_rows(context, context_mask), _non_empty_rows(candidates, candidates_mask)]
    report = {"method": "mge", "batch": batch, "freeze_layers": freeze_layers}
    report.update(time_steps(model, batch_data, sequences, steps, warmup))
    return report


def bench_dial2vec(dialogues: int, batch: int, max_length: int, checkpoint: str, freeze_layers: int,
                   negatives: int = 9, steps: int = 5, warmup: int = 1, seed: int = 0,
                   reference_length: int = REFERENCE_PAD_LENGTH) -> Dict:
    """The dial2vec step on one length-bucketed batch of `batch` dialogues × (1 + `negatives`)
    samples, and the padding efficiency of the whole build's batches, bucketed, dynamically
    padded without buckets, and padded to `reference_length`."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.dial2vec import Dial2vecModel  # pylint: disable=import-outside-toplevel

    if reference_length < max_length:
        raise ValueError(f"reference_length ({reference_length}) must be at least max_length "
                         f"({max_length}): the reference pads dialogues the build may keep at max_length")
    pretrained = load_pretrained(checkpoint)
    pretrained.encoder.freeze_bottom(freeze_layers)
    model = Dial2vecModel(pretrained.encoder, negatives=negatives)  # the paper's τ 0.2 and w 10
    with tempfile.TemporaryDirectory(prefix="tfdialemb-bench-") as tmp:
        built = demo_build(tmp, dialogues, make_builder("dial2vec", {"negatives": negatives}),
                           pretrained.tokenizer, max_length, seed)
        feeds = padding_feeds(built, batch, seed, reference_length)
        positions = {name: _epoch_tokens(dataset) for name, dataset in feeds.items()}
        batch_data = next(iter(feeds["bucketed"]))
    samples = negatives + 1
    ids = tf.reshape(batch_data["samples"][:, :samples], [-1, tf.shape(batch_data["samples"])[-1]])
    mask = tf.reshape(batch_data["samples_mask"][:, :samples], tf.shape(ids))
    report = {
        "method": "dial2vec",
        "batch": batch,
        "samples": samples,
        "batch_shape": [int(n) for n in batch_data["samples"][:, :samples].shape],
        "freeze_layers": freeze_layers,
        "max_length": max_length,
        "dialogues": dialogues,
        "reference_length": reference_length,
    }
    report.update(time_steps(model, batch_data, [(ids, mask)], steps, warmup))
    for name, (real, processed) in positions.items():
        report[f"padding_efficiency_{name}"] = real / processed
    report["processed_positions_reference_vs_bucketed"] = positions["padded"][1] / positions["bucketed"][1]
    return report


def _epoch_tokens(dataset) -> Tuple[int, int]:
    """(real tokens, processed positions) over one pass of `dataset`."""
    real, processed = np.sum([batch_tokens(batch) for batch in dataset], axis=0)
    return int(real), int(processed)


def _non_empty_rows(ids, mask):
    """A [B, R, T] stack flattened to its non-empty rows, as MGE encodes them."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    flat_ids = tf.reshape(ids, [-1, tf.shape(ids)[-1]])
    flat_mask = tf.reshape(mask, [-1, tf.shape(mask)[-1]])
    present = tf.reduce_any(flat_mask > 0, axis=-1)
    return tf.boolean_mask(flat_ids, present), tf.boolean_mask(flat_mask, present)


def _step_lines(report: Dict, name: str) -> List[str]:
    return [
        f"  {name} step:{' ' * (27 - len(name))}{report['method_step_s'] * 1000:8.1f} ms "
        f"({report['method_tokens_per_s']:,.0f} tokens/s)",
        f"  bare encoder fwd+bwd, same rows: {report['encoder_step_s'] * 1000:8.1f} ms "
        f"({report['encoder_tokens_per_s']:,.0f} tokens/s)",
        f"  throughput ratio (encoder time / {name} step time): {report['throughput_ratio']:.2f}",
    ]


def format_report(report: Dict) -> str:
    if report["method"] == "mge":
        return "\n".join([
            f"mge training step: batch {report['batch']} ({report['sequences']} sequences, "
            f"{report['real_tokens']} real tokens), bottom {report['freeze_layers']} layers frozen",
        ] + _step_lines(report, "MGE"))
    batch, samples, length = report["batch_shape"]
    return "\n".join([
        f"dial2vec training step: {batch} dialogues x {samples} samples x {length} tokens "
        f"({report['sequences']} sequences, {report['real_tokens']} real tokens in "
        f"{report['processed_positions']} positions), bottom "
        f"{report['freeze_layers']} layers frozen, max_length {report['max_length']}",
    ] + _step_lines(report, "dial2vec") + [
        f"  padding efficiency over {report['dialogues']} demo dialogues (real tokens / processed positions):",
        f"    length bucketing + dynamic padding (ours): {report['padding_efficiency_bucketed']:6.1%}",
        f"    dynamic padding, no buckets:               {report['padding_efficiency_dynamic']:6.1%}",
        f"    every dialogue padded to {report['reference_length']:<5d} (released): "
        f"{report['padding_efficiency_padded']:6.1%}",
        f"  processed positions, padding to {report['reference_length']} / ours: "
        f"{report['processed_positions_reference_vs_bucketed']:.2f}x",
    ])
