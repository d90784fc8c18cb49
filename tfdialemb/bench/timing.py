"""Timing helpers shared by the benchmarks: median wall time and the attainable matmul rate."""
import time

import numpy as np


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
