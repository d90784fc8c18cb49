"""Pieces every command-line tool shares: progress bars and atomic output files."""
import os
import sys
import time

import numpy as np

from tfdialemb.files import atomic_open


class Progress:
    """A one-line progress bar on stderr: done/total, rate and time left."""

    def __init__(self, total: int, unit: str = "items", stream=None):
        self.total = total
        self.unit = unit
        self.done = 0
        self.start = time.perf_counter()
        self.stream = stream or sys.stderr

    def advance(self, count: int) -> None:
        self.done += count
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate else 0.0
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        self.stream.write(
            f"\r[{'=' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {self.unit} "
            f"{rate:.1f}/s, {left:.0f}s left"
        )
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def save_npy_atomic(path: str, array: np.ndarray) -> None:
    """Writes `path` only once complete, so an interrupted run leaves no partial file."""
    with atomic_open(path, "wb") as f:
        np.save(f, array)


def read_lines(path: str) -> list:
    """Non-empty lines of a UTF-8 text file; a clear error for a missing, empty or binary file."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: input file does not exist")
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\n").rstrip("\r") for line in f]
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e})") from None
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise ValueError(f"{path}: has no non-empty lines to encode")
    return lines
