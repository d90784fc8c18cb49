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

Blocks are fixed runs of lines, by position: lines 1..B are the first context's candidates, B+1..2B
the second's, and so on, B = `--block_size` (10 for the test and validation files; 2 for the
training files and Douban's validation file, which pair each context with one negative), as
taesunwhang/UMS-ResSel evaluation.py cuts its scores into blocks of `evaluate_candidates_num`.
Grouping by position keeps apart two adjacent blocks that share a context, which grouping by
identical context would merge into one block of 2B candidates. Each block is checked: B lines, one
context, and for Ubuntu exactly one positive; a block that fails is reported with its line range.
A block without a positive whose context is the previous block's is refused too, naming
--block_size: it is the rest of a longer block (a 20-candidate file cut into 10-line blocks), which
would otherwise pass, on Douban, as a context without a positive.

Conversion:
- one line -> one Dialogue with id "<file stem>-<line number>" (e.g. "test-17");
- turns = context turns, then the response as the last turn; the corpora record no speakers, so
  speakers alternate "A"/"B" from the first context turn;
- labels {"label": 0 or 1, "context_id": n}: n = (line number - 1) // B, the block's index, so the
  candidate blocks can be rebuilt;
- a line with fewer than three fields, a label other than 0/1, or an empty turn is reported, and so
  is its block, which then lacks a candidate.
"""
import os
from typing import Iterator, List, Optional, Tuple

from tfdialemb.converters.native import alternate_speakers, iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy
from tfdialemb.core.options import Option

LABELS = {"0": 0, "1": 1}
BLOCK_SIZE = Option("block_size", 10, "Lines per candidate block of a response-selection text file "
                    "(Ubuntu's or Douban's layout), one context each, by position (test and validation files: "
                    "10; training files and Douban's validation file: 2).", lower_bound=2)
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


Row = Tuple[int, int, List[str]]
"""(line number, label, context turns + response) of a valid line."""


def _blocks(path: str, errors: ErrorPolicy, block_size: int) -> Iterator[Tuple[int, List[Row], bool]]:
    """(block index, its valid rows, whether it is the file's last block) of each run of
    `block_size` lines."""
    index, rows = None, []
    for number, label, texts in labelled_rows(path, errors):
        if (number - 1) // block_size != index:
            if rows:
                yield index, rows, False
            index, rows = (number - 1) // block_size, []
        rows.append((number, label, texts))
    if rows:
        yield index, rows, True


def _block_problem(rows: List[Row], last: bool, block_size: int, one_positive: bool,
                   previous_context: Optional[List[str]]) -> Optional[str]:
    """What is wrong with one block's valid rows (`previous_context`: the context of the block
    just before it, if any), or None."""
    if len(rows) < block_size:
        hint = (f"blocks have --block_size={block_size} lines (test and validation files: 10 candidates per "
                "context; training files: 2)")
        if last and rows[-1][0] % block_size:
            return f"the file ends after {rows[-1][0] % block_size} line(s) of this block; {hint}"
        return f"{len(rows)} valid line(s) of {block_size}; {hint}"
    first = rows[0]
    other = next((number for number, _, texts in rows if texts[:-1] != first[2][:-1]), None)
    if other is not None:
        return (f"line {other} has another context than line {first[0]}, but a block of --block_size={block_size} "
                "lines holds one context's candidates (training files pair each context with one negative: "
                "--block_size=2)")
    positives = sum(label for _, label, _ in rows)
    if not positives and first[2][:-1] == previous_context:
        return (f"no positive, and the context of the block before it: one context's candidates run on past "
                f"--block_size={block_size} lines; pass the file's block size (--block_size=N, N its candidates "
                "per context)")
    if one_positive and positives != 1:
        return f"{positives} positives; each block of an Ubuntu file has exactly one"
    return None


def convert_response_selection(input_path: str, errors: ErrorPolicy, block_size: int = BLOCK_SIZE.default,
                               one_positive: bool = False) -> Iterator[Dialogue]:
    """Streams one Dialogue per line of an Ubuntu V1 or Douban response-selection file, in blocks of
    `block_size` lines by position, each with one context (and one positive with `one_positive`)."""
    if block_size < 2:
        raise ValueError(f"block_size must be at least 2 (a candidate to rank against another), got {block_size}")
    stem = os.path.splitext(os.path.basename(input_path))[0]
    previous = None  # (index, context) of the block before
    for index, rows, last in _blocks(input_path, errors, block_size):
        problem = _block_problem(rows, last, block_size, one_positive,
                                 previous[1] if previous and previous[0] == index - 1 else None)
        previous = (index, rows[0][2][:-1])
        if problem:
            errors.report(input_path, f"{index * block_size + 1}-{(index + 1) * block_size}", problem)
            continue
        for number, label, texts in rows:
            yield Dialogue(id=f"{stem}-{number}", turns=alternate_speakers(texts),
                           labels={"label": label, "context_id": index})


def convert_ubuntu(input_path: str, errors: ErrorPolicy, block_size: int = BLOCK_SIZE.default) -> Iterator[Dialogue]:
    """Ubuntu V1: one positive per block."""
    return convert_response_selection(input_path, errors, block_size, one_positive=True)


def convert_douban(input_path: str, errors: ErrorPolicy, block_size: int = BLOCK_SIZE.default) -> Iterator[Dialogue]:
    """Douban: human labels, so a test block may hold several positives or none."""
    return convert_response_selection(input_path, errors, block_size)


FORMATS = {"ubuntu": convert_ubuntu, "douban": convert_douban}
DESCRIPTIONS = {"ubuntu": "Ubuntu response selection label, turns..., response lines in --block_size blocks",
                "douban": "Douban response selection label, turns..., response lines in --block_size blocks"}
"""One line on each format, for `data convert --format=help`."""
OPTIONS = {"ubuntu": (BLOCK_SIZE,), "douban": (BLOCK_SIZE,)}
"""Format → the options its converter takes as keyword arguments (`--block_size`)."""
PARTIAL_RECORDS = {name: "one candidate of a context's block" for name in FORMATS}
