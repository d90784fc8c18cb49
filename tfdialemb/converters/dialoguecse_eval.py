r"""DialogueCSE evaluation files (semantic retrieval and D-STS) → canonical records, one per line.

Native formats (Liu et al., EMNLP 2021, section 5.2; released as wangruicn/DialogueCSE
datasets/{edc,jddc}/{dev,test}/{select,sts}.txt, read by AlibabaResearch/DAMO-ConvAI
dialogue-cse/eval/eval_selection.py and eval_sts.py): UTF-8, tab-separated, no header.

SR (select.txt), exactly 5 columns:

    qid \t query \t intent \t pos_ids \t neg_ids

pos_ids and neg_ids are comma-separated qids of other lines of the file; the intent (e.g. 使用咨询)
may be empty; a line with an empty positive or negative list is a retrieval candidate only, never a
query. → id = qid, one turn {speaker "query", text = query}, labels {"intent": str,
"positive_ids": [str], "negative_ids": [str]}. A repeated qid is reported (the evaluator asserts
qids are unique).

D-STS (sts.txt), exactly 3 columns:

    score \t s1 \t s2

score the crowd-sourced relevance from 1 to 5. → id "sts-<line number>", turns with speakers "s1"
and "s2", labels {"score": float}; a score that is not a number in [1, 5] is reported.
"""

from typing import Iterator, List, Optional, Tuple

from tfdialemb.converters.native import iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn

SR_COLUMNS = ("qid", "query", "intent", "pos_ids", "neg_ids")
STS_COLUMNS = ("score", "s1", "s2")
MIN_SCORE, MAX_SCORE = 1.0, 5.0


def _columns(
    path: str, errors: ErrorPolicy, names: Tuple[str, ...]
) -> Iterator[Tuple[int, List[str]]]:
    """(line number, stripped columns) of each line with exactly the expected columns."""
    for number, line in iter_lines(path, errors):
        columns = [column.strip() for column in line.split("\t")]
        if len(columns) != len(names):
            errors.report(
                path,
                number,
                f"expected {len(names)} tab-separated columns ({', '.join(names)}), "
                f"got {len(columns)}",
            )
            continue
        yield number, columns


def _id_list(column: str) -> Optional[List[str]]:
    """The ids of a comma-separated list ([] when empty), None when an id is empty."""
    ids = [item.strip() for item in column.split(",")] if column else []
    return ids if all(ids) else None


def convert_sr(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams the queries and candidates of a DialogueCSE semantic-retrieval file."""
    seen = set()
    for number, (qid, query, intent, positives, negatives) in _columns(
        input_path, errors, SR_COLUMNS
    ):
        positive_ids, negative_ids = _id_list(positives), _id_list(negatives)
        if not qid:
            errors.report(input_path, number, "empty qid")
        elif qid in seen:
            errors.report(input_path, number, f"duplicate qid {qid!r}")
        elif not query:
            errors.report(input_path, number, "empty query")
        elif positive_ids is None or negative_ids is None:
            errors.report(input_path, number, "empty id in a comma-separated id list")
        else:
            seen.add(qid)
            labels = {"intent": intent, "positive_ids": positive_ids, "negative_ids": negative_ids}
            yield Dialogue(qid, (Turn("query", query),), labels)


def convert_sts(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams the sentence pairs of a DialogueCSE D-STS file."""
    for number, (score_text, first, second) in _columns(input_path, errors, STS_COLUMNS):
        try:
            score = float(score_text)
        except ValueError:
            score = None
        if score is None or not MIN_SCORE <= score <= MAX_SCORE:
            errors.report(
                input_path, number, f"score must be a number from 1 to 5, got {score_text!r}"
            )
        elif not first or not second:
            errors.report(input_path, number, "empty sentence")
        else:
            yield Dialogue(
                f"sts-{number}", (Turn("s1", first), Turn("s2", second)), {"score": score}
            )


FORMATS = {"dialoguecse_sr": convert_sr, "dialoguecse_sts": convert_sts}
DESCRIPTIONS = {"dialoguecse_sr": "DialogueCSE's semantic-retrieval set: qid, query, intent, positive and negative ids",
                "dialoguecse_sts": "DialogueCSE's D-STS set: score, sentence 1, sentence 2"}
"""One line on each format, for `data convert --format=help`."""
PARTIAL_RECORDS = {"dialoguecse_sr": "a query or candidate that other records name by id",
                   "dialoguecse_sts": "one scored sentence pair of the set"}
