"""Corpus statistics in one streaming pass: dialogues, turns, speakers, labels, token-length percentiles.

Lengths are WordPiece tokens when a tokenizer is given, else BERT's basic (pre-WordPiece) words,
counted in Python (`tfdialemb.text.basic_words`) so that statistics without a vocabulary need no
TensorFlow.
Histograms rather than lists keep memory constant however large the corpus is; speaker and label
counts hold one entry per distinct value, and the report lists up to SHOWN_VALUES of them, the
most frequent, beside the number of distinct values. Label values of every kind are counted, a
string apart from a number or boolean of the same text.
"""
import collections
import json
from typing import Callable, Dict, Iterable, List, Mapping, Sequence

import numpy as np

from tfdialemb.text.basic_words import basic_words
from tfdialemb.dialogue import Dialogue

PERCENTILES = (50, 90, 95, 99, 100)
_BATCH = 2048
SHOWN_VALUES = 100


def percentiles(histogram: Mapping[int, int], points=PERCENTILES) -> Dict[str, int]:
    """`p50`, ... of the values counted in `histogram` (value → count), by the nearest-rank rule."""
    if not histogram:
        return {f"p{p}": 0 for p in points}
    values = np.array(sorted(histogram))
    cumulative = np.cumsum([histogram[v] for v in values])
    total = cumulative[-1]
    result = {}
    for p in points:
        rank = max(1, int(np.ceil(p / 100 * total)))
        result[f"p{p}"] = int(values[np.searchsorted(cumulative, rank)])
    return result


def corpus_stats(dialogues: Iterable[Dialogue], tokenizer=None) -> Dict:
    """The report of `dialogues`; lengths in the pieces of `tokenizer` (a `text.BertTokenizer`)
    when given, else in basic words."""
    count = _piece_counter(tokenizer) if tokenizer is not None else _count_basic_words
    turn_lengths: collections.Counter = collections.Counter()
    dialogue_lengths: collections.Counter = collections.Counter()
    turns_per_dialogue: collections.Counter = collections.Counter()
    speakers: collections.Counter = collections.Counter()
    labels: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    pending_texts, pending_owner, totals = [], [], []

    def flush():
        """Counts the pending turns; every dialogue in `totals` is complete at this point."""
        if pending_texts:
            for owner, length in zip(pending_owner, count(pending_texts)):
                turn_lengths[int(length)] += 1
                totals[owner] += int(length)
        for total in totals:
            dialogue_lengths[total] += 1
        pending_texts.clear()
        pending_owner.clear()
        totals.clear()

    for dialogue in dialogues:
        turns_per_dialogue[len(dialogue.turns)] += 1
        for turn in dialogue.turns:
            speakers[turn.speaker] += 1
        for key, value in dialogue.labels.items():
            labels[key][(isinstance(value, str), _label_text(value))] += 1
        owner = len(totals)
        totals.append(0)
        for turn in dialogue.turns:
            pending_texts.append(turn.text)
            pending_owner.append(owner)
        if len(pending_texts) >= _BATCH:
            flush()
    flush()
    total_dialogues = sum(turns_per_dialogue.values())
    return {
        "dialogues": total_dialogues,
        "turns": sum(n * c for n, c in turns_per_dialogue.items()),
        "distinct_speakers": len(speakers),
        "turns_by_speaker": dict(speakers.most_common(SHOWN_VALUES)),
        "turns_per_dialogue": percentiles(turns_per_dialogue),
        "tokens_per_turn": percentiles(turn_lengths),
        "tokens_per_dialogue": percentiles(dialogue_lengths),
        "token_unit": "wordpiece" if tokenizer is not None else "basic",
        "labels": {key: {"distinct": len(c), "dialogues": _shown_values(c)} for key, c in sorted(labels.items())},
    }


def _count_basic_words(texts: Sequence[str]) -> List[int]:
    return [len(basic_words(text, lower_case=True)) for text in texts]


def _piece_counter(tokenizer) -> Callable[[Sequence[str]], np.ndarray]:
    """The WordPiece pieces of each of a list of texts, in one traced TensorFlow function."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    count = tf.function(lambda texts: tokenizer.tokenize(texts).row_lengths(),
                        input_signature=[tf.TensorSpec([None], tf.string)])
    return lambda texts: count(tf.constant(texts)).numpy()


def _label_text(value) -> str:
    """A label value as text: a string itself, any other value its JSON text (3, true, 4.5, [1, 2])."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _shown_values(counts: collections.Counter) -> Dict[str, int]:
    """The most frequent values of one label key and their dialogues; where the key holds strings
    and other values, every value shown as JSON, so the string "3" and the number 3 stay apart."""
    mixed = len({is_string for is_string, _ in counts}) > 1
    return {(json.dumps(text, ensure_ascii=False) if mixed and is_string else text): n
            for (is_string, text), n in counts.most_common(SHOWN_VALUES)}
