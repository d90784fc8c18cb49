"""Timing helpers shared by the benchmarks: median wall time and the attainable matmul rate."""
import time
from typing import Callable, Sequence, Tuple

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


def time_alternating(first, second, steps: int, warmup: int) -> Tuple[float, float]:
    """Median seconds per call of `first` and of `second`, timed in alternation so that a change
    in the machine's load during the run weighs on both alike."""
    return time_in_turns((first, second), steps, warmup)


def time_in_turns(calls: Sequence[Callable[[], object]], steps: int, warmup: int) -> Tuple[float, ...]:
    """Median seconds per call of each of `calls`, called in turn `steps` times (after `warmup`
    untimed turns), so that a change in the machine's load weighs on all alike."""
    for _ in range(warmup):
        for call in calls:
            call()
    rounds = [tuple(time_call(call, 1, 0) for call in calls) for _ in range(steps)]
    return tuple(float(t) for t in np.median(rounds, axis=0))
