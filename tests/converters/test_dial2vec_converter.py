"""dial2vec's released dataset files (train.tsv, clustering_{dev,test}.tsv: roles, '|'-joined
samples of '#'-joined turns, label) -> canonical dialogues.

The fixtures are hand-made in the layout dial2vec/data/data_provider.py:DataProvider.load_data
reads; train.tsv as dial2vec/data/generate_training.py:get_result writes it (two lines per
session with different negatives, role-"1" turns kept, role-"0" turns filled from the pool of
role-"0" utterances, an empty utterance kept, "#" stripped from a negative's ends, label 0)."""
import os

import pytest

from tfdialemb.converters.dial2vec import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "dial2vec")
convert = FORMATS["dial2vec"]

HOTEL = (Turn("1", "i need a hotel in the north"), Turn("0", "what price range ?"),
         Turn("1", "cheap please"), Turn("0", "the acorn guest house ."))
TABLE = (Turn("1", "book a table for two"), Turn("0", "done , reference 7 ."))
TRAIN = (Turn("1", "any trains to ely ?"), Turn("1", "book it"))  # its empty role-0 turn dropped


def test_every_training_line_gives_its_first_sample_without_a_label():
    path = os.path.join(FIXTURES, "train.tsv")
    assert list(convert(path, ErrorPolicy("fail"))) == [
        Dialogue(f"train-{number}", turns) for number, turns in
        enumerate((HOTEL, HOTEL, TABLE, TABLE, TRAIN, TRAIN), start=1)]


def test_clustering_splits_give_the_topic_id_as_domain():
    test = os.path.join(FIXTURES, "clustering_test.tsv")
    assert [(d.id, len(d.turns), d.turns[0].speaker, d.labels) for d in convert(test, ErrorPolicy("fail"))] == [
        ("clustering_test-1", 4, "1", {"domain": "1"}), ("clustering_test-2", 2, "1", {"domain": "2"}),
        ("clustering_test-3", 3, "1", {"domain": "1"})]
    dev = os.path.join(FIXTURES, "clustering_dev.tsv")
    assert list(FORMATS["dial2vec_clustering"](dev, ErrorPolicy("fail"))) == [
        Dialogue("clustering_dev-1", (Turn("1", "find me a guesthouse"),
                                      Turn("0", "the alpha-milton is a guesthouse .")), {"domain": "1"}),
        Dialogue("clustering_dev-2", (Turn("1", "i want indian food"), Turn("0", "which price range ?"),
                                      Turn("1", "expensive"), Turn("0", "try the maharajah .")),
                 {"domain": "2"})]


def test_a_raw_session_line_fails_naming_both_layouts():
    path = os.path.join(FIXTURES, "bad", "train.tsv")
    with pytest.raises(DialogueFormatError, match="roles .t turns joined by '#'.*got 4.*--format=dial2vec_sessions"):
        list(convert(path, ErrorPolicy("fail")))


def test_skip_mode_keeps_good_lines():
    # Bad: a raw session line (2), 3 roles for 2 turns (3), letters as roles (4), label "hotel" (5),
    # only empty turns (6).
    path = os.path.join(FIXTURES, "bad", "train.tsv")
    errors = ErrorPolicy("skip")
    assert list(convert(path, errors)) == [Dialogue("train-1", TABLE), Dialogue("train-7", TRAIN)]
    assert [message.split(": ")[0] for message in errors.messages] == [
        f"{path}:{number}" for number in (2, 3, 4, 5, 6)]


def test_the_clustering_format_refuses_a_training_file():
    path = os.path.join(FIXTURES, "train.tsv")
    with pytest.raises(DialogueFormatError, match="a training line .* --format=dial2vec") as caught:
        list(FORMATS["dial2vec_clustering"](path, ErrorPolicy("fail")))
    assert caught.value.location == 1
