r"""Speed benchmarks, reported as throughput and ratios measured in one run.

  python -m tfdialemb.bench --what=encoder --config=mini --seq_len=128 --batch=32

`--what=encoder` times the encoder with random weights: forward and forward+backward tokens/s, the
machine's dense float32 matmul FLOP/s measured the same way, and the model-FLOPs utilisation
(MFU) the encoder reaches against that measured peak.
"""
import json
import time

import numpy as np
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_enum("what", "encoder", ["encoder"], "What to benchmark.")
flags.DEFINE_enum("config", "mini", ["base", "mini", "tiny"],
                  "base: BERT-base (12 x 768); mini: MiniLM-L6 (6 x 384); tiny: 2 x 32.")
flags.DEFINE_integer("seq_len", 128, "Tokens per sequence.")
flags.DEFINE_integer("batch", 32, "Sequences per step.")
flags.DEFINE_integer("steps", 10, "Timed steps (after warm-up).")
flags.DEFINE_integer("warmup", 2, "Untimed steps that trace and warm caches.")
flags.DEFINE_integer("matmul_size", 2048, "Square matrix size for the matmul FLOP/s probe.")
flags.DEFINE_bool("jit_compile", False, "Compile the timed steps with XLA.")
flags.DEFINE_string("output", None, "Also write the figures to this JSON file.")

CONFIGS = {
    "base": dict(vocab_size=30522, hidden_size=768, num_layers=12, num_attention_heads=12,
                 intermediate_size=3072),
    "mini": dict(vocab_size=30522, hidden_size=384, num_layers=6, num_attention_heads=12,
                 intermediate_size=1536),
    "tiny": dict(vocab_size=1000, hidden_size=32, num_layers=2, num_attention_heads=4,
                 intermediate_size=128),
}


def encoder_flops_per_token(config, seq_len: int) -> float:
    """Forward multiply-adds ×2 per token: Q, K, V and output projections (8H²), the feed-forward
    block (4HI) and the attention scores and weighted sum (4TH), per layer."""
    h, i = config.hidden_size, config.intermediate_size
    return config.num_layers * (8 * h * h + 4 * h * i + 4 * seq_len * h)


def time_call(fn, steps: int, warmup: int) -> float:
    """Median seconds per call of `fn` (which must block until its result is ready)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def matmul_flops(shapes, steps: int, warmup: int) -> float:
    """Best dense float32 matmul FLOP/s over `shapes` [(m, k, n), ...]: the attainable peak."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    best = 0.0
    for m, k, n in shapes:
        a = tf.random.normal([m, k])
        b = tf.random.normal([k, n])
        matmul = tf.function(lambda a=a, b=b: tf.reduce_sum(tf.matmul(a, b)), autograph=False)
        seconds = time_call(lambda: matmul().numpy(), steps, warmup)
        best = max(best, 2.0 * m * k * n / seconds)
    return best


def bench_encoder(config_name, seq_len, batch, steps, warmup, matmul_size, jit_compile):
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.encoders import Encoder, EncoderConfig  # pylint: disable=import-outside-toplevel

    config = EncoderConfig(max_position_embeddings=max(512, seq_len), **CONFIGS[config_name])
    encoder = Encoder(config).build_variables()
    rng = np.random.default_rng(0)
    inputs = {
        "input_word_ids": tf.constant(rng.integers(5, config.vocab_size, [batch, seq_len]), tf.int32),
        "input_mask": tf.ones([batch, seq_len], tf.int32),
    }

    @tf.function(jit_compile=jit_compile, autograph=False)
    def forward():
        return tf.reduce_sum(encoder(inputs, training=False)["sequence_output"])

    @tf.function(jit_compile=jit_compile, autograph=False)
    def forward_backward():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(encoder(inputs, training=True)["sequence_output"] ** 2)
        grads = tape.gradient(loss, encoder.trainable_variables)
        return tf.add_n([tf.reduce_sum(tf.convert_to_tensor(g)) for g in grads if g is not None])

    tokens = batch * seq_len
    forward_s = time_call(lambda: forward().numpy(), steps, warmup)
    train_s = time_call(lambda: forward_backward().numpy(), steps, warmup)
    # The square probe and the encoder's own feed-forward shape; whichever runs faster is the peak.
    peak = matmul_flops(
        [(matmul_size,) * 3, (tokens, config.hidden_size, config.intermediate_size)], steps, warmup
    )
    per_token = encoder_flops_per_token(config, seq_len)
    return {
        "config": config_name,
        "layers": config.num_layers,
        "hidden": config.hidden_size,
        "seq_len": seq_len,
        "batch": batch,
        "jit_compile": jit_compile,
        "forward_tokens_per_s": tokens / forward_s,
        "forward_backward_tokens_per_s": tokens / train_s,
        "train_vs_forward_time_ratio": train_s / forward_s,
        "matmul_flops_per_s": peak,
        "forward_mfu": per_token * tokens / forward_s / peak,
        "forward_backward_mfu": 3 * per_token * tokens / train_s / peak,
    }


def format_report(report: dict) -> str:
    lines = [
        f"encoder {report['config']} ({report['layers']} layers x {report['hidden']}), "
        f"batch {report['batch']} x seq {report['seq_len']}, jit_compile={report['jit_compile']}",
        f"  forward:           {report['forward_tokens_per_s']:12,.0f} tokens/s   "
        f"MFU {report['forward_mfu']:.1%}",
        f"  forward+backward:  {report['forward_backward_tokens_per_s']:12,.0f} tokens/s   "
        f"MFU {report['forward_backward_mfu']:.1%}",
        f"  forward+backward / forward time: {report['train_vs_forward_time_ratio']:.2f}x "
        "(3x is the FLOP ratio)",
        f"  measured dense fp32 matmul peak: {report['matmul_flops_per_s'] / 1e9:,.1f} GFLOP/s",
    ]
    return "\n".join(lines)


def main(argv):
    del argv
    report = bench_encoder(FLAGS.config, FLAGS.seq_len, FLAGS.batch, FLAGS.steps, FLAGS.warmup,
                           FLAGS.matmul_size, FLAGS.jit_compile)
    print(format_report(report))
    if FLAGS.output:
        with open(FLAGS.output, "w") as f:
            json.dump(report, f, indent=2)


def run():
    app.run(main)


if __name__ == "__main__":
    run()
