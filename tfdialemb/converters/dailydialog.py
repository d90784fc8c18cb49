"""DailyDialog (Li et al. 2017, ijcnlp_dailydialog.zip) to canonical dialogues.

Native format: parallel text files, line i of each describing dialogue i.
- `dialogues_text.txt`: one dialogue per line, every utterance followed by `__eou__`
  ("Hi , Tom . __eou__ Hello ! __eou__"); the line ends with the marker.
- `dialogues_topic.txt`: one topic number per line, 1 Ordinary Life, 2 School Life,
  3 Culture & Education, 4 Attitude & Emotion, 5 Relationship, 6 Tourism, 7 Health, 8 Work,
  9 Politics, 10 Finance.
- `dialogues_act.txt`: one act number per utterance, space-separated: 1 inform, 2 question,
  3 directive, 4 commissive.
- `dialogues_emotion.txt`: one emotion number per utterance, space-separated: 0 no emotion,
  1 anger, 2 disgust, 3 fear, 4 happiness, 5 sadness, 6 surprise.
- train.zip / validation.zip / test.zip unpack to folders `<split>/` holding
  `dialogues_<split>.txt`, `dialogues_act_<split>.txt`, `dialogues_emotion_<split>.txt`
  (no topic file).
Confirmed in the release's readme.txt (copies in snakeztc/NeuralDialog-LAED data/daily_dialog/
readme.txt and Ls-Dai/Deep-Reinforcement-Learning-for-Dialogue-Generation-in-PyTorch
data/readme.txt: topic, act and emotion numbering) and in huggingface/datasets
datasets/daily_dialog/daily_dialog.py (split file names, `line.split("__eou__")[:-1]`, one act and
one emotion per utterance, same names for the act and emotion numbers).

Conversion:
- `input_path` is the text file; its annotation files are found by the naming scheme above
  (`dialogues_text.txt` -> `dialogues_<kind>.txt`, `dialogues_<split>.txt` ->
  `dialogues_<kind>_<split>.txt`) and read when present, line by line alongside the text;
- one line -> one Dialogue with id "<file stem>-<line number>" (e.g. "dialogues_train-3");
- the corpus records no speakers: they alternate "A"/"B" from the first utterance;
- labels {"topic": name} when a topic file is present; per-turn fields "act" and "emotion" (names
  as above) when those files are present;
- a blank line, a line not ending with `__eou__`, an empty utterance, an unknown number, an
  annotation line whose count differs from the dialogue's utterance count, or annotation and text
  files of different lengths are reported, and the dialogue is skipped.
"""
import os
from typing import Dict, Iterator, List, Optional

from tfdialemb.converters.native import alternate_speakers, iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn

END_OF_UTTERANCE = "__eou__"
TOPICS = {
    "1": "Ordinary Life", "2": "School Life", "3": "Culture & Education",
    "4": "Attitude & Emotion", "5": "Relationship", "6": "Tourism", "7": "Health", "8": "Work",
    "9": "Politics", "10": "Finance",
}
ACTS = {"1": "inform", "2": "question", "3": "directive", "4": "commissive"}
EMOTIONS = {
    "0": "no emotion", "1": "anger", "2": "disgust", "3": "fear", "4": "happiness",
    "5": "sadness", "6": "surprise",
}
PER_TURN_NAMES = {"act": ACTS, "emotion": EMOTIONS}
ANNOTATION_KINDS = ("topic",) + tuple(PER_TURN_NAMES)


def annotation_paths(text_path: str) -> Dict[str, str]:
    """The existing annotation files of a DailyDialog text file, by kind (topic/act/emotion)."""
    directory, name = os.path.split(text_path)
    stem, extension = os.path.splitext(name)
    prefix = "dialogues_"
    if not stem.startswith(prefix):
        return {}
    split = stem[len(prefix):]
    found = {}
    for kind in ANNOTATION_KINDS:
        sibling = f"{prefix}{kind}" if split == "text" else f"{prefix}{kind}_{split}"
        path = os.path.join(directory, sibling + extension)
        if os.path.isfile(path):
            found[kind] = path
    return found


class _ParallelFile:
    """An annotation file read in step with the text file: line n answers text line n."""

    def __init__(self, path: str, text_path: str, errors: ErrorPolicy):
        self.path, self._text_path, self._errors = path, text_path, errors
        self._lines = iter_lines(path, errors)
        self._advance()

    def line(self, number: int) -> Optional[str]:
        """Line `number`; None when it was unreadable (reported by iter_lines) or is missing."""
        while self._pending is not None and self._pending[0] < number:
            self._advance()
        if self._pending is None:
            self._errors.report(self.path, number, f"missing: the file ends before line {number} "
                                                   f"of {self._text_path}")
            return None
        if self._pending[0] > number:
            return None
        text = self._pending[1]
        self._advance()
        return text

    def report_lines_after(self, last_number: int) -> None:
        """Reports every line past `last_number`, the text file's last line."""
        while self._pending is not None:
            number = self._pending[0]
            if number > last_number:
                self._errors.report(self.path, number, f"extra line: {self._text_path} has only "
                                                       f"{last_number} lines")
            self._advance()

    def _advance(self) -> None:
        self._pending = next(self._lines, None)


def _utterances(line: str) -> List[str]:
    pieces = [piece.strip() for piece in line.split(END_OF_UTTERANCE)]
    if pieces[-1]:
        raise ValueError(f"the line does not end with {END_OF_UTTERANCE}")
    utterances = pieces[:-1]
    empty = [index for index, text in enumerate(utterances, start=1) if not text]
    if empty:
        raise ValueError(f"empty utterance(s) {empty} (1-based)")
    return utterances


def _topic(line: str) -> str:
    number = line.strip()
    if number not in TOPICS:
        raise ValueError(f"topic must be a number 1-10, got {line!r}")
    return TOPICS[number]


def _per_turn(kind: str, line: str, utterance_count: int) -> List[str]:
    names = PER_TURN_NAMES[kind]
    numbers = line.split()
    if len(numbers) != utterance_count:
        raise ValueError(f"{len(numbers)} {kind} label(s) for {utterance_count} utterance(s)")
    unknown = sorted(set(numbers) - set(names))
    if unknown:
        raise ValueError(f"unknown {kind} number(s) {unknown}, expected {sorted(names)}")
    return [names[number] for number in numbers]


def convert_dailydialog(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams one Dialogue per line of a DailyDialog text file, with its annotation files."""
    stem = os.path.splitext(os.path.basename(input_path))[0]
    annotations = {kind: _ParallelFile(path, input_path, errors)
                   for kind, path in annotation_paths(input_path).items()}
    last_number = 0
    for number, line in iter_lines(input_path, errors):
        last_number = number
        if not line.strip():
            errors.report(input_path, number, "blank line")
            continue
        try:
            utterances = _utterances(line)
        except ValueError as e:
            errors.report(input_path, number, str(e))
            continue
        labels: Dict[str, str] = {}
        per_turn: Dict[str, List[str]] = {}
        complete = True
        for kind, annotation in annotations.items():
            annotation_line = annotation.line(number)
            if annotation_line is None:
                complete = False
                break
            try:
                if kind == "topic":
                    labels["topic"] = _topic(annotation_line)
                else:
                    per_turn[kind] = _per_turn(kind, annotation_line, len(utterances))
            except ValueError as e:
                errors.report(annotation.path, number, str(e))
                complete = False
                break
        if not complete:
            continue
        turns = [Turn(turn.speaker, turn.text, {kind: names[i] for kind, names in per_turn.items()})
                 for i, turn in enumerate(alternate_speakers(utterances))]
        yield Dialogue(id=f"{stem}-{number}", turns=turns, labels=labels)
    for annotation in annotations.values():
        annotation.report_lines_after(last_number)


FORMATS = {"dailydialog": convert_dailydialog}
DESCRIPTIONS = {"dailydialog": "DailyDialog dialogues_text.txt with its topic, act and emotion files beside it"}
"""One line on each format, for `data convert --format=help`."""
