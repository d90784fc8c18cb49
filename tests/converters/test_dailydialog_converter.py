"""DailyDialog text + topic/act/emotion files -> canonical dialogues, on fixtures."""
import os

import pytest

from tfdialemb.converters.dailydialog import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "dailydialog")
convert = FORMATS["dailydialog"]


def turn(speaker, text, act, emotion):
    return Turn(speaker, text, {"act": act, "emotion": emotion})


def test_full_release_files_give_topic_acts_and_emotions():
    dialogues = list(convert(os.path.join(FIXTURES, "dialogues_text.txt"), ErrorPolicy("fail")))
    assert dialogues == [
        Dialogue("dialogues_text-1", (
            turn("A", "Excuse me , is this seat taken ?", "question", "no emotion"),
            turn("B", "No , please sit down .", "inform", "no emotion"),
            turn("A", "Thanks . I ' m waiting for my sister .", "inform", "no emotion"),
        ), {"topic": "Ordinary Life"}),
        Dialogue("dialogues_text-2", (
            turn("A", "Did you pass the chemistry exam ?", "question", "no emotion"),
            turn("B", "Yes ! I got an A .", "inform", "happiness"),
            turn("A", "Congratulations ! Let ' s celebrate tonight .", "directive", "happiness"),
            turn("B", "Sounds great , I ' ll book a table .", "commissive", "happiness"),
        ), {"topic": "School Life"}),
        Dialogue("dialogues_text-3", (
            turn("A", "How much is a ticket to the museum ?", "question", "no emotion"),
            turn("B", "Fifty dollars .", "inform", "no emotion"),
            turn("A", "Fifty ? I thought it was free !", "inform", "surprise"),
        ), {"topic": "Tourism"}),
    ]


def test_split_folder_files_have_acts_and_emotions_but_no_topic():
    path = os.path.join(FIXTURES, "train", "dialogues_train.txt")
    dialogues = list(convert(path, ErrorPolicy("fail")))
    assert dialogues == [
        Dialogue("dialogues_train-1", (
            turn("A", "Could you open the window ?", "directive", "no emotion"),
            turn("B", "Sure , it ' s hot in here .", "commissive", "no emotion"),
        )),
        Dialogue("dialogues_train-2", (
            turn("A", "The train is late again .", "inform", "sadness"),
            turn("B", "That ' s annoying .", "inform", "disgust"),
            turn("A", "I ' ll complain to the station .", "commissive", "anger"),
        )),
        Dialogue("dialogues_train-3", (
            turn("A", "I ' m afraid of the dark .", "inform", "fear"),
            turn("B", "Leave the light on then .", "directive", "no emotion"),
        )),
    ]


def test_text_without_annotation_files_has_plain_turns(tmp_path):
    path = tmp_path / "dialogues_text.txt"
    path.write_text("Hi . __eou__ Hello . __eou__\n", encoding="utf-8")
    assert list(convert(str(path), ErrorPolicy("fail"))) == [
        Dialogue("dialogues_text-1", (Turn("A", "Hi ."), Turn("B", "Hello ."))),
    ]


def test_bad_annotation_line_fails_with_its_file_and_line():
    with pytest.raises(DialogueFormatError, match=r"3 act label\(s\) for 2 utterance") as caught:
        list(convert(os.path.join(FIXTURES, "bad", "dialogues_text.txt"), ErrorPolicy("fail")))
    assert caught.value.path == os.path.join(FIXTURES, "bad", "dialogues_act.txt")
    assert caught.value.location == 2


def test_skip_mode_keeps_good_dialogues_and_counts_every_bad_line():
    # Bad: act count (line 2), emotion 7 (line 4), no final __eou__ (line 5), empty utterance
    # (line 6), topic 11 (line 7), and an emotion line with no dialogue (line 8).
    bad = os.path.join(FIXTURES, "bad")
    errors = ErrorPolicy("skip")
    dialogues = list(convert(os.path.join(bad, "dialogues_text.txt"), errors))
    assert dialogues == [
        Dialogue("dialogues_text-1", (
            turn("A", "Good morning .", "inform", "no emotion"),
            turn("B", "Morning !", "inform", "happiness"),
        ), {"topic": "Ordinary Life"}),
        Dialogue("dialogues_text-3", (
            turn("A", "See you tomorrow .", "commissive", "no emotion"),
            turn("B", "Bye .", "commissive", "no emotion"),
        ), {"topic": "Relationship"}),
    ]
    assert errors.skipped == 6
    assert [message.split(": ")[0] for message in errors.messages] == [
        os.path.join(bad, "dialogues_act.txt") + ":2",
        os.path.join(bad, "dialogues_emotion.txt") + ":4",
        os.path.join(bad, "dialogues_text.txt") + ":5",
        os.path.join(bad, "dialogues_text.txt") + ":6",
        os.path.join(bad, "dialogues_topic.txt") + ":7",
        os.path.join(bad, "dialogues_emotion.txt") + ":8",
    ]


def test_annotation_file_shorter_than_text_is_reported():
    folder = os.path.join(FIXTURES, "short")
    path = os.path.join(folder, "dialogues_validation.txt")
    with pytest.raises(DialogueFormatError, match="the file ends before line 3") as caught:
        list(convert(path, ErrorPolicy("fail")))
    assert caught.value.path == os.path.join(folder, "dialogues_act_validation.txt")
    assert caught.value.location == 3
    errors = ErrorPolicy("skip")
    assert [d.id for d in convert(path, errors)] == [
        "dialogues_validation-1", "dialogues_validation-2"]
    assert errors.skipped == 1


def test_missing_text_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="dialogues_test.txt"):
        list(convert(str(tmp_path / "dialogues_test.txt"), ErrorPolicy("fail")))
