"""Encoder speed: forward and forward+backward tokens/s with random weights, and the model-FLOPs
utilisation (MFU) against the machine's dense matmul rate measured in the same run."""
import numpy as np

from tfdialemb.bench.timing import matmul_flops, time_call

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


def time_encoder(encoder, batch: int, seq_len: int, steps: int, warmup: int, jit_compile: bool = False):
    """Median seconds of a forward and of a forward+backward pass on random [batch, seq_len] ids."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    rng = np.random.default_rng(0)
    vocab_size = encoder.encoder_config.vocab_size
    inputs = {
        "input_word_ids": tf.constant(rng.integers(5, vocab_size, [batch, seq_len]), tf.int32),
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

    forward_s = time_call(lambda: forward().numpy(), steps, warmup)
    train_s = time_call(lambda: forward_backward().numpy(), steps, warmup)
    return forward_s, train_s


def bench_encoder(config_name, seq_len, batch, steps, warmup, matmul_size, jit_compile):
    from tfdialemb.encoders import Encoder, EncoderConfig  # pylint: disable=import-outside-toplevel

    config = EncoderConfig(max_position_embeddings=max(512, seq_len), **CONFIGS[config_name])
    encoder = Encoder(config).build_variables()
    forward_s, train_s = time_encoder(encoder, batch, seq_len, steps, warmup, jit_compile)
    tokens = batch * seq_len
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
