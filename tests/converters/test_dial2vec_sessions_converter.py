"""dial2vec raw session files (session_id, role, text, topic), the input of the released
generators, -> canonical dialogues."""
import os

import pytest

from tfdialemb.converters.dial2vec import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "dial2vec_sessions")
convert = FORMATS["dial2vec_sessions"]


def test_consecutive_lines_of_a_session_form_one_dialogue():
    path = os.path.join(FIXTURES, "preprocess_session_demo_test.txt")
    assert list(convert(path, ErrorPolicy("fail"))) == [
        Dialogue("PMUL1001", (
            Turn("1", "i need a hotel in the north"),
            Turn("0", "what price range would you like ?"),
            Turn("1", "cheap , and room # 12 if possible"),
            Turn("0", "the acorn guest house has room 12 free ."),
        ), {"domain": "hotel"}),
        Dialogue("SNG0073", (
            Turn("1", "book a table for two at an italian place"),
            Turn("0", "pizza hut city centre is free at 7 pm ."),
        ), {"domain": "restaurant"}),
        Dialogue("MUL0452", (
            Turn("1", "i want a hotel and a taxi to it"),
            Turn("0", "sure , which area ?"),
            Turn("1", "the centre please"),
        ), {"domain": "hotel|taxi"}),
    ]


def test_bad_line_fails_with_file_and_line():
    path = os.path.join(FIXTURES, "bad", "preprocess_session_demo_test.txt")
    expected = r"raw session layout .*4 tab-separated fields, got 3 \(a released .*--format=dial2vec\)"
    with pytest.raises(DialogueFormatError, match=expected) as caught:
        list(convert(path, ErrorPolicy("fail")))
    assert (caught.value.path, caught.value.location) == (path, 2)


def test_skip_mode_drops_bad_lines_and_keeps_the_rest_of_each_session():
    # Bad: 3 fields (line 2), empty text (4), another topic (5), SNG01 coming back (7).
    path = os.path.join(FIXTURES, "bad", "preprocess_session_demo_test.txt")
    errors = ErrorPolicy("skip")
    assert list(convert(path, errors)) == [
        Dialogue("SNG01", (Turn("1", "i need a taxi"), Turn("0", "to the station")),
                 {"domain": "taxi"}),
        Dialogue("SNG02", (Turn("1", "any trains to ely ?"),
                           Turn("0", "the 9 am train leaves from platform 2 .")),
                 {"domain": "train"}),
    ]
    assert errors.skipped == 4
    assert [message.split(": ")[0] for message in errors.messages] == [
        f"{path}:2", f"{path}:4", f"{path}:5", f"{path}:7"]
    assert "session 'SNG01' reappears" in errors.messages[3]


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="preprocess_session_sgd.txt"):
        list(convert(str(tmp_path / "preprocess_session_sgd.txt"), ErrorPolicy("fail")))
