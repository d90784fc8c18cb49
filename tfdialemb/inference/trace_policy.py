"""When to trace an inference function: only once tracing pays for itself.

Tracing the tokenizer and encoder into one graph costs about as much as 16 eager calls of the
same Python body (all-MiniLM-L6-v2 on one CPU thread: 1.4 s against 0.08 s a call; eager and
traced calls give the same embeddings), after which a traced call is ~10x cheaper. A one-off
embedding of a few sentences should not pay the trace; a long run should pay it at once.
"""
from typing import Callable

TRACE_COST_IN_EAGER_CALLS = 16
"""Eager calls that cost about as much as one trace (see the module docstring)."""


class TraceWhenWorthIt:
    """The ski-rental rule between eager calls of a tf.function's Python body and its trace.

    Before each run of calls the caller says how many are coming (`for_calls(n)`) and calls what
    it gets back: the eager body while the eager calls made so far plus these n stay within
    `break_even`, the traced function from the first run that would pass it, and ever after. No
    sequence of runs costs more than about twice what the better choice, known in advance, costs.

    Args:
      traced: the tf.function, bound to its object (`self.embed_batch`).
      break_even: eager calls that cost as much as tracing.
    """

    def __init__(self, traced, break_even: int = TRACE_COST_IN_EAGER_CALLS):
        self._traced = traced
        self._eager = traced.python_function
        self._break_even = break_even
        self._eager_calls = 0
        self._tracing = False

    def for_calls(self, calls: int) -> Callable:
        """What to call for the next `calls` calls."""
        if not self._tracing and self._eager_calls + calls <= self._break_even:
            self._eager_calls += calls
            return self._eager
        self._tracing = True
        return self._traced

    def for_batches(self, items: int, batch_size: int) -> Callable:
        """What to call for a run over `items` items in batches of `batch_size`."""
        return self.for_calls(batch_count(items, batch_size))


def batch_count(items: int, batch_size: int) -> int:
    """How many batches of `batch_size` hold `items`; a ValueError for a batch size below 1."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    return -(-items // batch_size)
