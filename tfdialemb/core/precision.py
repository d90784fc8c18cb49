"""Mixed precision and XLA for the commands that build an encoder (train, pretrain, encode,
evaluate, export): their flags, defined once here, and what the flags switch.

Keras reads its global precision policy when a layer is built, so a command calls `apply` before
it builds or loads a model. Losses, similarities and the losses' softmaxes compute in float32
whatever the policy (each casts its inputs; attention's softmax runs in the policy's compute
dtype); float16 also needs loss scaling (`with_loss_scaling`).

Inference (`encode`, `evaluate`, `export`, validation during training) computes in float32 unless
asked otherwise (INFERENCE_POLICY): a reproduction's embeddings must be the checkpoint's own, and
bfloat16 moves MiniLM's mean-pooled embeddings by up to 1.5e-2. Training keeps `auto`, whose
bfloat16 on a capable CPU is about 1.5x faster per step; what it resolved to is printed and
recorded in method.json.
"""
import contextlib
import dataclasses

from absl import flags

from tfdialemb.core.options import Option

AUTO = "auto"
POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
INFERENCE_POLICY = "float32"
"""The default of every command that embeds or scores with a trained model."""
MIXED_PRECISION = Option(
    "mixed_precision", AUTO,
    "Keras precision policy: variables stay float32; mixed_float16 computes in float16 (GPUs; the "
    "training loss is scaled), mixed_bfloat16 in bfloat16 (recent GPUs, CPUs with AVX512_BF16 or "
    "AMX). auto: mixed_bfloat16 on a machine without GPUs whose CPU has them (about 1.5x the "
    "float32 tokens/s, embeddings within 2e-4 in cosine but up to 1.5e-2 apart: "
    "docs/distribution-and-precision.md), float32 otherwise. train and pretrain default to auto; encode, evaluate "
    "and export to float32, so that embeddings equal the checkpoint's.",
    choices=(AUTO,) + POLICIES)
JIT_COMPILE = Option(
    "jit_compile", False,
    "Compile with XLA: train and pretrain the training step (one device or GPU replicas), encode "
    "and export the encoder's forward pass (the tokenizer's string ops stay outside). XLA compiles "
    "once per input shape (encode and export pad widths to multiples of 32 tokens, within the "
    "encoder's positions); TF Serving runs an exported XLA graph on CPU only with "
    "--xla_cpu_compilation_enabled.")
BFLOAT16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
"""/proc/cpuinfo flags of CPUs that compute bfloat16 natively."""

_jit_compiled_encoders = False


def define_flags(default_policy: str = AUTO, jit_compile: bool = True) -> None:
    """Defines --mixed_precision (default `default_policy`) and, with `jit_compile`, --jit_compile."""
    dataclasses.replace(MIXED_PRECISION, default=default_policy).define()
    if jit_compile:
        JIT_COMPILE.define()


def resolve(policy: str) -> str:
    """`policy` itself, or for auto the policy it stands for on this machine."""
    if policy != AUTO:
        return policy
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    return "mixed_bfloat16" if cpu_computes_bfloat16() and not tf.config.list_physical_devices("GPU") else "float32"


def cpu_computes_bfloat16() -> bool:
    """Whether the CPU has bfloat16 instructions (Linux; False where /proc/cpuinfo is missing)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            words = set(f.read().split())
    except OSError:
        return False
    return any(flag in words for flag in BFLOAT16_CPU_FLAGS)


def apply(policy: str, jit_compile_encoders: bool = False) -> None:
    """Sets the Keras global policy (auto resolved) for the models built from now on, and whether
    encoders run their forward pass XLA-compiled (read when they are traced)."""
    import tf_keras  # pylint: disable=import-outside-toplevel

    global _jit_compiled_encoders  # pylint: disable=global-statement
    tf_keras.mixed_precision.set_global_policy(resolve(policy))
    _jit_compiled_encoders = jit_compile_encoders


@contextlib.contextmanager
def policy_scope(policy: str):
    """Within the block, models are built in `policy` (auto resolved); the global policy is
    restored after it."""
    import tf_keras  # pylint: disable=import-outside-toplevel

    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy(resolve(policy))
    try:
        yield
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)


def apply_flags() -> None:
    """`apply` with the command's --mixed_precision and --jit_compile (encode, export)."""
    apply(flags.FLAGS.mixed_precision, flags.FLAGS.jit_compile)


def exported_policy(function) -> str:
    """The policy a SavedModel signature `function` computes in, read from its graph: the 16-bit
    type its ops compute in (bfloat16 or float16), else float32."""
    from tensorflow.core.framework import types_pb2  # pylint: disable=import-outside-toplevel

    graph = function.graph.as_graph_def()
    nodes = list(graph.node) + [node for library_function in graph.library.function
                                for node in library_function.node_def]
    types = {value.type for node in nodes for value in node.attr.values()}
    if types_pb2.DT_BFLOAT16 in types:
        return "mixed_bfloat16"
    if types_pb2.DT_HALF in types:
        return "mixed_float16"
    return "float32"


def jit_compiled_encoders() -> bool:
    """Whether `apply` asked for XLA-compiled encoder forward passes."""
    return _jit_compiled_encoders


def with_loss_scaling(optimizer, compute_dtype: str):
    """`optimizer` wrapped in a dynamic LossScaleOptimizer when the model computes in float16,
    whose small gradients would underflow unscaled; `optimizer` itself otherwise."""
    import tf_keras  # pylint: disable=import-outside-toplevel

    if compute_dtype != "float16":
        return optimizer
    return tf_keras.mixed_precision.LossScaleOptimizer(optimizer)
