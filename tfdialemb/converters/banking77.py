"""banking77 intent files (PolyAI) to one-utterance canonical dialogues, for intent prediction.

Native layout (PolyAI-LDN/task-specific-datasets banking_data/train.csv and test.csv, README
"Banking": 10003 train and 3080 test online-banking queries, 77 intents; Casanueva et al. 2020,
the thesis' [49]): UTF-8 CSV with the header `text,category`, one query per row, a field quoted
("" for a quote inside) when it holds a comma or a quote:

    text,category
    How do I locate my card?,card_arrival
    "I still have not received my new card, I ordered over a week ago.",card_arrival

The released train.csv ends its rows with CRLF and holds queries that span lines (a bare LF
inside the quotes).

Conversion: one dialogue per row, id "<file name without extension>-<row>" (rows counted from 1
after the header, bad rows included, so ids do not move when a row is skipped: "test-1" is the
first query of test.csv), one turn {"speaker": "user", "text": the query stripped of surrounding
whitespace, its inner line breaks kept}, labels {"intent": the category}. A header other than
`text,category` is reported at line 1 and nothing is converted; a row without exactly two fields,
or with an empty query or category, is reported at its line (a query's last line).
"""
import csv
import os
from typing import Iterator

from tfdialemb.converters.native import iter_lines
from tfdialemb.dialogue import Dialogue, ErrorPolicy, Turn, has_visible_text

HEADER = ["text", "category"]
LABEL_KEY = "intent"


def convert_banking77(input_path: str, errors: ErrorPolicy) -> Iterator[Dialogue]:
    """Streams the queries of a banking77 CSV file (train.csv or test.csv)."""
    line = [0]

    def texts():
        for number, text in iter_lines(input_path, errors):
            line[0] = number
            yield text + "\n"  # csv keeps the line break of a quoted field that spans lines

    rows = csv.reader(texts())
    header = next(rows, None)
    if header != HEADER:
        errors.report(input_path, 1, f"header must be {','.join(HEADER)}, got {header!r}")
        return
    stem = os.path.splitext(os.path.basename(input_path))[0]
    for index, row in enumerate(rows, start=1):
        if len(row) != 2:
            errors.report(input_path, line[0], f"expected 2 fields (text, category), got {len(row)}")
            continue
        text, category = row[0].strip(), row[1].strip()
        if not text or not has_visible_text(text):
            errors.report(input_path, line[0], "empty query text")
            continue
        if not category:
            errors.report(input_path, line[0], "empty category")
            continue
        yield Dialogue(f"{stem}-{index}", (Turn("user", text),), {LABEL_KEY: category})


FORMATS = {"banking77": convert_banking77}
DESCRIPTIONS = {"banking77": "PolyAI banking77 train.csv / test.csv: one user turn per record, labelled by intent"}
"""One line on each format, for `data convert --format=help`."""
PARTIAL_RECORDS = {"banking77": "one query of the intent set"}
