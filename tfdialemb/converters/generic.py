"""Your own dialogues to canonical dialogues: JSON, JSON Lines, YAML and plain text.

For corpora that no named converter knows. The layouts:

- `jsonl`: one dialogue per line.
- `json`: one document per file, either a list of dialogues or an object holding that list under
  `--dialogues_key` (by default its only key whose value is a list of lists or objects).
- `yaml`: as `json`. Every scalar is read as a string, so a turn `no` stays "no" and `1.50` stays
  "1.50" (YAML's own typing would make them a boolean and a number).
- `text`: one turn per line, a blank line between dialogues; speakers alternate A, B. A dialogue
  with a non-UTF-8 line is reported and skipped whole (its speakers would shift without it).

A dialogue (json, jsonl, yaml) is a list of turns, or an object holding that list under
`--turns_key` (default `turns`). A turn is a string, or an object whose `--text_key` (default
`text`) is its text and `--speaker_key` (default `speaker`) its speaker; its other keys are kept as
turn fields (e.g. an `intent`). Where no turn of a dialogue names a speaker, the speakers alternate
A, B; where some do and some do not, the dialogue is reported.

Labels: each key of `--label_key` (comma-separated) is copied into the dialogue's `labels` from the
dialogue object, else from the document object holding the dialogues, so one label can cover a
whole file. A label that is a list keeps its first item, as in chatterbot-corpus, whose
`categories` list a category and then its synonyms (`[AI, artificial intelligence]` gives "AI").

Ids: the dialogue's `--id_key` (default `id`) when it has one, else "<file stem>-<n>", n counting
the file's dialogues from 1 (for `--input` a directory, the stem is the file's path under it).
`--input` may be a directory: its files with the format's extensions (.json, .jsonl, .yml or
.yaml, .txt), at any depth, in sorted order. `jsonl` and `text` stream; a `json` or `yaml` file is
read whole, one file at a time (give a large corpus as JSON Lines).

A bad dialogue is reported with its file and line (jsonl, text) or its position in the document
(`dialogue 3`), and skipped with --on_error=skip; a duplicate id is reported the same way.

Example: chatterbot-corpus (PyPI `chatterbot-corpus`), whose files read
`categories: [AI, artificial intelligence]` and `conversations: [[What is AI?, Artificial
Intelligence is ...], ...]`:

    python -m tfdialemb.data convert --format=yaml --input=chatterbot_corpus/data/english \
        --label_key=categories --output=chatterbot.jsonl
"""
import itertools
import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from tfdialemb.converters.native import alternate_speakers, iter_lines
from tfdialemb.core.inputs import check_input_file
from tfdialemb.dialogue import TOO_DEEP, Dialogue, ErrorPolicy, SeenIds, json_lines, parse_dialogue
from tfdialemb.core.options import Option

TEXT_KEY = Option("text_key", "text", "the key of a turn object holding its text.")
SPEAKER_KEY = Option("speaker_key", "speaker", "the key of a turn object naming its "
                     "speaker (turns without one: speakers alternate A, B).")
LABEL_KEY = Option("label_key", None, "comma-separated keys of the dialogue (or of the "
                   "document holding it) copied into its labels; a list keeps its first item.", kind=str)
TURNS_KEY = Option("turns_key", "turns", "the key of a dialogue object holding its turns.")
ID_KEY = Option("id_key", "id", "the key of a dialogue object holding its id (else "
                "<file stem>-<n>).")
DIALOGUES_KEY = Option("dialogues_key", None, "the key of the document object holding the list "
                       "of dialogues (default: its only key holding a list of lists or objects).", kind=str)
RECORD_OPTIONS = (TEXT_KEY, SPEAKER_KEY, LABEL_KEY, TURNS_KEY, ID_KEY)
EXTENSIONS = {"json": (".json",), "jsonl": (".jsonl",), "yaml": (".yml", ".yaml"), "text": (".txt",)}

Location = Union[int, str]


class _Layout:
    """The keys that say where a record keeps its turns, texts, speakers, labels and id."""

    def __init__(self, text_key: str = "text", speaker_key: str = "speaker", label_key: Optional[str] = None,
                 turns_key: str = "turns", id_key: str = "id"):
        self.text_key, self.speaker_key, self.turns_key, self.id_key = text_key, speaker_key, turns_key, id_key
        self.label_keys = [key.strip() for key in (label_key or "").split(",") if key.strip()]

    def dialogue(self, record: Any, default_id: str, document_labels: Dict[str, Any]) -> Dialogue:
        """The canonical dialogue of one record; ValueError with the reason when it is not one."""
        if isinstance(record, dict):
            if self.turns_key not in record:
                raise ValueError(f"no {self.turns_key!r} key (it has {sorted(record)}); name the key holding "
                                 "the turns with --turns_key")
            turns, own = record[self.turns_key], record
        else:
            turns, own = record, {}
        if not isinstance(turns, list):
            raise ValueError(f"the turns must be a list, got {type(turns).__name__}")
        dialogue_id = own.get(self.id_key, default_id)
        if not isinstance(dialogue_id, (str, int)) or isinstance(dialogue_id, bool):
            raise ValueError(f"{self.id_key!r} must be a string or an integer, got {dialogue_id!r}")
        labels = {}
        for key in self.label_keys:
            if key in own or key in document_labels:
                labels[key] = _label_value(key, own[key] if key in own else document_labels[key])
        return parse_dialogue({"id": str(dialogue_id), "turns": self._turns(turns), "labels": labels})

    def _turns(self, turns: List[Any]) -> List[Dict[str, Any]]:
        records = []
        for index, turn in enumerate(turns):
            if isinstance(turn, str):
                records.append({"text": turn})
            elif isinstance(turn, dict):
                if self.text_key not in turn:
                    raise ValueError(f"turn {index} has no {self.text_key!r} key (it has {sorted(turn)}); "
                                     "name the key holding the text with --text_key")
                fields = {k: v for k, v in turn.items() if k not in (self.text_key, self.speaker_key)}
                record = {**fields, "text": turn[self.text_key]}
                if self.speaker_key in turn:
                    speaker = turn[self.speaker_key]
                    if isinstance(speaker, bool) or not isinstance(speaker, (str, int)):
                        raise ValueError(f"turn {index}: speaker {speaker!r} is not a string or an integer")
                    record["speaker"] = str(speaker)
                records.append(record)
            else:
                raise ValueError(f"turn {index} is a {type(turn).__name__}, not a string or an object")
        named = sum("speaker" in record for record in records)
        if 0 < named < len(records):
            missing = next(i for i, record in enumerate(records) if "speaker" not in record)
            raise ValueError(f"turn {missing} has no {self.speaker_key!r} while {named} other turn(s) have one")
        if not named:
            for record, turn in zip(records, alternate_speakers([r["text"] for r in records])):
                record["speaker"] = turn.speaker
        return records


def _label_value(key: str, value: Any) -> Any:
    if isinstance(value, list):
        if not value:
            raise ValueError(f"label {key!r} is an empty list")
        value = value[0]
    if isinstance(value, (dict, list)) or value is None:
        raise ValueError(f"label {key!r} must be a string, number or boolean (or a list of them), got {value!r}")
    return value


def input_files(input_path: str, extensions: Sequence[str]) -> List[Tuple[str, str]]:
    """(path, id stem) of the file `input_path`, or of every file under the directory `input_path`
    whose name ends with one of `extensions`, in sorted order."""
    if not os.path.isdir(input_path):
        check_input_file(input_path, "input file")
        return [(input_path, os.path.splitext(os.path.basename(input_path))[0])]
    found = []
    for directory, _, names in os.walk(input_path):
        for name in names:
            if name.endswith(tuple(extensions)):
                path = os.path.join(directory, name)
                found.append((path, os.path.splitext(os.path.relpath(path, input_path))[0]))
    if not found:
        raise FileNotFoundError(f"{input_path}: holds no {' or '.join(extensions)} file")
    return sorted(found)


class _UniqueIds:
    """Reports a dialogue whose id an earlier dialogue of the conversion took (ids kept as
    hashes, `SeenIds`)."""

    def __init__(self, errors: ErrorPolicy):
        self.errors, self.seen = errors, SeenIds()

    def keep(self, dialogue: Dialogue, path: str, location: Location) -> bool:
        if not self.seen.add(dialogue.id):
            self.errors.report(path, location, f"duplicate id {dialogue.id!r}")
            return False
        return True


def _converted(layout: _Layout, record: Any, default_id: str, document_labels: Dict[str, Any],
               path: str, location: Location, errors: ErrorPolicy, ids: _UniqueIds) -> Optional[Dialogue]:
    try:
        dialogue = layout.dialogue(record, default_id, document_labels)
    except ValueError as e:
        errors.report(path, location, str(e))
        return None
    return dialogue if ids.keep(dialogue, path, location) else None


def convert_jsonl(input_path: str, errors: ErrorPolicy, **keys) -> Iterator[Dialogue]:
    """One dialogue per line of each JSON Lines file."""
    layout, ids = _Layout(**keys), _UniqueIds(errors)
    for path, stem in input_files(input_path, EXTENSIONS["jsonl"]):
        for count, (number, record) in enumerate(json_lines(path, errors, skip_blank=True), start=1):
            dialogue = _converted(layout, record, f"{stem}-{count}", {}, path, number, errors, ids)
            if dialogue is not None:
                yield dialogue


def _documents(name: str, read):
    """The converter of format `name`, whose files each hold one document read by `read(path)`."""

    def convert(input_path: str, errors: ErrorPolicy, dialogues_key: Optional[str] = None,
                **keys) -> Iterator[Dialogue]:
        layout, ids = _Layout(**keys), _UniqueIds(errors)
        for path, stem in input_files(input_path, EXTENSIONS[name]):
            try:
                document = read(path)
            except ValueError as e:
                errors.report(path, 1, f"not {name.upper()}: {e}")
                continue
            try:
                records, document_labels = _dialogue_list(document, dialogues_key)
            except ValueError as e:
                errors.report(path, "document", str(e))
                continue
            for index, record in enumerate(records, start=1):
                dialogue = _converted(layout, record, f"{stem}-{index}", document_labels, path,
                                      f"dialogue {index}", errors, ids)
                if dialogue is not None:
                    yield dialogue

    return convert


def _dialogue_list(document: Any, dialogues_key: Optional[str]) -> Tuple[List[Any], Dict[str, Any]]:
    """(the document's dialogues, the document object whose keys may be labels)."""
    if isinstance(document, list):
        if dialogues_key:
            raise ValueError(f"the document is a list, so it has no --dialogues_key={dialogues_key}")
        return document, {}
    if not isinstance(document, dict):
        raise ValueError(f"expected a list of dialogues or an object holding one, got {type(document).__name__}")
    if dialogues_key is None:
        lists = sorted(key for key, value in document.items()
                       if isinstance(value, list) and value and isinstance(value[0], (list, dict)))
        if len(lists) != 1:
            raise ValueError(f"the document object holds lists of lists or objects under {lists}; name the "
                             "one holding the dialogues with --dialogues_key")
        dialogues_key = lists[0]
    if not isinstance(document.get(dialogues_key), list):
        raise ValueError(f"the document has no list under {dialogues_key!r} (its keys: {sorted(document)})")
    return document[dialogues_key], document


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8-sig") as f:
        try:
            return json.load(f)
        except UnicodeDecodeError as e:
            raise ValueError(f"not UTF-8 ({e.reason} at byte {e.start})") from None
        except RecursionError:
            raise ValueError(TOO_DEEP) from None


def _read_yaml(path: str) -> Any:
    import yaml  # pylint: disable=import-outside-toplevel

    loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # every scalar a string
    with open(path, encoding="utf-8-sig") as f:
        try:
            return yaml.load(f, Loader=loader)  # noqa: S506 (BaseLoader builds no objects)
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise ValueError(str(e).replace("\n", " ")) from None


def convert_text(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """One turn per line, dialogues separated by blank lines; speakers alternate A, B.

    A dialogue with an unreadable (non-UTF-8) line is reported and skipped whole: without that
    turn, the speakers of the turns after it would swap."""
    ids = _UniqueIds(errors)
    for path, stem in input_files(input_path, EXTENSIONS["text"]):
        count, texts, first_line, broken, reported = 0, [], 0, False, errors.skipped
        for number, line in itertools.chain(iter_lines(path, errors), [(None, "")]):
            if errors.skipped > reported and (texts or line.strip()):
                broken = True  # iter_lines skipped a line of this dialogue
            if line.strip():
                texts.append(line.strip())
                first_line = first_line or number
            else:
                if texts:
                    count += 1
                    if broken:
                        errors.report(path, first_line, "dialogue skipped: one of its lines is not UTF-8")
                    else:
                        dialogue = _converted(_Layout(), texts, f"{stem}-{count}", {}, path, first_line, errors,
                                              ids)
                        if dialogue is not None:
                            yield dialogue
                texts, first_line, broken = [], 0, False
            reported = errors.skipped


FORMATS = {"json": _documents("json", _read_json), "jsonl": convert_jsonl, "yaml": _documents("yaml", _read_yaml),
           "text": convert_text}
DESCRIPTIONS = {"json": "any JSON document per file: a list of dialogues, keys chosen by --turns_key, --text_key, ...",
                "jsonl": "any JSON Lines file, one dialogue per line, keys chosen by --turns_key, --text_key, ...",
                "yaml": "any YAML document per file, read as json (e.g. chatterbot-corpus)",
                "text": "plain text, one turn per line, a blank line between dialogues"}
"""One line on each format, for `data convert --format=help`."""
OPTIONS = {"json": RECORD_OPTIONS + (DIALOGUES_KEY,), "jsonl": RECORD_OPTIONS,
                  "yaml": RECORD_OPTIONS + (DIALOGUES_KEY,), "text": ()}
"""The flags of `python -m tfdialemb.data convert` each format takes, passed as keyword arguments."""
