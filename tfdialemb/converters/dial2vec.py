"""The dial2vec benchmark files (AlibabaResearch/DAMO-ConvAI, folder dial2vec/) to canonical
dialogues: the raw session files and the clustering/evaluation files.

Format "dial2vec" -- raw sessions `rawdata/preprocess_session_<dataset>[_<split>].txt`, one
utterance per line, four tab-separated fields:

    session_id \\t role \\t text \\t topic

The lines of a session are consecutive. `role` is a one-character speaker role, "0" or "1"
(generate_training.py keeps role "1" and replaces role "0"; data_provider.py reads one int per role
character and, for TOD-BERT, writes [sys] for role 0 and [usr] otherwise). `topic` is the session's
domain; a multi-domain session joins its domains with "|" (generate_training.py splits on "|",
generate_clustering.py drops such sessions).
Format "dial2vec_clustering" -- `datasets/<dataset>/clustering_{dev,test}.tsv`, one dialogue per
line, three tab-separated fields:

    roles \\t turns \\t topic_id

`roles` concatenates the role character of every turn ("0101"); `turns` is the dialogue's turns
joined by "#", that block repeated 10 times joined by "|" (the layout of the training file, whose
other nine samples are negatives); `topic_id` numbers the topics 1, 2, ... in order of first
appearance in the raw file.
Confirmed in dial2vec/data/generate_clustering.py (field order, `"".join(roles)`, "#" and "|"
joins, topic ids from 1), dial2vec/data/generate_training.py, dial2vec/config.py (separators
"\\t", "|", "#") and dial2vec/data/data_provider.py (`load_data`, per-character role ids).

Conversion:
- "dial2vec": each run of consecutive lines with the same session_id -> one Dialogue with id
  session_id; speaker = role as given (lower-cased); labels {"domain": topic} with the topic as
  written (a multi-domain "a|b" is kept whole). A session id that reappears after another session,
  or a line whose topic differs from its session's first line, is reported. Unlike the reference
  scripts, text keeps "#" and "|" (they are separators of the reference's own files, not of the
  canonical format) and short sessions are not dropped.
- "dial2vec_clustering": one line -> one Dialogue with id "<file stem>-<line number>"; turns from
  the first copy of the block, one speaker per role character; labels {"domain": topic_id} as a
  string. A line whose copies differ (a training file, not a clustering file), whose role count
  differs from its turn count, or whose topic_id is not a positive integer is reported.
- bad lines (wrong number of fields, empty role/text/topic) are reported and skipped; in raw
  files the rest of the session is still converted.
"""
import os
from typing import Iterator, List, Optional, Set

from tfdialemb.converters.native import iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn

FIELD_SEPARATOR = "\t"
SAMPLE_SEPARATOR = "|"
TURN_SEPARATOR = "#"


class _Session:
    """The turns gathered so far for one session of a raw file."""

    def __init__(self, session_id: str, topic: str):
        self.session_id, self.topic = session_id, topic
        self.turns: List[Turn] = []

    def dialogue(self) -> Dialogue:
        return Dialogue(id=self.session_id, turns=self.turns, labels={"domain": self.topic})


def convert_sessions(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams one Dialogue per session of a raw dial2vec session file."""
    session: Optional[_Session] = None
    finished: Set[str] = set()
    for number, line in iter_lines(input_path, errors):
        fields = [field.strip() for field in line.split(FIELD_SEPARATOR)]
        if len(fields) != 4:
            errors.report(input_path, number, f"expected 4 tab-separated fields (session_id, "
                                              f"role, text, topic), got {len(fields)}")
            continue
        session_id, role, text, topic = fields
        empty = [name for name, value in zip(("session_id", "role", "text", "topic"), fields)
                 if not value]
        if empty:
            errors.report(input_path, number, f"empty field(s) {empty}")
            continue
        if session is None or session_id != session.session_id:
            if session_id in finished:
                errors.report(input_path, number, f"session {session_id!r} reappears after other "
                                                  f"sessions; its lines must be consecutive")
                continue
            if session is not None:
                finished.add(session.session_id)
                yield session.dialogue()
            session = _Session(session_id, topic)
        if topic != session.topic:
            errors.report(input_path, number, f"topic {topic!r} differs from the session's "
                                              f"topic {session.topic!r}")
            continue
        session.turns.append(Turn(role.lower(), text))
    if session is not None:
        yield session.dialogue()


def convert_clustering(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams one Dialogue per line of a dial2vec clustering_{dev,test}.tsv file."""
    stem = os.path.splitext(os.path.basename(input_path))[0]
    for number, line in iter_lines(input_path, errors):
        fields = [field.strip() for field in line.split(FIELD_SEPARATOR)]
        if len(fields) != 3:
            errors.report(input_path, number, f"expected 3 tab-separated fields (roles, turns, "
                                              f"topic_id), got {len(fields)}")
            continue
        roles, block, topic_id = fields
        copies = block.split(SAMPLE_SEPARATOR)
        if any(copy != copies[0] for copy in copies[1:]):
            errors.report(input_path, number, "the samples joined by '|' differ: a training file "
                                              "(positive + negatives), not a clustering file")
            continue
        texts = [text.strip() for text in copies[0].split(TURN_SEPARATOR)]
        empty = [index for index, text in enumerate(texts, start=1) if not text]
        if empty:
            errors.report(input_path, number, f"empty turn(s) {empty} (1-based)")
            continue
        if len(roles) != len(texts):
            errors.report(input_path, number, f"{len(roles)} role character(s) for "
                                              f"{len(texts)} turn(s)")
            continue
        if not (topic_id.isascii() and topic_id.isdigit()) or int(topic_id) < 1:
            errors.report(input_path, number, f"topic_id must be a positive integer, "
                                              f"got {topic_id!r}")
            continue
        turns = [Turn(role.lower(), text) for role, text in zip(roles, texts)]
        yield Dialogue(id=f"{stem}-{number}", turns=turns, labels={"domain": topic_id})


FORMATS = {"dial2vec": convert_sessions, "dial2vec_clustering": convert_clustering}
