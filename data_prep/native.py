"""Helpers every converter shares for reading native corpus files."""
import os
from typing import Iterator, List, Sequence, Tuple

from tfdialemb.dialogue import ErrorPolicy, Turn


def iter_lines(path: str, errors: ErrorPolicy) -> Iterator[Tuple[int, str]]:
    """(1-based line number, line without its newline) for each UTF-8 line of `path`.

    A line that is not UTF-8 goes to `errors`; blank lines are passed on for the caller to judge.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: input file does not exist")
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                errors.report(path, number, f"not UTF-8 (byte {e.start}: {raw[e.start:e.start + 1]!r})")
                continue
            yield number, text.rstrip("\n").rstrip("\r")


def alternate_speakers(texts: Sequence[str], names: Sequence[str] = ("A", "B")) -> List[Turn]:
    """Turns for corpora that do not record speakers: the speakers alternate, starting with A."""
    return [Turn(names[i % len(names)], text) for i, text in enumerate(texts)]
