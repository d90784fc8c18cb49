r"""JDDC chat log (`chat.txt`) → canonical dialogues.

Native format (JDDC corpus, Chen et al., LREC 2020, first released for the 2018 JD Dialog
Challenge): UTF-8 text, possibly opened by a byte-order mark, one utterance per line, 7
tab-separated columns

    session_id \t user_id \t waiter_send \t is_transfer \t is_repeat \t sku \t content

`waiter_send` is 1 when the service agent (the "waiter") sent the line and 0 when the customer
did; `is_transfer`, `is_repeat` and `sku` may be empty; `content` itself may hold tabs, so a line
can have more than 7 columns and everything from the 7th on is the text. The lines of a session
are consecutive. The first line may be a header naming the columns (`session_id\tuser_id...`).
Personal data is masked in the text ([ORDERID_10001234], [数字x], [金额x], #E-s[数字x]).
Confirmed from public code that reads this file: zengbin93/jddc_solution_4th
(final/ipynb/preprocessing.ipynb: columns id, user, waiter_send, transfer, repeat, sku, content,
file read as utf-8-sig, columns past the 7th merged into the content;
preliminary/data_pre/parser.py: waiter_send must be 0 or 1) and DaDaMrX/jddc-datacleaning
(data.py: waiter_send 1 = the agent's answer; a header line starting session_id, user_id,
waiter_send, is_transfer, is_repeat).

Conversion: each run of consecutive lines with one session id is one dialogue whose id is the
session id (a session id that comes back after another session gets "@<line number>" of its first
line, so ids stay unique); speakers "customer" (waiter_send 0) and "agent" (1); text = content
stripped of surrounding whitespace, inner tabs kept. User id, transfer/repeat flags and sku are log
metadata and are not carried over. Consecutive lines of one speaker stay separate turns
(`tfdialemb.dialogue.merge_consecutive_turns` joins them where a method wants that).
"""

import itertools
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple

from tfdialemb.converters.native import iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy, SeenIds, Turn

COLUMNS = ("session_id", "user_id", "waiter_send", "is_transfer", "is_repeat", "sku", "content")
SPEAKERS = {"0": "customer", "1": "agent"}

SessionRow = Tuple[str, int, Turn]  # (session id, line number, turn)


def group_sessions(
    rows: Iterable[SessionRow], id_prefix: str = "", labels: Optional[Mapping[str, Any]] = None
) -> Iterator[Dialogue]:
    """One dialogue per run of consecutive rows sharing a session id (logs keep a session together).

    A session id that comes back after another session would repeat a dialogue id, so that run's id
    gets "@<line number of its first row>". Memory holds the current session and the ids seen, as
    hashes (`SeenIds`).
    """
    seen = SeenIds()
    for session_id, run in itertools.groupby(rows, key=lambda row: row[0]):
        run = list(run)
        dialogue_id = id_prefix + session_id
        if not seen.add(session_id):
            dialogue_id += f"@{run[0][1]}"
        yield Dialogue(dialogue_id, tuple(turn for _, _, turn in run), dict(labels or {}))


def _session_rows(path: str, errors: ErrorPolicy) -> Iterator[SessionRow]:
    for number, line in iter_lines(path, errors):
        if number == 1:
            line = line.lstrip("\ufeff")
            if line.split("\t", 1)[0] == COLUMNS[0]:
                continue
        columns = line.split("\t", len(COLUMNS) - 1)
        if len(columns) < len(COLUMNS):
            errors.report(
                path,
                number,
                f"expected {len(COLUMNS)} tab-separated columns ({', '.join(COLUMNS)}), "
                f"got {len(columns)}",
            )
            continue
        session_id, waiter_send, text = columns[0].strip(), columns[2].strip(), columns[6].strip()
        if not session_id:
            errors.report(path, number, "empty session_id")
        elif waiter_send not in SPEAKERS:
            errors.report(path, number, f"waiter_send must be 0 or 1, got {columns[2]!r}")
        elif not text:
            errors.report(path, number, "empty content")
        else:
            yield session_id, number, Turn(SPEAKERS[waiter_send], text)


def convert_jddc(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams the sessions of a JDDC chat log as dialogues."""
    yield from group_sessions(_session_rows(input_path, errors))


FORMATS = {"jddc": convert_jddc}
DESCRIPTIONS = {"jddc": "JDDC chat.txt customer-service log, one dialogue per session"}
"""One line on each format, for `data convert --format=help`."""
