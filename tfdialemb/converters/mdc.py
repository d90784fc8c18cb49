r"""Microsoft Dialogue Challenge (MDC) TSV files → canonical dialogues.

Native format (Li et al., SLT 2018; xiul-msr/e2e_dialog_challenge data/movie_all.tsv,
taxi_all.tsv, and restaurant_all.tsv of the same release): UTF-8, tab-separated, a header line,
then one message per line, the messages of a session consecutive:

    session.ID \t Message.ID \t Message.Timestamp \t Message.From \t Message.Text \t act_1 ...

Message.From is `user` or `agent`. Each further column holds one dialogue act,
`name(slot=value;...)`: request(date), inform(city=Seattle;state=WA), confirm_question(), Deny().
The header names the first act column `Annotation_Result` (taxi_all.tsv) or `Dialog-Acts`
followed by empty names (movie_all.tsv, whose rows are padded with empty columns); acts may carry
trailing spaces. taxi_all.tsv quotes texts that contain a comma the spreadsheet way
("New York, NY", a quote inside doubled); movie_all.tsv leaves them bare.

Conversion: one dialogue per session, id "<domain>-<session.ID>" where the domain (movie,
restaurant, taxi) is read from the start of the file name and also stored as labels
{"domain": ...}; a file named otherwise gets its name without extension as prefix and no labels.
Speakers "user"/"agent"; text unquoted and stripped. Each turn with acts has the fields
`dialogue_acts` (the act strings, stripped, in file order), `intent` and `intent_acts`.

`intent` is one of the 11 dialogue acts that MDC defines for every domain (MDC_ACTS; DialogueCSE
Sec. 5.1: "three domains, each with 11 identical intents"): the name, lower-cased, of the
message's first act that is not a social one (greeting, closing, thanks, welcome), else of its
first act — "greeting(...) request(...)" is a request, "inform(...) closing(...)" an inform. The
paper does not say how a message with several acts gets its one intent; this keeps the act that
carries the task. A name outside MDC_ACTS is kept as its own intent. `intent_acts` is the other
reading: the distinct act names, lower-cased, sorted and joined by "+" (e.g.
"confirm_question+inform"), more classes than the paper's 11; build an SR set on it with
`python -m data_prep.build_sr_set --intent_key=intent_acts`. A session id that comes back after another session gets
"@<line number>" (see `tfdialemb.converters.jddc.group_sessions`).
"""

import os
from typing import Any, Dict, Iterator, List

from tfdialemb.converters.jddc import SessionRow, group_sessions
from tfdialemb.converters.native import iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn

HEADER_START = "session.ID"
DOMAINS = ("movie", "restaurant", "taxi")
SPEAKERS = ("user", "agent")
TEXT_COLUMN = 4
MDC_ACTS = ("request", "inform", "confirm_question", "confirm_answer", "multiple_choice", "deny", "not_sure",
            "greeting", "closing", "thanks", "welcome")
"""The dialogue acts of MDC (Li et al., 2018, shared by the movie, restaurant and taxi domains)."""
SOCIAL_ACTS = ("greeting", "closing", "thanks", "welcome")


def _unquote(field: str) -> str:
    """A spreadsheet-quoted field ("a, b", with "" for a quote) as its plain text, stripped."""
    field = field.strip()
    if len(field) >= 2 and field[0] == field[-1] == '"':
        field = field[1:-1].replace('""', '"').strip()
    return field


def _act_fields(acts: List[str]) -> Dict[str, Any]:
    if not acts:
        return {}
    names = [act.split("(", 1)[0].strip().lower() for act in acts]
    task = [name for name in names if name not in SOCIAL_ACTS]
    return {"dialogue_acts": acts, "intent": (task or names)[0], "intent_acts": "+".join(sorted(set(names)))}


def _session_rows(path: str, errors: ErrorPolicy) -> Iterator[SessionRow]:
    for number, line in iter_lines(path, errors):
        if number == 1:
            line = line.lstrip("\ufeff")
            if line.split("\t", 1)[0] == HEADER_START:
                continue
        columns = line.split("\t")
        if len(columns) <= TEXT_COLUMN:
            errors.report(
                path,
                number,
                f"expected session.ID, Message.ID, Message.Timestamp, Message.From, Message.Text "
                f"and dialogue acts (5 or more tab-separated columns), got {len(columns)}",
            )
            continue
        session_id, speaker = columns[0].strip(), columns[3].strip().lower()
        text = _unquote(columns[TEXT_COLUMN])
        acts = [act for act in map(_unquote, columns[TEXT_COLUMN + 1 :]) if act]
        if not session_id:
            errors.report(path, number, "empty session.ID")
        elif speaker not in SPEAKERS:
            errors.report(path, number, f"Message.From must be user or agent, got {columns[3]!r}")
        elif not text:
            errors.report(path, number, "empty Message.Text")
        elif any(act.startswith("(") for act in acts):
            errors.report(path, number, "dialogue act without a name")
        else:
            yield session_id, number, Turn(speaker, text, _act_fields(acts))


def convert_mdc(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams the sessions of one MDC domain file as dialogues."""
    stem = os.path.splitext(os.path.basename(input_path))[0]
    domain = next((name for name in DOMAINS if stem.lower().startswith(name)), None)
    labels = {"domain": domain} if domain else {}
    yield from group_sessions(_session_rows(input_path, errors), f"{domain or stem}-", labels)


FORMATS = {"mdc": convert_mdc}
DESCRIPTIONS = {"mdc": "Microsoft Dialogue Challenge *_all.tsv of one domain, with intents"}
"""One line on each format, for `data convert --format=help`."""
