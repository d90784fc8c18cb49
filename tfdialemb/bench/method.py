"""A method's training step against the bare encoder on the same tokens.

The ratio (bare encoder forward+backward time / method step time) says how much the method's own
layers, loss and data handling cost on top of encoding: 1.0 means nothing. Both see identical
sequences (every non-empty context turn and candidate of the batch), the same frozen layers and
the same optimizer update.
"""
import os
import tempfile
from typing import Dict

from tfdialemb.bench.timing import time_call


def bench_mge(dialogues: int, batch: int, max_length: int, checkpoint: str, freeze_layers: int,
              steps: int = 5, warmup: int = 2, seed: int = 0) -> Dict:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    import tf_keras  # pylint: disable=import-outside-toplevel

    from data_prep.make_demo_corpus import generate  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.build import BuildOptions, build  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.pipeline import make_dataset  # pylint: disable=import-outside-toplevel
    from tfdialemb.dialogue import write_dialogues  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.mge import MatchingGuidedEmbeddingModel, select_context  # pylint: disable=import-outside-toplevel

    pretrained = load_pretrained(checkpoint)
    encoder = pretrained.encoder
    encoder.freeze_bottom(freeze_layers)
    model = MatchingGuidedEmbeddingModel(encoder)
    with tempfile.TemporaryDirectory(prefix="tfdialemb-bench-") as tmp:
        corpus = os.path.join(tmp, "demo.jsonl")
        write_dialogues(generate(dialogues, seed), corpus)
        built = os.path.join(tmp, "built")
        build(corpus, built, make_builder("mge", {"context_before": 3, "context_after": 3}),
              pretrained.tokenizer, BuildOptions(max_length=max_length, seed=seed, num_shards=1))
        batch_data = next(iter(make_dataset(built, batch, training=True, seed=seed)))
    context, context_mask, _ = select_context(
        batch_data["context_before"], batch_data["context_before_mask"], batch_data["context_after"],
        batch_data["context_after_mask"], model.turns, model.variant)
    candidates = batch_data["candidates"][:, : model.negatives + 1]
    candidates_mask = batch_data["candidates_mask"][:, : model.negatives + 1]
    # The very sequences MGE encodes: non-empty context turns and the candidates.
    sequences = _non_empty_rows([(context, context_mask), (candidates, candidates_mask)])
    optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-5, weight_decay=0.0)
    method_optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-5, weight_decay=0.0)

    @tf.function
    def method_step():
        with tf.GradientTape() as tape:
            losses, _ = model.per_example_loss(batch_data, training=True)
            loss = tf.reduce_mean(losses)
        variables = model.trainable_variables
        grads = tape.gradient(loss, variables)
        method_optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
        return loss

    @tf.function
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

    method_s = time_call(lambda: method_step().numpy(), steps, warmup)
    encoder_s = time_call(lambda: encoder_step().numpy(), steps, warmup)
    tokens = int(sum(int(tf.reduce_sum(m)) for _, m in sequences))
    return {
        "method": "mge",
        "batch": batch,
        "sequences": int(sum(int(ids.shape[0]) for ids, _ in sequences)),
        "real_tokens": tokens,
        "freeze_layers": freeze_layers,
        "method_step_s": method_s,
        "encoder_step_s": encoder_s,
        "method_tokens_per_s": tokens / method_s,
        "encoder_tokens_per_s": tokens / encoder_s,
        "throughput_ratio": encoder_s / method_s,
    }


def _non_empty_rows(stacks):
    """Each [B, R, T] stack flattened to its non-empty rows, as the method encodes them."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    out = []
    for ids, mask in stacks:
        flat_ids = tf.reshape(ids, [-1, tf.shape(ids)[-1]])
        flat_mask = tf.reshape(mask, [-1, tf.shape(mask)[-1]])
        present = tf.reduce_any(flat_mask > 0, axis=-1)
        out.append((tf.boolean_mask(flat_ids, present), tf.boolean_mask(flat_mask, present)))
    return out


def format_report(report: Dict) -> str:
    return "\n".join([
        f"mge training step: batch {report['batch']} ({report['sequences']} sequences, "
        f"{report['real_tokens']} real tokens), bottom {report['freeze_layers']} layers frozen",
        f"  MGE step:                        {report['method_step_s'] * 1000:8.1f} ms "
        f"({report['method_tokens_per_s']:,.0f} tokens/s)",
        f"  bare encoder fwd+bwd, same rows: {report['encoder_step_s'] * 1000:8.1f} ms "
        f"({report['encoder_tokens_per_s']:,.0f} tokens/s)",
        f"  throughput ratio (encoder time / MGE step time): {report['throughput_ratio']:.2f}",
    ])
