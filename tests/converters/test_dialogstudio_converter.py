"""DialogStudio converter against hand-made native fixtures and hand-written expectations."""
import os

import pytest

from tfdialemb.converters.dialogstudio import FORMATS
from tfdialemb.dialogue import DialogueFormatError, ErrorPolicy

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "dialogstudio")
COLLECTION = os.path.join(FIXTURES, "collection")
WITH_ERRORS = os.path.join(FIXTURES, "with_errors", "Taskmaster1", "train", "dialogues_1.json")


def convert(path, mode="fail"):
    errors = ErrorPolicy(mode)
    return [d.to_json() for d in FORMATS["dialogstudio"](path, errors)], errors


def user(text, **fields):
    return {"speaker": "user", "text": text, **fields}


def system(text):
    return {"speaker": "system", "text": text}


EXPECTED_SGD = [
    {"id": "SGD--train--1",
     "turns": [user("I'm hungry, can you find me a sushi place in Palo Alto?"),
               system("Sakura Kaiten is a popular sushi restaurant in Palo Alto."),
               user("Sounds good, that's all I needed."),
               system("Enjoy your meal!")],
     "labels": {"dataset": "SGD", "domains": ["Restaurants_1"], "domain": "Restaurants_1"}},
    {"id": "SGD--train--2",
     "turns": [user("I need a place to stay in Seattle."),
               system("The house at 1201 Alaskan Way is available and has a 4.6 rating."),
               user("Good. Also get me a cab there."),
               system("Your ride is booked and on its way.")],
     "labels": {"dataset": "SGD", "domains": ["Hotels_2", "RideSharing_1"]}},
]

EXPECTED_COLLECTION = [
    {"id": "MetaLWOZ--test--1",
     "turns": [user("When does the next 47 bus leave from Main Street?"),
               system("The next 47 leaves at 8:15 am."),
               user("And the one after that?"),
               system("The following one is at 8:45 am.")],
     "labels": {"dataset": "MetaLWOZ", "domains": ["BUS_SCHEDULE_BOT"],
                "domain": "BUS_SCHEDULE_BOT"}},
    {"id": "MultiWOZ_2.1--train--1",
     "turns": [user("I'm looking for a hotel in the south.", intent="hotel-inform"),
               system("The Lensfield Hotel is in the south. Would you like to book it?"),
               user("Not now. Is there a park nearby?", intent="attraction-inform"),
               system("Sheep's Green and Lammas Land Park Fen Causeway is free to enter.")],
     "labels": {"dataset": "MultiWOZ_2.1", "domains": ["attraction", "hotel"]}},
    *EXPECTED_SGD,
    {"id": "WOZ2_0--val--1",
     "turns": [user("I want a cheap restaurant in the south part of town."),
               system("Nandos serves Portuguese food in the south and is cheap."),
               user("Thanks, that is all.")],
     "labels": {"dataset": "WOZ2_0"}},
]


def test_collection_folder_gives_every_dialogue_file_and_ignores_other_json():
    dialogues, errors = convert(COLLECTION)
    assert dialogues == EXPECTED_COLLECTION
    assert errors.skipped == 0


def test_single_file_input():
    dialogues, _ = convert(os.path.join(COLLECTION, "SGD", "train", "dialogues_1.json"))
    assert dialogues == EXPECTED_SGD


def test_bad_record_fails_naming_file_and_record():
    with pytest.raises(DialogueFormatError) as caught:
        list(FORMATS["dialogstudio"](WITH_ERRORS, ErrorPolicy("fail")))
    assert caught.value.path == WITH_ERRORS
    assert caught.value.location == "Taskmaster1--train--2"
    assert caught.value.reason == "log entry 0 system response: empty text"


def test_skip_mode_keeps_good_dialogues_and_counts_bad_ones():
    dialogues, errors = convert(os.path.join(FIXTURES, "with_errors"), mode="skip")
    assert dialogues == [
        {"id": "Taskmaster1--train--1",
         "turns": [user("Hi, I'd like a table for four at Luigi's tonight."),
                   system("Sure, what time works for you?"),
                   user("Around 8 pm."),
                   system("You're all set for 8 pm at Luigi's.")],
         "labels": {"dataset": "Taskmaster1"}},
        {"id": "Taskmaster1--train--4",
         "turns": [user("Please reserve a booth at Sam's Diner for tomorrow morning."),
                   system("Your booth at Sam's Diner is reserved for 9 am tomorrow.")],
         "labels": {"dataset": "Taskmaster1"}},
    ]
    assert errors.skipped == 2
    assert errors.messages == [
        f"{WITH_ERRORS}:Taskmaster1--train--2: log entry 0 system response: empty text",
        f"{WITH_ERRORS}:Taskmaster1--train--3: log entry 1 user utterance: no text",
    ]


def test_missing_input_raises_file_not_found(tmp_path):
    missing = str(tmp_path / "SGD")
    with pytest.raises(FileNotFoundError, match=missing):
        list(FORMATS["dialogstudio"](missing, ErrorPolicy("fail")))
