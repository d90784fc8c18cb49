"""The exact GELU, against Φ computed in float64 by Python's math.erf."""
import math

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.gelu import gelu

POINTS = np.array([-8.0, -3.5, -1.0, -0.25, 0.0, 0.3, 1.0, 2.5, 6.0])


def _phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def test_gelu_is_x_times_the_normal_cdf():
    expected = np.array([x * _phi(x) for x in POINTS])
    np.testing.assert_allclose(gelu(tf.constant(POINTS, tf.float32)).numpy(), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gelu(tf.constant(POINTS, tf.float32)).numpy(),
                               tf.nn.gelu(tf.constant(POINTS, tf.float32), approximate=False).numpy(), atol=1e-6)


def test_gelu_gradient_is_phi_plus_x_times_the_normal_density():
    x = tf.constant(POINTS, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = gelu(x)
    expected = np.array([_phi(v) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in POINTS])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_gelu_of_bfloat16_inputs_is_rounded_from_float32():
    """1 + erf(x/√2) in bfloat16 would be 3 % off at x = -2; computed wide, only the output's
    rounding to bfloat16 (8 bits) remains."""
    inputs = tf.constant(POINTS, tf.bfloat16)
    outputs = gelu(inputs)
    assert outputs.dtype == tf.bfloat16
    expected = np.array([x * _phi(x) for x in tf.cast(inputs, tf.float64).numpy()])
    np.testing.assert_allclose(tf.cast(outputs, tf.float64).numpy(), expected, rtol=2 ** -8, atol=1e-7)
