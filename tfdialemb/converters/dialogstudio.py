"""Salesforce DialogStudio dataset files to canonical dialogues.

Native layout: one folder per dataset, one folder per split (train/, val/, test/), files
`dialogues_<n>.json` (other JSON files, such as SGD's copied `schema.json`, `otgy.json` or the
`*_examples.json` samples, are not dialogue files and are ignored). Each file is a JSON object:

    {"<dataset>--<split>--<n>": {
        "original dialog id": str, "new dialog id": str, "dialog index": int,
        "original dialog info": {...dataset specific...},
        "log": [{"turn id": int, "user utterance": str, "system response": str,
                 "dialog history": str, "original user side information": {...},
                 "original system side information": {...}, "dst": str,
                 "dst accumulated": str, "intent": str (some datasets)}, ...],
        "external knowledge non-flat": {...}, "external knowledge": str, "dst knowledge": str,
        "intent knowledge": str, "prompt": [str, ...]}, ...}

Each log entry is a user utterance and the system response to it. Confirmed in
salesforce/DialogStudio README.md (the dialogue fields), code/utils/constant.py (the key names),
code/preprocess_data_TOD.py (`save_dial` writes `<dataset>/<split>/dialogues_<n>.json` keyed by
"<dataset>--<split>--<n>"; "dialog ends at user side" leaves the last entry's system response
empty) and task-oriented-dialogues/{SGD,MULTIWOZ2_2,MultiWOZ_2.1,MetaLWOZ,BiTOD}/
converted_examples.json ("original dialog info" per dataset).
Input: one `dialogues_<n>.json` file, or any folder above such files (a dataset folder, or the
whole collection), searched recursively.

Conversion:
- id: the "<dataset>--<split>--<n>" key, unique across the collection ("original dialog id"
  repeats across SGD splits);
- turns: per log entry a "user" turn, then a "system" turn; texts stripped of surrounding
  whitespace. The one empty side kept out rather than reported is the system response of the
  last entry (a dialogue that ends on the user side); any other empty or missing utterance is
  reported. Order is the log order (each entry pairs one user and one system utterance);
- user turns keep DialogStudio's "intent" of the entry when it is a non-empty string (its
  constant.py notes that it falls back to dialogue acts where a corpus has no intents);
- labels: {"dataset": the key's dataset name}, plus {"domains", "domain" when single} where
  "original dialog info" has one of the shapes that carry domains: "services" (a list of
  strings: SGD, MULTIWOZ2_2), "goal" holding every MultiWOZ domain (MultiWOZ_2.1; domains as in
  multiwoz.py) or "domain" (a string: MetaLWOZ). Other shapes, e.g. BiTOD's task names in
  "Scenario", give no domain labels rather than a guess.

Filters of the augmentation thesis' released corpus (voorhs/dialogue-augmentation
mylib/datamakers/source.py:50-80), off by default: `max_log_turns` drops a dialogue of more log
entries (released: 10, `is_too_long`, source.py:75-76); `drop_empty_utterances` leaves empty
utterances out where they stand (source.py:59-60, `if ut == '': continue`) instead of reporting
them, and drops what source.py:50 drops: an empty log (`is_empty`) and a log of one entry with an
empty side (`has_only_single_utterance`, source.py:79-80). So, as released, a dialogue of several
log entries left with one utterance is kept, and a whitespace-only utterance is no empty one: the
released corpus keeps it as a turn. The canonical format has no blank turns, so here such an
utterance is left out of its dialogue, which is kept (counted as ("left out", ...) in
`dropped`); a dialogue of nothing but blank utterances cannot be written and is dropped. The
dropped dialogues are counted in `dropped` by reason. (Its utterance-length bound is
`tfdialemb.data.length_filter`'s, which any format can use.)
"""
import collections
from typing import Any, Dict, Iterator, List, Optional

from tfdialemb.converters.multiwoz import (
    MULTIWOZ_DOMAINS,
    BadRecord,
    Location,
    convert_json_files,
    domain_labels,
    goal_domains,
    input_files,
    is_string_list,
    keyed_records,
    utterance_text,
)
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn
from tfdialemb.core.options import Option

USER_UTTERANCE = "user utterance"
SYSTEM_RESPONSE = "system response"
KEY_SEPARATOR = "--"
EMPTY_LOG = "an empty log"
ONE_ENTRY_WITH_AN_EMPTY_SIDE = "one log entry with an empty side"
ONLY_BLANK_UTTERANCES = "only whitespace-only utterances (the released corpus keeps them; the format has no blank turns)"
BLANK_UTTERANCES_LEFT_OUT = ("left out", "whitespace-only utterances of kept dialogues (the released corpus keeps "
                             "them as turns; the format has no blank turns)")
"""What `drop_empty_utterances` counts in `dropped`: dialogues dropped by reason, and the blank
utterances it leaves out of the dialogues it keeps."""


def convert_dialogstudio(input_path: str, errors: ErrorPolicy, max_log_turns: int = 0,
                         drop_empty_utterances: bool = False,
                         dropped: Optional[collections.Counter] = None) -> Iterator[Dialogue]:
    """Streams the dialogues of a DialogStudio file, or of every dialogue file under a folder,
    those the filters drop counted in `dropped`."""
    if max_log_turns < 0:
        raise ValueError(f"max_log_turns must be positive (0: no bound), got {max_log_turns}")
    dropped = collections.Counter() if dropped is None else dropped
    files = input_files(input_path, "dialogues_*.json", recursive=True)

    def records(data):
        for key, record in keyed_records(data):
            log = record.get("log") if isinstance(record, dict) else None
            entries = [e for e in log if isinstance(e, dict)] if isinstance(log, list) else None
            sides = [e.get(side) for e in entries or () for side in (USER_UTTERANCE, SYSTEM_RESPONSE)]
            if max_log_turns and entries is not None and len(log) > max_log_turns:
                dropped[f"over {max_log_turns} log turns"] += 1
            elif drop_empty_utterances and entries is not None and not log:
                dropped[EMPTY_LOG] += 1
            elif drop_empty_utterances and entries is not None and len(log) == 1 and "" in sides:
                dropped[ONE_ENTRY_WITH_AN_EMPTY_SIDE] += 1
            elif drop_empty_utterances and entries is not None and not any(
                    isinstance(text, str) and not _is_empty(text) for text in sides):
                dropped[ONLY_BLANK_UTTERANCES] += 1
            else:
                blank = sum(isinstance(text, str) and text != "" and _is_empty(text) for text in sides)
                if drop_empty_utterances and blank:
                    dropped[BLANK_UTTERANCES_LEFT_OUT] += blank
                yield key, record

    yield from convert_json_files(files, errors, records,
                                  lambda key, record: _dialogstudio_dialogue(key, record, drop_empty_utterances))


def _dialogstudio_dialogue(key: Location, record: Any, drop_empty_utterances: bool = False) -> Dialogue:
    parts = str(key).rsplit(KEY_SEPARATOR, 2)
    if len(parts) != 3 or not all(parts):
        raise BadRecord(f"key {key!r} is not '<dataset>--<split>--<n>'")
    if not isinstance(record, dict):
        raise BadRecord("dialogue is not a JSON object")
    log = record.get("log")
    if not isinstance(log, list) or not log:
        raise BadRecord("'log' must be a non-empty list")
    turns: List[Turn] = []
    for index, entry in enumerate(log):
        if not isinstance(entry, dict):
            raise BadRecord(f"log entry {index} is not an object")
        user = entry.get(USER_UTTERANCE)
        if not (drop_empty_utterances and _is_empty(user)):
            turns.append(Turn("user", utterance_text(user, f"log entry {index} {USER_UTTERANCE}"),
                              _intent_field(index, entry)))
        response = entry.get(SYSTEM_RESPONSE)
        ends_on_user_side = index == len(log) - 1 and isinstance(response, str)
        if (ends_on_user_side or drop_empty_utterances) and _is_empty(response):
            continue
        system = utterance_text(response, f"log entry {index} {SYSTEM_RESPONSE}")
        turns.append(Turn("system", system))
    labels = {"dataset": parts[0], **_domain_labels(record.get("original dialog info"))}
    return Dialogue(str(key), turns, labels)


def _is_empty(utterance: Any) -> bool:
    """An utterance that is a string of nothing but whitespace (a missing or non-string one is a
    bad record, not an empty utterance)."""
    return isinstance(utterance, str) and not utterance.strip()


def _intent_field(index: int, entry: Dict[str, Any]) -> Dict[str, str]:
    intent = entry.get("intent", "")
    if not isinstance(intent, str):
        raise BadRecord(f"log entry {index}: 'intent' must be a string")
    return {"intent": intent.strip()} if intent.strip() else {}


def _domain_labels(info: Any) -> Dict[str, Any]:
    domains = _info_domains(info) if isinstance(info, dict) else None
    return {} if domains is None else domain_labels(domains)


def _info_domains(info: Dict[str, Any]) -> Optional[List[str]]:
    """The domains that "original dialog info" names; None for shapes not known to hold them."""
    services, goal, domain = info.get("services"), info.get("goal"), info.get("domain")
    if is_string_list(services):
        return services
    if isinstance(goal, dict) and set(MULTIWOZ_DOMAINS) <= set(goal):
        return goal_domains(goal)
    if isinstance(domain, str) and domain.strip():
        return [domain.strip()]
    return None


FORMATS = {"dialogstudio": convert_dialogstudio}
DESCRIPTIONS = {"dialogstudio": "DialogStudio per-dataset JSON, a file or a folder tree"}
"""One line on each format, for `data convert --format=help`."""
MAX_LOG_TURNS = Option("max_log_turns", 0, "Drop a dialogue of more log turns (user utterance and "
                       "system response) than this (the thesis' corpus: 10); 0: no bound.", lower_bound=0)
DROP_EMPTY_UTTERANCES = Option("drop_empty_utterances", False, "Leave empty utterances out and drop an "
                               "empty log or a one-entry log with an empty side (the thesis' released corpus: a "
                               "dialogue left with one utterance is kept), instead of reporting them as bad records.")
OPTIONS = {"dialogstudio": (MAX_LOG_TURNS, DROP_EMPTY_UTTERANCES)}
