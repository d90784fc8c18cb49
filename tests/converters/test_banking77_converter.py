"""banking77 CSV → one-utterance dialogues labelled by intent, against hand-made files in the
released layout (PolyAI-LDN/task-specific-datasets banking_data/{train,test}.csv)."""
import os

import pytest

from tfdialemb.converters import converters
from tfdialemb.converters.banking77 import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "banking77")
convert = FORMATS["banking77"]


def _query(dialogue_id, text, intent):
    return Dialogue(dialogue_id, (Turn("user", text),), {"intent": intent})


def test_each_row_is_a_one_turn_dialogue_with_its_intent():
    path = os.path.join(FIXTURES, "test.csv")
    assert list(convert(path, ErrorPolicy("fail"))) == [
        _query("test-1", "How do I locate my card?", "card_arrival"),
        _query("test-2", "I still have not received my new card, I ordered over a week ago.", "card_arrival"),
        _query("test-3", "Where do I link the new card?", "card_linking"),
        _query("test-4", "How do I re-add a card to the app?", "card_linking"),
        _query("test-5", "what are exchange rates", "exchange_rate"),
        _query("test-6", "Can you tell me the foreign exchange rate?", "exchange_rate"),
    ]
    train = list(convert(os.path.join(FIXTURES, "train.csv"), ErrorPolicy("fail")))
    assert train[7] == _query("train-8", 'Hi, I don\'t think your exchange rate is right. Please check the "official" '
                                         "rate.", "exchange_rate")
    assert "banking77" in converters()


def test_crlf_rows_and_a_query_spanning_lines_as_released():
    # The released train.csv ends rows with CRLF; some queries hold bare LFs inside the quotes
    # (its row 7616: "...to my account here.\n.").
    train = list(convert(os.path.join(FIXTURES, "train.csv"), ErrorPolicy("fail")))
    assert len(train) == 9 and all("\r" not in d.turns[0].text for d in train)
    assert train[-1] == _query("train-9", "How are exchange rates\ncalculated? Which rate\n.", "exchange_rate")


def test_bad_rows_are_reported_at_their_line_and_keep_the_other_ids():
    path = os.path.join(FIXTURES, "errors.csv")
    with pytest.raises(DialogueFormatError) as caught:
        list(convert(path, ErrorPolicy("fail")))
    assert (caught.value.location, caught.value.reason) == (3, "expected 2 fields (text, category), got 3")
    errors = ErrorPolicy("skip")
    assert list(convert(path, errors)) == [_query("errors-1", "My card has not arrived yet.", "card_arrival"),
                                           _query("errors-5", "What exchange rate do you use?", "exchange_rate")]
    assert errors.messages == [f"{path}:3: expected 2 fields (text, category), got 3",
                               f"{path}:4: empty query text", f"{path}:5: empty category"]


def test_a_file_without_the_released_header_is_refused():
    path = os.path.join(FIXTURES, "bad_header.csv")
    with pytest.raises(DialogueFormatError, match=r"bad_header.csv:1: header must be text,category, got \['query'"):
        list(convert(path, ErrorPolicy("fail")))
    with pytest.raises(FileNotFoundError, match="input file does not exist"):
        list(convert(os.path.join(FIXTURES, "none.csv"), ErrorPolicy("fail")))
