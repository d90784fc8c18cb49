r"""E-commerce Dialogue Corpus (ECD) response-selection files → canonical dialogues.

Native format (Zhang et al., COLING 2018; cooelf/DeepUtteranceAggregation, README "Data
template" and ECD_sample/{train,valid,test}; the full corpus is train.txt, dev.txt, test.txt):
UTF-8, no header, one candidate response per line, tab-separated

    label \t utterance_1 \t ... \t utterance_n \t response

label 1 for the true response, 0 for a sampled negative; each context is followed by its
candidates (1 positive + 1 negative in train, 1 + 9 in dev/test). The utterances are Taobao
customer-service turns, Chinese, word-segmented with single spaces; the file does not say who
speaks.

Conversion, recovering sessions as DialogueCSE did (paper section 5.1): negatives are dropped, and
a positive row gives the turns utterance_1 .. utterance_n, response. Training rows of one session
repeat it with a growing context, so consecutive positive rows are merged when the turns of one
begin with all the turns of the other: the longer row is kept, and a row that adds nothing (a
prefix of the kept row, or a duplicate) is dropped. Rows that merely share an opening ("在 吗",
"您好") but then differ are different sessions. Id = "<file name without extension>-<line number
of the kept row>"; speakers alternate "A"/"B" from the first turn; texts are stripped of
surrounding whitespace; no labels. Every row, negative or not, must have a 0/1 label, a context
and a response, and no empty utterance. The rows left out (negatives, rows contained in a kept
row) are counted by reason, and `data convert` prints the counts.
"""

import collections
import os
from typing import Iterator, List, Optional, Tuple

from tfdialemb.converters.native import alternate_speakers
from tfdialemb.converters.response_selection import labelled_rows
from tfdialemb.dialogue import Dialogue, ErrorPolicy

NEGATIVE = "label 0 (negative candidates)"
CONTAINED = "turns all in the kept row of their session (a shorter context of it, or a repeat)"
"""Reasons of the rows the conversion leaves out, as counted in `dropped`."""


def _positive_rows(path: str, errors: ErrorPolicy,
                   dropped: collections.Counter) -> Iterator[Tuple[int, List[str]]]:
    """(line number, context utterances + response) of each valid positive row; every row,
    negatives included, is validated as the response-selection layout it shares with Ubuntu."""
    for number, label, texts in labelled_rows(path, errors):
        if label == 1:
            yield number, texts
        else:
            dropped[NEGATIVE] += 1


def _begins_with(turns: List[str], prefix: List[str]) -> bool:
    return turns[: len(prefix)] == prefix


def _session(stem: str, number: int, texts: List[str]) -> Dialogue:
    return Dialogue(f"{stem}-{number}", tuple(alternate_speakers(texts)))


def convert_ecd(input_path: str, errors: ErrorPolicy,
                dropped: Optional[collections.Counter] = None) -> Iterator[Dialogue]:
    """Streams the sessions recovered from an ECD response-selection file; the rows left out are
    counted in `dropped` by reason."""
    dropped = collections.Counter() if dropped is None else dropped
    stem = os.path.splitext(os.path.basename(input_path))[0]
    kept = None  # (line number, texts) of the longest row of the current run
    for number, texts in _positive_rows(input_path, errors, dropped):
        if kept is not None:
            if _begins_with(kept[1], texts):
                dropped[CONTAINED] += 1  # adds nothing to the kept row
                continue
            if _begins_with(texts, kept[1]):
                dropped[CONTAINED] += 1  # the kept row is a shorter context of this one
            else:
                yield _session(stem, *kept)
        kept = (number, texts)
    if kept is not None:
        yield _session(stem, *kept)


FORMATS = {"ecd": convert_ecd}
DESCRIPTIONS = {"ecd": "E-commerce Dialogue Corpus lines, sessions recovered from the positives"}
"""One line on each format, for `data convert --format=help`."""
