"""dial2vec clustering_{dev,test}.tsv (roles, 10 '|'-joined copies, topic_id) -> dialogues."""
import os

import pytest

from tfdialemb.converters.dial2vec import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "dial2vec_clustering")
convert = FORMATS["dial2vec_clustering"]

TABLE = (Turn("1", "book a table for two"), Turn("0", "done , reference 7 ."))
TRAIN = (Turn("1", "any trains to ely ?"), Turn("0", "the 9 am train ."), Turn("1", "book it"))


def test_one_line_gives_the_first_copy_with_one_role_per_turn():
    path = os.path.join(FIXTURES, "clustering_test.tsv")
    assert list(convert(path, ErrorPolicy("fail"))) == [
        Dialogue("clustering_test-1", (
            Turn("1", "i need a hotel in the north"),
            Turn("0", "what price range ?"),
            Turn("1", "cheap please"),
            Turn("0", "the acorn guest house ."),
        ), {"domain": "1"}),
        Dialogue("clustering_test-2", TABLE, {"domain": "2"}),
        Dialogue("clustering_test-3", TRAIN, {"domain": "3"}),
    ]


def test_training_style_line_fails_with_file_and_line():
    path = os.path.join(FIXTURES, "bad", "clustering_test.tsv")
    with pytest.raises(DialogueFormatError, match="not a clustering line") as caught:
        list(convert(path, ErrorPolicy("fail")))
    assert (caught.value.path, caught.value.location) == (path, 2)


def test_skip_mode_keeps_good_lines():
    # Bad: differing copies (line 2), 2 roles for 3 turns (3), topic "x" (4), a training label 0 (5),
    # no topic field (6).
    path = os.path.join(FIXTURES, "bad", "clustering_test.tsv")
    errors = ErrorPolicy("skip")
    assert list(convert(path, errors)) == [
        Dialogue("clustering_test-1", TABLE, {"domain": "2"}),
        Dialogue("clustering_test-7", TRAIN, {"domain": "3"}),
    ]
    assert errors.skipped == 5
    assert [message.split(": ")[0] for message in errors.messages] == [
        f"{path}:{number}" for number in (2, 3, 4, 5, 6)]


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="clustering_dev.tsv"):
        list(convert(str(tmp_path / "clustering_dev.tsv"), ErrorPolicy("fail")))
