"""Encoder speed: forward and forward+backward tokens/s with random weights, and the model-FLOPs
utilisation (MFU) against the machine's dense matmul rate measured in the same run; optionally a
mixed-precision policy against float32 on the same weights and inputs."""
import numpy as np

from tfdialemb.bench.timing import matmul_flops, time_alternating, time_call
from tfdialemb.encoders.config import EncoderConfig
from tfdialemb.core.similarity import paired_cosine

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


def random_inputs(vocab_size: int, batch: int, seq_len: int) -> dict:
    """Encoder inputs of random [batch, seq_len] ids past the special tokens, nothing padded."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    rng = np.random.default_rng(0)
    return {
        "input_word_ids": tf.constant(rng.integers(5, vocab_size, [batch, seq_len]), tf.int32),
        "input_mask": tf.ones([batch, seq_len], tf.int32),
    }


def encoder_passes(encoder, inputs: dict, jit_compile: bool = False):
    """(forward, forward+backward): calls that run one pass over `inputs` and wait for it."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    @tf.function(jit_compile=jit_compile, autograph=False)
    def forward():
        return tf.reduce_sum(encoder(inputs, training=False)["sequence_output"])

    @tf.function(jit_compile=jit_compile, autograph=False)
    def forward_backward():
        with tf.GradientTape() as tape:
            states = tf.cast(encoder(inputs, training=True)["sequence_output"], tf.float32)
            loss = tf.reduce_sum(states ** 2)
        grads = tape.gradient(loss, encoder.trainable_variables)
        return tf.add_n([tf.reduce_sum(tf.convert_to_tensor(g)) for g in grads if g is not None])

    return (lambda: forward().numpy()), (lambda: forward_backward().numpy())


def time_encoder(encoder, batch: int, seq_len: int, steps: int, warmup: int, jit_compile: bool = False):
    """Median seconds of a forward and of a forward+backward pass on random [batch, seq_len] ids."""
    forward, forward_backward = encoder_passes(
        encoder, random_inputs(encoder.encoder_config.vocab_size, batch, seq_len), jit_compile)
    return time_call(forward, steps, warmup), time_call(forward_backward, steps, warmup)


def compare_precision(encoder, policy: str, inputs: dict, steps: int, warmup: int, jit_compile: bool) -> dict:
    """Seconds per forward and forward+backward pass of float32 `encoder` and of a copy built under
    `policy`, each pair timed in alternation, and the cosines between their mean-pooled embeddings
    of `inputs`: what the policy gains in speed and costs in accuracy."""
    import tf_keras  # pylint: disable=import-outside-toplevel

    from tfdialemb.encoders.encoder import Encoder  # pylint: disable=import-outside-toplevel

    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy(policy)
    try:
        mixed = Encoder(encoder.encoder_config).build_variables()
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)
    mixed.set_weights(encoder.get_weights())
    forward, forward_backward = encoder_passes(encoder, inputs, jit_compile)
    mixed_forward, mixed_forward_backward = encoder_passes(mixed, inputs, jit_compile)
    forward_s, mixed_forward_s = time_alternating(forward, mixed_forward, steps, warmup)
    train_s, mixed_train_s = time_alternating(forward_backward, mixed_forward_backward, steps, warmup)
    cosines = paired_cosine(encoder.embed(inputs, training=False), mixed.embed(inputs, training=False)).numpy()
    return {"forward_s": forward_s, "train_s": train_s, "mixed_forward_s": mixed_forward_s,
            "mixed_train_s": mixed_train_s, "cosine_mean": float(cosines.mean()), "cosine_min": float(cosines.min())}


def bench_encoder(config_name, seq_len, batch, steps, warmup, matmul_size, jit_compile,
                  mixed_precision: str = "float32"):
    """The encoder report; a `mixed_precision` other than float32 adds its comparison with float32
    (`compare_precision`), whose float32 timings are then the report's."""
    from tfdialemb.encoders.encoder import Encoder  # pylint: disable=import-outside-toplevel

    config = EncoderConfig(max_position_embeddings=max(512, seq_len), **CONFIGS[config_name])
    encoder = Encoder(config).build_variables()
    tokens = batch * seq_len
    mixed = {}
    if mixed_precision == "float32":
        forward_s, train_s = time_encoder(encoder, batch, seq_len, steps, warmup, jit_compile)
    else:
        comparison = compare_precision(encoder, mixed_precision, random_inputs(config.vocab_size, batch, seq_len),
                                       steps, warmup, jit_compile)
        forward_s, train_s = comparison["forward_s"], comparison["train_s"]
        mixed = {
            "mixed_precision": mixed_precision,
            "mixed_forward_tokens_per_s": tokens / comparison["mixed_forward_s"],
            "mixed_forward_backward_tokens_per_s": tokens / comparison["mixed_train_s"],
            "mixed_forward_speedup": forward_s / comparison["mixed_forward_s"],
            "mixed_forward_backward_speedup": train_s / comparison["mixed_train_s"],
            "mixed_embedding_cosine_mean": comparison["cosine_mean"],
            "mixed_embedding_cosine_min": comparison["cosine_min"],
        }
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
        **mixed,
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
    if "mixed_precision" in report:
        lines += [
            f"  {report['mixed_precision']} vs float32 (same weights and inputs, timed in alternation):",
            f"    forward:           {report['mixed_forward_tokens_per_s']:12,.0f} tokens/s   "
            f"{report['mixed_forward_speedup']:.2f}x float32",
            f"    forward+backward:  {report['mixed_forward_backward_tokens_per_s']:12,.0f} tokens/s   "
            f"{report['mixed_forward_backward_speedup']:.2f}x float32",
            f"    cosine to float32's mean-pooled embeddings: mean {report['mixed_embedding_cosine_mean']:.5f}, "
            f"min {report['mixed_embedding_cosine_min']:.5f}",
        ]
    return "\n".join(lines)
