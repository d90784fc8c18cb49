"""The dial2vec benchmark (AlibabaResearch/DAMO-ConvAI, folder dial2vec/) to canonical dialogues:
the released dataset files and the raw session files they were generated from.

Format "dial2vec" -- the released files, `datasets/<dataset>/train.tsv`, `clustering_dev.tsv` and
`clustering_test.tsv` (the Google Drive archive of dial2vec/README.md; there is no dev.tsv or
test.tsv). All three have the one layout dial2vec/data/data_provider.py:DataProvider.load_data
reads (get_train_loader for train.tsv, get_clustering_test_loader for clustering_{dev,test}.tsv),
one line per example, three tab-separated fields (empty fields are dropped, as load_data does):

    roles \\t s_0|s_1|...|s_9 \\t label

- `roles`: one role digit per turn of s_0 ("1010"), read with int() per character by
  DataProvider.__convert_examples_worker_for_bert (its other branch, for a role field holding
  "#", splits on "|" and cannot parse);
- `s_k`: one sample, its turns joined by "#"; the samples joined by "|" (dial2vec/config.py:
  turn_sep_token, sample_sep_token; both characters are deleted from utterances by the
  generators). s_0 is the dialogue itself (label_id = [1] + [0] * 9: sample 0 is the positive);
- train.tsv (data/generate_training.py:get_result): s_1..s_9 are its negatives (role-"1" turns
  kept, role-"0" turns replaced) and `label` is "0" on every line; a session may fill several
  lines (one per repetition of the `samples_per_line` loop, each with fresh negatives), and
  get_data_dict keeps empty utterances;
- clustering_{dev,test}.tsv (data/generate_clustering.py): s_0 repeated 10 times and `label` the
  session's topic id, 1, 2, ... in order of first appearance; empty utterances and multi-domain
  sessions were dropped. Where a dataset has no dev split, clustering_dev.tsv is a link to
  clustering_test.tsv.
Format "dial2vec_clustering" -- the same layout, for evaluation sets: a line must be a clustering
line (identical copies, a topic id of at least 1), so a training file is refused.
Format "dial2vec_sessions" -- the generators' input `rawdata/preprocess_session_<dataset>[_<split>]
.txt` (not part of the released archive), one utterance per line, four tab-separated fields:

    session_id \\t role \\t text \\t topic

The lines of a session are consecutive; `topic` is the session's domain, a multi-domain session
joining its domains with "|" (generate_training.py:get_data_dict splits on "|",
generate_clustering.py:get_session_content drops such sessions).

Conversion:
- "dial2vec", "dial2vec_clustering": one line -> one Dialogue with id "<file stem>-<line number>";
  the turns of s_0, one speaker per role digit, an empty turn dropped with its role digit (as
  generate_clustering.py drops empty utterances); labels {"domain": label} for a topic id,
  none for a training line (label 0). The negatives of train.tsv are not kept: the dial2vec
  builder draws its own. Every line is kept, so a session that train.tsv holds on several lines
  is trained on as often as the released loop (one pass over the lines per epoch) does.
- "dial2vec_sessions": each run of consecutive lines with the same session_id -> one Dialogue
  with id session_id; speaker = role as given (lower-cased); labels {"domain": topic} with the
  topic as written (a multi-domain "a|b" is kept whole). A session id that reappears after
  another session, or a line whose topic differs from its session's first line, is reported.
  Unlike the reference scripts, text keeps "#" and "|" and short sessions are not dropped.
- bad lines (another layout, a role count that differs from the turn count, a label that is
  not an integer, empty fields) are reported naming the expected layout and skipped; in raw
  session files the rest of the session is still converted.
"""
import os
from typing import Iterator, List, Optional

from tfdialemb.converters.native import iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy, SeenIds, Turn

FIELD_SEPARATOR = "\t"
SAMPLE_SEPARATOR = "|"
TURN_SEPARATOR = "#"
RELEASED_LAYOUT = "roles \\t turns joined by '#', samples joined by '|' \\t label"
SESSION_LAYOUT = "session_id \\t role \\t text \\t topic"
TRAINING_LABEL = "0"
"""generate_training.py:get_result writes it on every training line; topic ids start at 1."""


def _released_lines(input_path: str, errors: ErrorPolicy, clustering: bool) -> Iterator[Dialogue]:
    """One Dialogue per line of a released train.tsv / clustering_{dev,test}.tsv file."""
    stem = os.path.splitext(os.path.basename(input_path))[0]
    for number, line in iter_lines(input_path, errors):
        fields = [field.strip() for field in line.split(FIELD_SEPARATOR) if field.strip()]
        if len(fields) != 3:
            hint = " (a raw session file: --format=dial2vec_sessions)" if len(fields) == 4 else ""
            errors.report(input_path, number, f"expected the released dial2vec layout "
                                              f"'{RELEASED_LAYOUT}', 3 tab-separated fields, "
                                              f"got {len(fields)}{hint}")
            continue
        roles, block, label = fields
        copies = block.split(SAMPLE_SEPARATOR)
        texts = [text.strip() for text in copies[0].split(TURN_SEPARATOR)]
        problem = _line_problem(roles, texts, label)
        if problem is None and clustering:
            problem = _clustering_problem(copies, label)
        if problem is not None:
            errors.report(input_path, number, f"{problem} (expected '{RELEASED_LAYOUT}')")
            continue
        turns = [Turn(role, text) for role, text in zip(roles, texts) if text]
        labels = {} if label == TRAINING_LABEL else {"domain": label}
        yield Dialogue(id=f"{stem}-{number}", turns=turns, labels=labels)


def _line_problem(roles: str, texts: List[str], label: str) -> Optional[str]:
    """What makes a line unreadable in the released layout, or None."""
    if not (roles.isascii() and roles.isdigit()):
        return f"roles must be one digit per turn, got {roles!r}"
    if len(roles) != len(texts):
        return f"{len(roles)} role digit(s) for {len(texts)} turn(s) in the first sample"
    if not any(texts):
        return "every turn of the first sample is empty"
    if not (label.isascii() and label.isdigit()):
        return f"label must be an integer (0 for training lines, a topic id from 1), got {label!r}"
    return None


def _clustering_problem(copies: List[str], label: str) -> Optional[str]:
    """What makes a readable line something other than a clustering line, or None."""
    if any(copy != copies[0] for copy in copies[1:]):
        return ("the samples joined by '|' differ: a training line (positive + negatives), not a "
                "clustering line; convert train.tsv with --format=dial2vec")
    if int(label) < 1:
        return f"a clustering line's label is a topic id from 1, got {label!r}"
    return None


def convert_released(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams one Dialogue per line of a released train.tsv or clustering_{dev,test}.tsv."""
    return _released_lines(input_path, errors, clustering=False)


def convert_clustering(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams one Dialogue per line of a released clustering_{dev,test}.tsv, refusing other lines."""
    return _released_lines(input_path, errors, clustering=True)


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
    started = SeenIds()
    for number, line in iter_lines(input_path, errors):
        fields = [field.strip() for field in line.split(FIELD_SEPARATOR)]
        if len(fields) != 4:
            hint = " (a released datasets/<name>/*.tsv file: --format=dial2vec)" if len(fields) == 3 else ""
            errors.report(input_path, number, f"expected the raw session layout '{SESSION_LAYOUT}', "
                                              f"4 tab-separated fields, got {len(fields)}{hint}")
            continue
        session_id, role, text, topic = fields
        empty = [name for name, value in zip(("session_id", "role", "text", "topic"), fields)
                 if not value]
        if empty:
            errors.report(input_path, number, f"empty field(s) {empty}")
            continue
        if session is None or session_id != session.session_id:
            if not started.add(session_id):
                errors.report(input_path, number, f"session {session_id!r} reappears after other "
                                                  f"sessions; its lines must be consecutive")
                continue
            if session is not None:
                yield session.dialogue()
            session = _Session(session_id, topic)
        if topic != session.topic:
            errors.report(input_path, number, f"topic {topic!r} differs from the session's "
                                              f"topic {session.topic!r}")
            continue
        session.turns.append(Turn(role.lower(), text))
    if session is not None:
        yield session.dialogue()


FORMATS = {"dial2vec": convert_released, "dial2vec_clustering": convert_clustering,
           "dial2vec_sessions": convert_sessions}
DESCRIPTIONS = {"dial2vec": "dial2vec's released benchmark train.tsv (roles, #-joined turns, label per line)",
                "dial2vec_clustering": "dial2vec's clustering_dev.tsv / clustering_test.tsv, labelled by topic",
                "dial2vec_sessions": "dial2vec's generator input: raw session_id, role, text, topic lines"}
"""One line on each format, for `data convert --format=help`."""
