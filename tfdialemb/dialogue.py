"""The canonical dialogue: JSON Lines, one dialogue per line, validated line by line.

  {"id": "d1", "turns": [{"speaker": "user", "text": "hi", "intent": "greet"}, ...],
   "labels": {"domain": "hotel"}}

`id` is a non-empty string unique in its file, `turns` a non-empty list of objects each with a
non-empty string `speaker` and a non-empty string `text` (other turn fields, e.g. `intent`, are
kept), `labels` an optional object. Every method reads dialogues through `read_dialogues`; every
converter writes them through `write_dialogues`.
"""
import array
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import unicodedata
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from tfdialemb.core.files import atomic_open
from tfdialemb.core.inputs import InputLineError, check_input_file

ON_ERROR = ("fail", "skip")
SPLITS = ("train", "dev", "test")
SPLIT_METHODS = ("id_hash", "released")
"""How `split_dialogues` assigns splits: `split_of` each id, or `released_splits` of the file's order."""


class DialogueFormatError(InputLineError):
    """A bad line of a dialogue file, native or canonical: names the file, line and reason."""

    def __init__(self, path: str, location: Union[int, str], reason: str):
        """`location` is a 1-based line number, or for JSON documents the record's key or index."""
        super().__init__(f"{path}:{location}: {reason}")
        self.path, self.location, self.reason = path, location, reason


class ErrorPolicy:
    """What to do with a bad input line: `fail` raises at once, `skip` counts it and goes on.

    Skipped lines are counted in `skipped`; the messages of the first `keep` are kept for the
    caller to show.
    """

    def __init__(self, mode: str = "fail", keep: int = 20):
        if mode not in ON_ERROR:
            raise ValueError(f"on_error must be one of {ON_ERROR}, got {mode!r}")
        self.mode = mode
        self.keep = keep
        self.skipped = 0
        self.messages: List[str] = []

    def report(self, path: str, location: Union[int, str], reason: str) -> None:
        error = DialogueFormatError(path, location, reason)
        if self.mode == "fail":
            raise error
        self.skipped += 1
        if len(self.messages) < self.keep:
            self.messages.append(str(error))


@dataclasses.dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        return {"speaker": self.speaker, "text": self.text, **self.fields}


@dataclasses.dataclass(frozen=True)
class Dialogue:
    id: str
    turns: Tuple[Turn, ...]
    labels: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "turns", tuple(self.turns))

    @property
    def speakers(self) -> List[str]:
        """Distinct speakers in order of first appearance."""
        return list(dict.fromkeys(turn.speaker for turn in self.turns))

    def to_json(self) -> Dict[str, Any]:
        record = {"id": self.id, "turns": [turn.to_json() for turn in self.turns]}
        if self.labels:
            record["labels"] = dict(self.labels)
        return record

    def to_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, sort_keys=False)


INVISIBLE_CATEGORIES = ("Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Zl", "Zp")
"""Unicode categories the tokenizer drops or splits on: control, format (zero-width), unassigned,
private-use and surrogate code points, and separators."""


def has_visible_text(text: str) -> bool:
    """Whether `text` has a character the tokenizer keeps as (part of) a token; a text of only
    zero-width or control characters would train on an empty sequence."""
    return any(unicodedata.category(c) not in INVISIBLE_CATEGORIES for c in text)


def parse_dialogue(record: Any) -> Dialogue:
    """A Dialogue from a decoded JSON value; ValueError with the reason when it is not one."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - {"id", "turns", "labels"})
    if unknown:
        raise ValueError(f"unknown top-level keys {unknown}")
    dialogue_id = record.get("id")
    if not isinstance(dialogue_id, str) or not dialogue_id:
        raise ValueError("'id' must be a non-empty string")
    turns = record.get("turns")
    if not isinstance(turns, list):
        raise ValueError("'turns' must be a list")
    if not turns:
        raise ValueError("no turns")
    parsed = []
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise ValueError(f"turn {index} is not an object")
        speaker, text = turn.get("speaker"), turn.get("text")
        if "speaker" not in turn:
            raise ValueError(f"turn {index} has no 'speaker'")
        if not isinstance(speaker, str) or not speaker.strip():
            raise ValueError(f"turn {index}: 'speaker' must be a non-empty string")
        if "text" not in turn:
            raise ValueError(f"turn {index} has no 'text'")
        if not isinstance(text, str):
            raise ValueError(f"turn {index}: 'text' must be a string")
        if not text.strip():
            raise ValueError(f"turn {index} has empty text")
        if not has_visible_text(text):
            raise ValueError(f"turn {index}: 'text' has only invisible characters "
                             f"({', '.join(f'U+{ord(c):04X}' for c in sorted(set(text))[:5])})")
        fields = {k: v for k, v in turn.items() if k not in ("speaker", "text")}
        parsed.append(Turn(speaker, text, fields))
    labels = record.get("labels", {})
    if not isinstance(labels, dict):
        raise ValueError("'labels' must be an object")
    return Dialogue(dialogue_id, tuple(parsed), labels)


ALTERNATING_SPEAKERS = ("A", "B")
"""The speakers `as_dialogue` gives a list of turn texts: A says the first turn, B the second, ..."""


def as_dialogue(value: Any, dialogue_id: str) -> Dialogue:
    """A Dialogue from any form the embedders take: a Dialogue; a canonical JSON object
    (`parse_dialogue`); or a list of turn texts whose speakers alternate (ALTERNATING_SPEAKERS),
    given `dialogue_id`. A ValueError with the reason otherwise."""
    if isinstance(value, Dialogue):
        return value
    if isinstance(value, Mapping):
        return parse_dialogue(dict(value))
    if isinstance(value, (list, tuple)):
        return parse_dialogue({"id": dialogue_id, "turns": [
            {"speaker": ALTERNATING_SPEAKERS[index % 2], "text": text} for index, text in enumerate(value)]})
    raise ValueError(f"expected a canonical dialogue object, a list of turn texts or a Dialogue, got "
                     f"{type(value).__name__}")


def iter_lines(path: str, errors: ErrorPolicy) -> Iterator[Tuple[int, str]]:
    """(1-based line number, line without its newline) for each UTF-8 line of `path`.

    A line that is not UTF-8 goes to `errors`; blank lines are passed on for the caller to judge.
    """
    check_input_file(path, "input file")
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                errors.report(path, number, f"not UTF-8 (byte {e.start}: {raw[e.start:e.start + 1]!r})")
                continue
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]  # a UTF-8 byte-order mark, as some editors write one
            yield number, text.rstrip("\n").rstrip("\r")


class _RefusedJson(ValueError):
    """A line Python's decoder reads but the canonical format refuses: a key given twice in one
    object, or a bare NaN or infinity."""


def _unique_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """A decoded JSON object, refusing a key given twice: json.loads would keep the last value
    without a word, so which speaker or text a turn has would depend on the writer's order."""
    record = dict(pairs)
    if len(record) != len(pairs):
        repeated = sorted({key for key, _ in pairs if sum(1 for other, _ in pairs if other == key) > 1})
        raise _RefusedJson(f"duplicate key{'s' if len(repeated) > 1 else ''} {', '.join(map(repr, repeated))} "
                            "in one object")
    return record


TOO_DEEP = "JSON nested deeper than Python's decoder can follow"
"""Why a JSON value that exhausts Python's recursion limit (100,000 nested brackets) is refused."""


def _no_constant(name: str) -> float:
    """Refuses a bare NaN, Infinity or -Infinity, which Python's decoder reads although JSON has
    none: a NaN label would pass `validate` and be refused only by `evaluate`."""
    raise _RefusedJson(f"{name} is not JSON (write a number, or null)")


def json_lines(path: str, errors: ErrorPolicy, skip_blank: bool = False) -> Iterator[Tuple[int, Any]]:
    """(1-based line number, decoded JSON value) of each line of `path`; malformed JSON (and a
    blank line, unless `skip_blank`), an object with a key given twice, a bare NaN or infinity and
    a value nested deeper than Python's decoder can follow go to `errors`."""
    for number, line in iter_lines(path, errors):
        if not line.strip():
            if not skip_blank:
                errors.report(path, number, "blank line")
            continue
        try:
            record = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
        except json.JSONDecodeError as e:
            errors.report(path, number, f"malformed JSON ({e.msg} at column {e.colno})")
            continue
        except _RefusedJson as e:
            errors.report(path, number, str(e))
            continue
        except RecursionError:
            errors.report(path, number, TOO_DEEP)
            continue
        yield number, record


class SeenIds:
    """A set of strings kept as their 64-bit hashes (Python's keyed SipHash) in an open-addressing
    table: 16 to 32 bytes per string, not the 80 or more of a Python set of strings, so checking the
    ids of a corpus of millions of dialogues stays small. Two distinct strings share a hash with
    probability 2^-64 per pair (for 10 million ids, 3 in a million that one pair does)."""

    def __init__(self):
        self._table = _zeros(1024)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: str) -> bool:
        digest = hash(key) & _DIGEST_MASK or 1
        mask = len(self._table) - 1
        slot = digest & mask
        while self._table[slot]:
            if self._table[slot] == digest:
                return True
            slot = (slot + 1) & mask
        return False

    def add(self, key: str) -> bool:
        """Adds `key`; False when it was already there."""
        digest = hash(key) & _DIGEST_MASK or 1
        if not self._insert(self._table, digest):
            return False
        self._count += 1
        if 2 * self._count > len(self._table):
            grown = _zeros(2 * len(self._table))
            for value in self._table:
                if value:
                    self._insert(grown, value)
            self._table = grown
        return True

    @staticmethod
    def _insert(table: array.array, digest: int) -> bool:
        """Puts a non-zero `digest` into `table` by linear probing; False if it is there."""
        mask = len(table) - 1
        slot = digest & mask
        while True:
            found = table[slot]
            if found == 0:
                table[slot] = digest
                return True
            if found == digest:
                return False
            slot = (slot + 1) & mask


_DIGEST_MASK = (1 << 64) - 1


def _zeros(size: int) -> array.array:
    return array.array("Q", bytes(8 * size))


def read_dialogues(path: str, errors: Optional[ErrorPolicy] = None) -> Iterator[Dialogue]:
    """Streams the dialogues of a canonical JSONL file, validating every line.

    Bad lines (malformed JSON, non-UTF-8 bytes, a blank line, a duplicate id, or a record that
    `parse_dialogue` rejects) go to `errors` (default: fail on the first). Memory holds one line
    and the ids seen, as 64-bit hashes (`SeenIds`).
    """
    errors = errors or ErrorPolicy("fail")
    seen = SeenIds()
    for number, record in json_lines(path, errors):
        try:
            dialogue = parse_dialogue(record)
        except ValueError as e:
            errors.report(path, number, str(e))
            continue
        if not seen.add(dialogue.id):
            errors.report(path, number, f"duplicate id {dialogue.id!r}")
            continue
        yield dialogue


def write_dialogues(dialogues: Iterable[Dialogue], path: str) -> int:
    """Writes JSONL to `path` atomically (temporary file, renamed when complete); returns the count."""
    count = 0
    with atomic_open(path) as f:
        for dialogue in dialogues:
            f.write(dialogue.to_line() + "\n")
            count += 1
    return count


def split_dialogues(path: str, output_dir: str, seed: int,
                    fractions: Sequence[float] = (0.8, 0.1, 0.1),
                    errors: Optional[ErrorPolicy] = None, method: str = "id_hash") -> Dict[str, int]:
    """Streams `path` into `output_dir/{train,dev,test}.jsonl` by `split_of` (`method` "id_hash")
    or by `released_splits` of the file's order ("released", which reads the file twice); returns
    the counts.

    The three files are renamed into place together once the input has been read to the end; a
    failed split leaves no directory it created.
    """
    if method not in SPLIT_METHODS:
        raise ValueError(f"split method must be one of {SPLIT_METHODS}, got {method!r}")
    if method == "released":
        # Counted with the same reading (bad lines skipped alike), reported by the second pass.
        count = sum(1 for _ in read_dialogues(path, ErrorPolicy("skip") if errors and errors.mode == "skip" else None))
        positions = iter(released_splits(count, seed, fractions))
    counts = {split: 0 for split in SPLITS}
    created = not os.path.exists(output_dir)
    try:
        with contextlib.ExitStack() as stack:
            files = {split: stack.enter_context(atomic_open(os.path.join(output_dir, f"{split}.jsonl")))
                     for split in SPLITS}
            for dialogue in read_dialogues(path, errors):
                split = next(positions) if method == "released" else split_of(dialogue.id, seed, fractions)
                files[split].write(dialogue.to_line() + "\n")
                counts[split] += 1
    except BaseException:
        if created and os.path.isdir(output_dir) and not os.listdir(output_dir):
            os.rmdir(output_dir)
        raise
    return counts


def merge_consecutive_turns(dialogue: Dialogue, separator: str = " ") -> Dialogue:
    """Joins consecutive turns of the same speaker into one (DialogueCSE and dial2vec do this).

    The merged turn keeps the fields (e.g. intent) of the first turn of its run.
    """
    merged: List[Turn] = []
    for turn in dialogue.turns:
        if merged and merged[-1].speaker == turn.speaker:
            last = merged[-1]
            merged[-1] = Turn(last.speaker, last.text + separator + turn.text, last.fields)
        else:
            merged.append(turn)
    return dataclasses.replace(dialogue, turns=tuple(merged))


def drop_short(dialogues: Iterable[Dialogue], min_turns: int) -> Iterator[Dialogue]:
    """Dialogues with at least `min_turns` turns (DialogueCSE drops JDDC/ECD dialogues under 4)."""
    return (d for d in dialogues if len(d.turns) >= min_turns)


def role_ids(dialogue: Dialogue) -> List[int]:
    """Per turn, the index of its speaker in order of first appearance (0, 1, ...)."""
    index = {speaker: i for i, speaker in enumerate(dialogue.speakers)}
    return [index[turn.speaker] for turn in dialogue.turns]


def capped_roles(dialogue: Dialogue, max_roles: int) -> List[int]:
    """Per turn, its speaker's role id, speakers past `max_roles` folded into the last role."""
    if max_roles < 2:
        raise ValueError(f"max_roles must be at least 2, got {max_roles}")
    return [min(role, max_roles - 1) for role in role_ids(dialogue)]


def _check_fractions(fractions: Sequence[float]) -> None:
    if len(fractions) != len(SPLITS) or not all(f >= 0 for f in fractions) or not abs(sum(fractions) - 1.0) <= 1e-9:
        # Written so that NaN, for which every comparison is false, fails the test.
        raise ValueError(f"fractions must be three non-negative numbers summing to 1, got {fractions}")


def released_splits(count: int, seed: int, fractions: Sequence[float] = (0.9, 0.05, 0.05)) -> List[str]:
    """The split of each of `count` dialogues by position, as the thesis' released corpus was split
    (voorhs/dialogue-augmentation mylib/datamakers/source.py:111-120, Hugging Face datasets'
    `train_test_split`): the first ceil((dev + test) · n) of numpy `default_rng(seed).permutation(n)`
    are held out, the rest train; the held-out ones, in that order and unshuffled, are cut into dev,
    the first m − ceil(test / (dev + test) · m), and test, the rest (source.py: 0.1, then 0.5 of it,
    dev being its "val")."""
    _check_fractions(fractions)
    held = fractions[1] + fractions[2]
    splits = ["train"] * count
    if count == 0 or held == 0:
        return splits
    permutation = np.random.default_rng(seed).permutation(count)
    held_out = permutation[:math.ceil(held * count)]  # as train_test_split's float test_size
    to_test = math.ceil(fractions[2] / held * len(held_out))
    for index in held_out[:len(held_out) - to_test]:
        splits[index] = "dev"
    for index in held_out[len(held_out) - to_test:]:
        splits[index] = "test"
    return splits


def split_of(dialogue_id: str, seed: int, fractions: Sequence[float] = (0.8, 0.1, 0.1)) -> str:
    """The split ("train", "dev", "test") a dialogue belongs to, from a hash of seed and id.

    Independent of file order and of the other dialogues, so a corpus splits while streaming and
    a dialogue keeps its split when the corpus grows.
    """
    _check_fractions(fractions)
    digest = hashlib.sha256(f"{seed}\x00{dialogue_id}".encode("utf-8")).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64
    bound = 0.0
    for split, fraction in zip(SPLITS, fractions):
        bound += fraction
        if point < bound:
            return split
    return SPLITS[-1]
