"""MultiWOZ 2.1 (`data.json`) and MultiWOZ 2.2 (`dialogues_*.json`) to canonical dialogues.

MultiWOZ 2.1: one JSON object, `data.json`, mapping a dialogue id ("PMUL0698.json") to

    {"goal": {"attraction": {}, "hospital": {}, "hotel": {"info": {...}, "book": {...}, ...},
              "police": {}, "restaurant": {}, "taxi": {}, "train": {},
              "topic": {...}, "message": [...]},
     "log": [{"text": str, "metadata": {}, "dialog_act": {...}, "span_info": [...]},
             {"text": str, "metadata": {"hotel": {"book": {...}, "semi": {...}}, ...},
              "dialog_act": {...}, "span_info": [...]}, ...]}

The log records no speaker: turns alternate user, system from the first, and only system turns
hold the belief state in `metadata` (user turns have `{}`). `goal` lists every domain, empty when
the dialogue does not use it, next to `topic` and `message`, which are not domains.
Input: the `data.json` file, or the unzipped MultiWOZ_2.1 directory holding it. `data.json` holds
all three official splits; `valListFile.txt` and `testListFile.txt` beside it list the ids of the
validation and test dialogues, one a line, and the training split is the rest (as
ConvLab/ConvLab-3 data/unified_datasets/multiwoz21/preprocess.py reads them).
Confirmed in budzianowski/multiwoz data/MultiWOZ_2.2/convert_to_multiwoz_format.py (walks
`data.json` `log`, odd turns hold the states), ConvLab/ConvLab-3
data/unified_datasets/multiwoz21/preprocess.py (speaker by turn parity; domains = `goal` keys of
known domains with a non-empty value), jojonki/MultiWOZ-Parser Parser.ipynb (a printed record) and
salesforce/DialogStudio task-oriented-dialogues/MultiWOZ_2.1/converted_examples.json.

MultiWOZ 2.2: split directories train/, dev/, test/ of `dialogues_NNN.json`, each a JSON list of
dialogues in the Schema-Guided Dialogue representation:

    {"dialogue_id": "PMUL0698.json", "services": ["restaurant", "train"],
     "turns": [{"turn_id": "0", "speaker": "USER", "utterance": str,
                "frames": [{"service": "restaurant", "actions": [], "slots": [...],
                            "state": {"active_intent": "find_restaurant",
                                      "requested_slots": [...], "slot_values": {...}}},
                           {"service": "taxi", ..., "state": {"active_intent": "NONE", ...}},
                           ...]},
               {"turn_id": "1", "speaker": "SYSTEM", "utterance": str, "frames": []}, ...]}

A user turn has a frame for every service, "NONE" for the inactive ones; system frames hold no
state. Input: one `dialogues_NNN.json` file or one split directory (other files, such as
`schema.json`, are ignored). Confirmed in budzianowski/multiwoz data/MultiWOZ_2.2/README.md (SGD
representation, `state.active_intent`), google-research-datasets/dstc8-schema-guided-dialogue
README.md ("Dialogue Representation") and salesforce/DialogStudio
task-oriented-dialogues/MULTIWOZ2_2/converted_examples.json (whole user-turn frame lists).
sgd.py converts SGD with the same code; dialogstudio.py shares the JSON reading below.

Conversion:
- ids: the native ids unchanged (2.1: the `data.json` key; 2.2: `dialogue_id`); an id that comes
  twice in one conversion is reported;
- speakers "user"/"system": 2.1 by turn parity, checked against `metadata` (a user turn with a
  belief state or a system turn without one breaks the order); 2.2 from `speaker`, which must
  alternate USER, SYSTEM from the first turn;
- text: `text` / `utterance` stripped of surrounding whitespace; a missing, non-string or empty
  text is reported;
- labels {"domains": sorted domains, "domain": the domain when there is exactly one}: 2.1 domains
  are the MULTIWOZ_DOMAINS with a non-empty goal, 2.2 domains the `services`;
- user-turn field "intent" (2.2 and SGD): the `active_intent` other than "NONE" when the turn's
  frames name exactly one; a turn whose frames name several (the user moves between services)
  gets none, since choosing a frame by list order would label the utterance arbitrarily.
"""
import collections
import glob
import json
import os
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from tfdialemb.dialogue import Dialogue, ErrorPolicy, SeenIds, Turn
from tfdialemb.core.options import Option

MULTIWOZ_DOMAINS = ("attraction", "hospital", "hotel", "police", "restaurant", "taxi", "train")
SCHEMA_GUIDED_SPEAKERS = ("USER", "SYSTEM")
NO_INTENT = "NONE"

Location = Union[int, str]
Records = Callable[[Any], Iterable[Tuple[Location, Any]]]
Parser = Callable[[Location, Any], Dialogue]


class BadRecord(ValueError):
    """A native dialogue (or document) that cannot be converted; the message is the reason."""


def input_files(input_path: str, pattern: str, recursive: bool = False) -> List[str]:
    """`input_path` when it is a file, else the files under it whose names match `pattern`."""
    if os.path.isfile(input_path):
        return [input_path]
    if not os.path.isdir(input_path):
        raise FileNotFoundError(f"{input_path}: input file or directory does not exist")
    where = os.path.join(input_path, "**" if recursive else "", pattern)
    files = sorted(path for path in glob.glob(where, recursive=recursive) if os.path.isfile(path))
    if not files:
        raise FileNotFoundError(f"{input_path}: no {pattern} file in this directory")
    return files


def load_json(path: str) -> Any:
    """The decoded document; BadRecord when the file is not UTF-8 or not JSON."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise BadRecord(f"not UTF-8 (byte {e.start})") from e
    except json.JSONDecodeError as e:
        raise BadRecord(f"malformed JSON ({e.msg} at line {e.lineno} column {e.colno})") from e


def keyed_records(document: Any) -> Iterable[Tuple[Location, Any]]:
    """(key, dialogue) of a document that maps dialogue ids to dialogues."""
    if not isinstance(document, dict):
        raise BadRecord(f"expected a JSON object of dialogues by id, got {type(document).__name__}")
    return document.items()


def listed_records(document: Any) -> Iterable[Tuple[Location, Any]]:
    """(dialogue_id, or index when there is none, dialogue) of a JSON list of dialogues."""
    if not isinstance(document, list):
        raise BadRecord(f"expected a JSON list of dialogues, got {type(document).__name__}")
    return ((_id_or_index(record, index), record) for index, record in enumerate(document))


def _id_or_index(record: Any, index: int) -> Location:
    dialogue_id = record.get("dialogue_id") if isinstance(record, dict) else None
    return dialogue_id if isinstance(dialogue_id, str) and dialogue_id else index


def convert_json_files(files: Sequence[str], errors: ErrorPolicy, records: Records,
                       parse: Parser) -> Iterator[Dialogue]:
    """The dialogues of each file in turn, holding one decoded file in memory at a time.

    A file that is not UTF-8 JSON of the expected shape goes to `errors` at location 0 (and is
    skipped); a record that `parse` rejects, or whose id was already produced, goes to `errors`
    under its id or index.
    """
    seen = SeenIds()
    for path in files:
        try:
            located = records(load_json(path))
        except BadRecord as e:
            errors.report(path, 0, str(e))
            continue
        for location, record in located:
            try:
                dialogue = parse(location, record)
            except BadRecord as e:
                errors.report(path, location, str(e))
                continue
            if not seen.add(dialogue.id):
                errors.report(path, location, f"duplicate dialogue id {dialogue.id!r}")
                continue
            yield dialogue


def utterance_text(value: Any, where: str) -> str:
    """The text without surrounding whitespace; BadRecord when missing, not a string or empty."""
    if value is None:
        raise BadRecord(f"{where}: no text")
    if not isinstance(value, str):
        raise BadRecord(f"{where}: text must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise BadRecord(f"{where}: empty text")
    return text


def is_string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def domain_labels(domains: Iterable[str]) -> Dict[str, Any]:
    """{"domains": sorted distinct domains}, plus "domain" when there is exactly one."""
    ordered = sorted(set(domains))
    labels: Dict[str, Any] = {"domains": ordered}
    if len(ordered) == 1:
        labels["domain"] = ordered[0]
    return labels


def goal_domains(goal: Dict[str, Any]) -> List[str]:
    """The MultiWOZ domains a goal uses: those with a non-empty entry."""
    return [domain for domain in MULTIWOZ_DOMAINS if goal.get(domain)]


MULTIWOZ21_SPLITS = {"val": "valListFile.txt", "test": "testListFile.txt"}
"""The released files beside `data.json` that list (one id a line) the official validation and
test dialogues; the rest are the training split."""
MULTIWOZ_SPLIT = Option(
    "multiwoz_split", "all", "keep only this official split (val and test are listed in "
    "valListFile.txt and testListFile.txt beside data.json, train is the rest); all: every dialogue of "
    "data.json, the three splits together.", choices=("all", "train", "val", "test"))


def convert_multiwoz21(input_path: str, errors: ErrorPolicy, multiwoz_split: str = "all",
                       dropped: Optional[collections.Counter] = None) -> Iterator[Dialogue]:
    """Streams the dialogues of MultiWOZ 2.1 `data.json` (or of the directory holding it), all or
    one official split; the dialogues of the other splits are counted in `dropped`."""
    files = input_files(input_path, "data.json")
    dialogues = convert_json_files(files, errors, keyed_records, _multiwoz21_dialogue)
    if multiwoz_split == "all":
        yield from dialogues
        return
    split_of = _listed_splits(os.path.dirname(os.path.abspath(files[0])))
    dropped = collections.Counter() if dropped is None else dropped
    for dialogue in dialogues:
        if split_of.get(dialogue.id, "train") == multiwoz_split:
            yield dialogue
        else:
            dropped[f"another official split than {multiwoz_split}"] += 1


def _listed_splits(directory: str) -> Dict[str, str]:
    """Dialogue id -> "val" or "test", from the release's list files in `directory`."""
    split_of: Dict[str, str] = {}
    for split, name in MULTIWOZ21_SPLITS.items():
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: missing; --multiwoz_split needs the release's {name} beside "
                                    "data.json (MultiWOZ_2.1.zip holds it)")
        with open(path, encoding="utf-8") as f:
            split_of.update((line.strip(), split) for line in f if line.strip())
    return split_of


def _multiwoz21_dialogue(dialogue_id: Location, record: Any) -> Dialogue:
    if not dialogue_id:
        raise BadRecord("empty dialogue id")
    if not isinstance(record, dict):
        raise BadRecord("dialogue is not a JSON object")
    goal, log = record.get("goal"), record.get("log")
    if not isinstance(goal, dict):
        raise BadRecord("'goal' must be an object")
    if not isinstance(log, list) or not log:
        raise BadRecord("'log' must be a non-empty list")
    turns = [_multiwoz21_turn(index, entry) for index, entry in enumerate(log)]
    return Dialogue(str(dialogue_id), turns, domain_labels(goal_domains(goal)))


def _multiwoz21_turn(index: int, entry: Any) -> Turn:
    if not isinstance(entry, dict):
        raise BadRecord(f"turn {index} is not an object")
    metadata = entry.get("metadata")
    if not isinstance(metadata, dict):
        raise BadRecord(f"turn {index}: 'metadata' must be an object")
    is_user = index % 2 == 0
    if is_user == bool(metadata):
        raise BadRecord(f"turn {index}: turn order broken (turns alternate user, system from the "
                        "first; user turns have empty metadata, system turns a belief state)")
    return Turn("user" if is_user else "system", utterance_text(entry.get("text"), f"turn {index}"))


def convert_schema_guided(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams the dialogues of a MultiWOZ 2.2 or SGD `dialogues_NNN.json` file or split folder."""
    yield from convert_json_files(input_files(input_path, "dialogues_*.json"), errors,
                                  listed_records, _schema_guided_dialogue)


def _schema_guided_dialogue(_location: Location, record: Any) -> Dialogue:
    if not isinstance(record, dict):
        raise BadRecord("dialogue is not a JSON object")
    dialogue_id, turns = record.get("dialogue_id"), record.get("turns")
    if not isinstance(dialogue_id, str) or not dialogue_id:
        raise BadRecord("'dialogue_id' must be a non-empty string")
    services = record.get("services")
    if not is_string_list(services):
        raise BadRecord("'services' must be a list of non-empty strings")
    if not isinstance(turns, list) or not turns:
        raise BadRecord("'turns' must be a non-empty list")
    parsed = [_schema_guided_turn(index, turn) for index, turn in enumerate(turns)]
    return Dialogue(dialogue_id, parsed, domain_labels(services))


def _schema_guided_turn(index: int, turn: Any) -> Turn:
    if not isinstance(turn, dict):
        raise BadRecord(f"turn {index} is not an object")
    speaker = SCHEMA_GUIDED_SPEAKERS[index % 2]
    if turn.get("speaker") != speaker:
        raise BadRecord(f"turn {index}: turn order broken (speaker {turn.get('speaker')!r} where "
                        f"{speaker!r} is due; turns alternate USER, SYSTEM from the first)")
    text = utterance_text(turn.get("utterance"), f"turn {index}")
    frames = turn.get("frames")
    if not isinstance(frames, list):
        raise BadRecord(f"turn {index}: 'frames' must be a list")
    intents = _active_intents(index, frames) if speaker == "USER" else set()
    fields = {"intent": intents.pop()} if len(intents) == 1 else {}
    return Turn(speaker.lower(), text, fields)


def _active_intents(index: int, frames: List[Any]) -> Set[str]:
    """The distinct active intents, other than "NONE", that the frames' states name."""
    intents: Set[str] = set()
    for frame in frames:
        if not isinstance(frame, dict):
            raise BadRecord(f"turn {index}: a frame is not an object")
        if "state" not in frame:
            continue
        state = frame["state"]
        if not isinstance(state, dict) or not isinstance(state.get("active_intent"), str):
            raise BadRecord(f"turn {index}: a frame state has no string 'active_intent'")
        if state["active_intent"] != NO_INTENT:
            intents.add(state["active_intent"])
    return intents


FORMATS = {"multiwoz21": convert_multiwoz21, "multiwoz22": convert_schema_guided}
DESCRIPTIONS = {"multiwoz21": "MultiWOZ 2.1 data.json, one split by --multiwoz_split",
                "multiwoz22": "MultiWOZ 2.2 dialogues_*.json, a file or a split folder"}
"""One line on each format, for `data convert --format=help`."""
OPTIONS = {"multiwoz21": (MULTIWOZ_SPLIT,)}
