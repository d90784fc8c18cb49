"""Ubuntu Dialogue Corpus V1 (Xu et al. 2016 release, used by SMN) and the Douban Conversation
Corpus (Wu et al. 2017): multi-turn response-selection files to canonical dialogues.

Native format (both corpora; files such as train.txt, valid.txt, test.txt), one example per line,
fields separated by a tab:

    label \\t u_1 \\t u_2 \\t ... \\t u_n \\t response

`label` is 1 when `response` follows the context u_1..u_n, else 0. Training files hold a positive
and a negative for each context (1:1, on consecutive lines); validation and test files hold blocks
of 10 consecutive lines with the same context (Ubuntu: exactly one positive per block; Douban test:
human labels, so a block may hold several positives or none).
Confirmed in MarkWuNLP/MultiTurnResponseSelection README.md ("label \\t conversation utterances
(splited by \\t) \\t response") and its train.sample, and in taesunwhang/UMS-ResSel
data/ubuntu_corpus_v1/ubuntu_data_utils.py and data/douban/douban_data_utils.py (field 0 is the
label, fields 1..-2 the context turns, field -1 the response).

Turn markers: in this Ubuntu V1 release every tab field is one turn (consecutive utterances of a
speaker were already merged); the `__eou__` / `__eot__` markers belong to Ubuntu V2
(rkadlec/ubuntu-ranking-dataset-creator README.md), and the V1 readers above split on tabs only.
The converter therefore splits turns on tabs and keeps any token inside a turn verbatim.

Conversion:
- one line -> one Dialogue with id "<file stem>-<line number>" (e.g. "test-17");
- turns = context turns, then the response as the last turn; the corpora record no speakers, so
  speakers alternate "A"/"B" from the first context turn;
- labels {"label": 0 or 1, "context_id": n}: consecutive lines whose context is identical share
  `context_id` (a counter from 0 in file order), so the candidate blocks can be rebuilt;
- a line with fewer than three fields, a label other than 0/1, or an empty turn is reported.
"""
import os
from typing import Iterator, List, Optional, Tuple

from tfdialemb.converters.native import alternate_speakers, iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy

LABELS = {"0": 0, "1": 1}
SELECTION_LABELS = ("label", "context_id")
"""The labels of every converted line."""


def is_selection_line(dialogue: Dialogue) -> bool:
    """True for a line of a converted response-selection file (its last turn is the candidate)."""
    return all(key in dialogue.labels for key in SELECTION_LABELS)


def labelled_rows(path: str, errors: ErrorPolicy) -> Iterator[Tuple[int, int, List[str]]]:
    """(line number, label, context turns + response) of each valid `label \t turns...` line."""
    for number, line in iter_lines(path, errors):
        fields = line.split("\t")
        if len(fields) < 3:
            errors.report(path, number, f"expected label, context turns and response "
                                        f"separated by tabs, got {len(fields)} field(s)")
            continue
        label = fields[0].strip()
        if label not in LABELS:
            errors.report(path, number, f"label must be 0 or 1, got {fields[0]!r}")
            continue
        texts = [field.strip() for field in fields[1:]]
        empty = [index for index, text in enumerate(texts, start=1) if not text]
        if empty:
            errors.report(path, number, f"empty turn(s) {empty} (1-based, response last)")
            continue
        yield number, LABELS[label], texts


def convert_response_selection(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams one Dialogue per line of an Ubuntu V1 or Douban response-selection file."""
    stem = os.path.splitext(os.path.basename(input_path))[0]
    context_id = -1
    previous_context: Optional[Tuple[str, ...]] = None
    for number, label, texts in labelled_rows(input_path, errors):
        context = tuple(texts[:-1])
        if context != previous_context:
            context_id += 1
            previous_context = context
        yield Dialogue(
            id=f"{stem}-{number}",
            turns=alternate_speakers(texts),
            labels={"label": label, "context_id": context_id},
        )


FORMATS = {"ubuntu": convert_response_selection, "douban": convert_response_selection}
