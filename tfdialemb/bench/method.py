"""A method's training step against the bare encoder on the same tokens, for any registered method,
and its cost on uniform batches (training's default) against batches grouped by length.

The ratio (bare encoder forward+backward time / method step time) says how much the method's own
layers, loss and data handling cost on top of encoding: 1.0 means nothing. Both see identical
sequences (each spec's `bench_sequences`: MGE the chosen context turns and the candidates,
dial2vec every sample of every dialogue), the same frozen layers and the same optimizer update.
The batch orders are compared on the same examples: the first `steps` uniform batches against
those examples sorted by length into as many batches, timed in turns, so the ratio is what
uniform batches cost over grouping by length and nothing else.
"""
import tempfile
from typing import Dict, List, Sequence, Tuple

import numpy as np

from tfdialemb.bench.demo_data import demo_build, padding_feeds, same_example_feeds
from tfdialemb.bench.pipeline import batch_tokens
from tfdialemb.bench.timing import time_alternating, time_in_turns
from tfdialemb.data.examples import make_builder
from tfdialemb.methods.spec import TrainingRun


ORDER_ROUNDS = 3
"""Timed passes over each batch order's `steps` batches (a pass is `steps` training steps)."""


def training_step(model, optimizer):
    """The method's update the benchmarks time: its mean per-example loss on a batch, then one step
    of `optimizer` on the trainable variables that get a gradient."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    def step(batch):
        with tf.GradientTape() as tape:
            losses, _ = model.per_example_loss(batch, training=True)
            loss = tf.reduce_mean(losses)
        variables = model.trainable_variables
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
        return loss

    return step


def time_steps(model, batch: Dict, sequences: List[Tuple], steps: int, warmup: int) -> Dict:
    """Median seconds of `model`'s training step on `batch` and of its encoder's forward+backward
    on `sequences` [(ids [N, T], mask [N, T]), ...], each followed by an AdamW update. One eager
    forward pass first makes every variable a method creates lazily (e.g. Keras heads)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    import tf_keras  # pylint: disable=import-outside-toplevel

    encoder = model.encoder
    model.per_example_loss(batch, training=False)
    optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-5, weight_decay=0.0)
    method_optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-5, weight_decay=0.0)
    # Slots made up front: a first call that creates variables would trace each step twice.
    optimizer.build(encoder.trainable_variables)
    method_optimizer.build(model.trainable_variables)

    update = training_step(model, method_optimizer)
    method_step = tf.function(lambda: update(batch), autograph=False)

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


def time_batch_orders(model, orders: Dict[str, Tuple[Sequence[Dict], int]], steps: int,
                      warmup: int) -> Dict[str, float]:
    """Median seconds per training step of `model` over each list of batches in `orders` (name:
    (batches, the encoder's `row_groups`), every list as long), passes over the lists timed in
    turns; one trace with open dimensions per order serves every batch shape, as in training."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    import tf_keras  # pylint: disable=import-outside-toplevel

    optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-5, weight_decay=0.0)
    first = next(iter(orders.values()))[0][0]
    model.per_example_loss(first, training=False)
    optimizer.build(model.trainable_variables)

    signature = {name: tf.TensorSpec([None] * value.shape.rank, value.dtype) for name, value in first.items()}
    encoder, default_groups = model.encoder, model.encoder.row_groups
    passes = []
    for batches, row_groups in orders.values():
        step = tf.function(training_step(model, optimizer), autograph=False, input_signature=[signature])
        encoder.row_groups = row_groups
        step.get_concrete_function()  # traced now, with this setting
        encoder.row_groups = default_groups
        passes.append(lambda step=step, batches=batches: [step(batch).numpy() for batch in batches])
    seconds = time_in_turns(passes, steps, warmup)
    return {name: pass_s / len(batches) for (name, (batches, _)), pass_s in zip(orders.items(), seconds)}


def bench_method(spec, dialogues: int, batch: int, max_length: int, checkpoint: str, freeze_layers: int,
                 steps: int = 5, warmup: int = 1, seed: int = 0, params=None) -> Dict:
    """`spec`'s training step on one uniform batch of its examples (built from `dialogues` demo
    dialogues) against the bare encoder's forward+backward on the sequences the step encodes
    (`MethodSpec.bench_sequences`); the step's time on the first `steps` uniform batches against
    the same examples sorted by length into `steps` batches; and the padding efficiency of an
    epoch of batches: uniform, length-bucketed, and uniform padded to `max_length` (what the
    released dial2vec code does at 512)."""
    from tfdialemb.data.build import BuildOptions  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.checkpoint import load_pretrained  # pylint: disable=import-outside-toplevel

    params = spec.resolve(params)
    run = TrainingRun(checkpoint, batch, max_length, seed)
    pretrained = load_pretrained(checkpoint, **spec.encoder_options(params))
    pretrained.encoder.freeze_bottom(freeze_layers)
    model = spec.make_model(pretrained.encoder, params)
    options = BuildOptions(max_length=max_length, seed=seed, num_shards=1, **spec.build_options(params))
    with tempfile.TemporaryDirectory(prefix="tfdialemb-bench-") as tmp:
        built = demo_build(tmp, dialogues, make_builder(spec.builder, spec.builder_params(params)),
                           pretrained.tokenizer, options)
        feeds = padding_feeds(built, batch, seed, max_length)
        positions = {name: _epoch_tokens(dataset) for name, dataset in feeds.items()}
        same = same_example_feeds(built, batch, steps)
        timed = {name: _epoch_tokens(dataset) for name, dataset in same.items()}
        uniform, length_sorted = (list(spec.batches(same[name], pretrained.tokenizer, params, run))
                                  for name in ("uniform", "length_sorted"))
    batch_data = uniform[0]
    sequences = spec.bench_sequences(batch_data, params)
    report = {"method": spec.name, "batch": batch, "freeze_layers": freeze_layers, "max_length": max_length,
              "dialogues": dialogues}
    report.update(time_steps(model, batch_data, sequences, steps, warmup))
    groups = model.encoder.row_groups
    per_step = time_batch_orders(model, {"uniform": (uniform, groups), "length_sorted": (length_sorted, groups),
                                         "uniform_one_call": (uniform, 1)}, ORDER_ROUNDS, min(warmup, 1))
    report.update({"row_groups": groups, "uniform_step_s": per_step["uniform"],
                   "length_sorted_step_s": per_step["length_sorted"],
                   "uniform_one_call_step_s": per_step["uniform_one_call"],
                   "uniform_vs_length_sorted_step": per_step["uniform"] / per_step["length_sorted"],
                   "one_call_vs_row_groups_step": per_step["uniform_one_call"] / per_step["uniform"],
                   "timed_batches": len(uniform)})
    for name, (real, processed) in timed.items():
        report[f"timed_padding_efficiency_{name}"] = real / processed
    for name, (real, processed) in positions.items():
        report[f"padding_efficiency_{name}"] = real / processed
    report["processed_positions_padded_vs_uniform"] = positions["padded"][1] / positions["uniform"][1]
    return report


def _epoch_tokens(dataset) -> Tuple[int, int]:
    """(real tokens, processed positions) over one pass of `dataset`."""
    real, processed = np.sum([batch_tokens(batch) for batch in dataset], axis=0)
    return int(real), int(processed)


def format_report(report: Dict) -> str:
    name = report["method"]
    return "\n".join([
        f"{name} training step: batch {report['batch']} ({report['sequences']} sequences, "
        f"{report['real_tokens']} real tokens in {report['processed_positions']} positions), bottom "
        f"{report['freeze_layers']} layers frozen, max_length {report['max_length']}",
        f"  {name} step:{' ' * (27 - len(name))}{report['method_step_s'] * 1000:8.1f} ms "
        f"({report['method_tokens_per_s']:,.0f} tokens/s)",
        f"  bare encoder fwd+bwd, same rows: {report['encoder_step_s'] * 1000:8.1f} ms "
        f"({report['encoder_tokens_per_s']:,.0f} tokens/s)",
        f"  throughput ratio (encoder time / {name} step time): {report['throughput_ratio']:.2f}",
        f"  {name} step on the examples of the first {report['timed_batches']} uniform batches, median per step:",
        f"    uniform batches (default):       {report['uniform_step_s'] * 1000:8.1f} ms "
        f"({report['timed_padding_efficiency_uniform']:.1%} real tokens)",
        f"    the same sorted by length:       {report['length_sorted_step_s'] * 1000:8.1f} ms "
        f"({report['timed_padding_efficiency_length_sorted']:.1%} real tokens)",
        f"    uniform / sorted by length:      {report['uniform_vs_length_sorted_step']:8.2f}x",
        f"    uniform, rows in one encoder call instead of {report['row_groups']} length groups: "
        f"{report['uniform_one_call_step_s'] * 1000:.1f} ms ({report['one_call_vs_row_groups_step']:.2f}x)",
        f"  padding efficiency of an epoch over {report['dialogues']} demo dialogues (real tokens / positions):",
        f"    uniform batches, dynamic padding (default): {report['padding_efficiency_uniform']:6.1%}",
        f"    length-bucketed batches:                    {report['padding_efficiency_bucketed']:6.1%}",
        f"    {'uniform batches padded to max_length ' + str(report['max_length']) + ':':<43} "
        f"{report['padding_efficiency_padded']:6.1%}",
        f"  processed positions, padding to {report['max_length']} / dynamic padding: "
        f"{report['processed_positions_padded_vs_uniform']:.2f}x",
    ])
