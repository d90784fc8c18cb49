"""Helpers every converter shares for reading native corpus files."""
from typing import List, Sequence

# Re-exported: converters read their line-based files exactly as the canonical reader does.
from tfdialemb.dialogue import Turn, iter_lines  # noqa: F401


def alternate_speakers(texts: Sequence[str], names: Sequence[str] = ("A", "B")) -> List[Turn]:
    """Turns for corpora that do not record speakers: the speakers alternate, starting with A."""
    return [Turn(names[i % len(names)], text) for i, text in enumerate(texts)]
