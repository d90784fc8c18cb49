"""A seeded uniform permutation of a stream of serialized examples, in bounded memory.

A build writes its examples in this order, so the shards hold a random sample of the corpus
whatever the corpus' own order (dialogues grouped by domain, source or date), and every window of
the stream the training pipeline reads is a uniform sample, as a shuffled `DataLoader` draws.

Each record goes to one of `FANOUT` spill files chosen uniformly at random; each spill file is then
read back, shuffled in memory and emitted, the files in order. A uniform assignment to parts, a
uniform order within each part and the parts concatenated give a uniform permutation of the whole
stream (the two-pass "scatter" shuffle, Rao 1961; Sanders 1998): given the parts' sizes, each
part holds a uniformly random subset of the records in a uniformly random order. A spill file over
`max_bytes` is scattered the same way again, one level down, so memory holds at most `max_bytes`
of records whatever the corpus' size.
"""
import os
import shutil
import struct
import tempfile
from typing import Callable, Iterator, List, Sequence

import numpy as np

FANOUT = 64
"""Spill files per level: few enough open files, and a corpus of FANOUT x max_bytes in one level."""
MAX_BYTES = 32 * 2 ** 20
"""Records held in memory at once, at most (a spill file larger than this is split again)."""
_LENGTH = struct.Struct("<Q")
_DRAWS = 4096
"""Spill-file choices drawn at once."""
_SCATTER, _PERMUTE = 1, 2
"""What a random generator is for, part of its seed."""


class ExternalShuffle:
    """`add(record)` every record, then `drain(emit)` calls `emit(record)` for each in a uniformly
    random order fixed by `seed`. The spill files live in a temporary folder under `directory`,
    removed by `drain` or `close` (a with-block closes it)."""

    def __init__(self, directory: str, seed: int, max_bytes: int = MAX_BYTES, fanout: int = FANOUT):
        if fanout < 2:
            raise ValueError(f"fanout must be at least 2, got {fanout}")
        self.root = tempfile.mkdtemp(prefix=".shuffle-", dir=directory)
        self.seed = seed
        self.max_bytes = max_bytes
        self.fanout = fanout
        self._scatter = _Scatter(self.root, fanout, self._rng(_SCATTER, ()))

    def add(self, record: bytes) -> None:
        self._scatter.add(record)

    def drain(self, emit: Callable[[bytes], None]) -> None:
        """Emits every record added, in the shuffled order, then removes the spill files."""
        try:
            paths = self._scatter.close()
            self._drain(paths, (0,), emit)
        finally:
            self.close()

    def close(self) -> None:
        self._scatter.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rng(self, use: int, place: tuple) -> np.random.Generator:
        # The place's length is part of the seed: numpy's SeedSequence reads [s, 0] and [s, 0, 0]
        # alike, which would give a spill file the very draws that scattered its parent.
        return np.random.default_rng([self.seed, use, len(place), *place])

    def _drain(self, paths: Sequence[str], level: tuple, emit: Callable[[bytes], None]) -> None:
        # Each spill file's randomness is seeded by its place in the tree, so a build is repeatable.
        for index, path in enumerate(paths):
            place = level + (index,)
            if os.path.getsize(path) > self.max_bytes:
                folder = tempfile.mkdtemp(prefix="split-", dir=self.root)
                scatter = _Scatter(folder, self.fanout, self._rng(_SCATTER, place))
                for record in _read(path):
                    scatter.add(record)
                os.remove(path)
                self._drain(scatter.close(), place, emit)
                shutil.rmtree(folder, ignore_errors=True)
                continue
            records = list(_read(path))
            os.remove(path)
            for position in self._rng(_PERMUTE, place).permutation(len(records)):
                emit(records[position])


class _Scatter:
    """Appends each record to one of `fanout` files chosen uniformly at random."""

    def __init__(self, folder: str, fanout: int, rng: np.random.Generator):
        self.paths = [os.path.join(folder, f"part-{i:03d}") for i in range(fanout)]
        self.files = [open(p, "wb", buffering=64 * 1024) for p in self.paths]  # pylint: disable=consider-using-with
        self.rng = rng
        self.choices: List[int] = []

    def add(self, record: bytes) -> None:
        if not self.choices:
            self.choices = self.rng.integers(0, len(self.files), _DRAWS).tolist()[::-1]
        out = self.files[self.choices.pop()]
        out.write(_LENGTH.pack(len(record)))
        out.write(record)

    def close(self) -> List[str]:
        for file in self.files:
            file.close()
        return self.paths


def _read(path: str) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while True:
            header = f.read(_LENGTH.size)
            if not header:
                return
            (length,) = _LENGTH.unpack(header)
            yield f.read(length)
