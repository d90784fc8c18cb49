"""Reading evaluation files (released text or canonical JSONL) and embedding their texts once."""
from typing import Callable, Dict, Iterable, Iterator, Sequence, Tuple

import numpy as np

from tfdialemb.core.inputs import check_input_file
from tfdialemb.dialogue import Dialogue, ErrorPolicy, read_dialogues

Embed = Callable[[Sequence[str]], np.ndarray]
"""Texts in, one embedding row per text out (e.g. `SentenceEmbedder.embed`)."""

def is_jsonl(path: str) -> bool:
    """True for canonical JSONL: a .jsonl name, or a first non-blank line that opens an object
    (after a UTF-8 byte-order mark, which the readers accept)."""
    if path.endswith(".jsonl"):
        return True
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        first = next((line for line in f if line.strip()), "")
    return first.lstrip().startswith("{")


def read_eval_records(
    path: str, convert_text: Callable[[str, ErrorPolicy], Iterable[Dialogue]]
) -> Iterator[Tuple[int, Dialogue]]:
    """(line number, record) of an evaluation file, released text (`convert_text`) or JSONL.

    Every bad line raises a DialogueFormatError naming file and line, so record i is on line i.
    """
    check_input_file(path, "eval file")
    errors = ErrorPolicy("fail")
    records = read_dialogues(path, errors) if is_jsonl(path) else convert_text(path, errors)
    return enumerate(records, start=1)


def embed_distinct(embed: Embed, texts: Iterable[str]) -> Dict[str, np.ndarray]:
    """The embedding of every distinct text, computed once each."""
    distinct = list(dict.fromkeys(texts))
    vectors = np.asarray(embed(distinct))
    if vectors.ndim != 2 or len(vectors) != len(distinct):
        raise ValueError(f"the embedder returned shape {vectors.shape} for {len(distinct)} texts")
    return dict(zip(distinct, vectors))
