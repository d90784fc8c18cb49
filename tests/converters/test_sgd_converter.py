"""SGD converter against hand-made native fixtures and hand-written expectations."""
import collections
import json
import os
import shutil

import pytest

from tfdialemb.converters.sgd import FORMATS
from tfdialemb.dialogue import DialogueFormatError, ErrorPolicy

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "sgd")
TRAIN = os.path.join(FIXTURES, "train")
WITH_ERRORS = os.path.join(FIXTURES, "with_errors", "dialogues_001.json")


def convert(path, mode="fail"):
    errors = ErrorPolicy(mode)
    return [d.to_json() for d in FORMATS["sgd"](path, errors)], errors


def user(text, **fields):
    return {"speaker": "user", "text": text, **fields}


def system(text):
    return {"speaker": "system", "text": text}


EXPECTED = [
    {"id": "1_00000",
     "turns": [user("I'd like to find a vegetarian place to eat in Oakland.",
                    intent="FindRestaurants"),
               system("Golden Lotus is a nice vegetarian restaurant in Oakland."),
               user("Great, please book a table there for two at 7 pm.",
                    intent="ReserveRestaurant"),
               system("Your table for 2 at Golden Lotus is booked for 7 pm today.")],
     "labels": {"domains": ["Restaurants_1"], "domain": "Restaurants_1"}},
    {"id": "1_00001",
     "turns": [user("Are there any comedies playing in Berkeley this weekend?",
                    intent="FindMovies"),
               system("I found 3 movies, including Booksmart and Long Shot."),
               user("No, that's all, thank you."),
               system("Enjoy your weekend!")],
     "labels": {"domains": ["Movies_1"], "domain": "Movies_1"}},
    {"id": "2_00000",
     "turns": [user("Can you find me a house to stay in Seattle for two people?",
                    intent="SearchHouse"),
               system("There's a nice house at 1201 Alaskan Way with a rating of 4.6."),
               user("That works. I also need a cab to get there."),
               system("How many riders, and do you want a shared ride?"),
               user("Just me, and a pool ride is fine.", intent="GetRide"),
               system("Your shared ride is on its way.")],
     "labels": {"domains": ["Hotels_2", "RideSharing_1"]}},
]


def test_split_directory_gives_every_dialogue_and_ignores_schema_json():
    dialogues, errors = convert(TRAIN)
    assert dialogues == EXPECTED
    assert errors.skipped == 0


def test_bad_record_fails_naming_file_and_record():
    with pytest.raises(DialogueFormatError) as caught:
        list(FORMATS["sgd"](WITH_ERRORS, ErrorPolicy("fail")))
    assert caught.value.path == WITH_ERRORS
    assert caught.value.location == "3_00001"
    assert caught.value.reason == "turn 1: no text"


def test_skip_mode_keeps_good_dialogues_and_counts_bad_ones():
    dialogues, errors = convert(WITH_ERRORS, mode="skip")
    assert dialogues == [
        {"id": "3_00000",
         "turns": [user("What's the balance in my checking account?", intent="CheckBalance"),
                   system("Your checking account balance is $4,216.50.")],
         "labels": {"domains": ["Banks_1"], "domain": "Banks_1"}},
        {"id": "3_00003",
         "turns": [user("Find me a bus from Fresno to Los Angeles on March 8th.",
                        intent="FindBus"),
                   system("There's a bus leaving at 7:40 am for $32.")],
         "labels": {"domains": ["Buses_1"], "domain": "Buses_1"}},
    ]
    assert errors.skipped == 2
    assert errors.messages == [f"{WITH_ERRORS}:3_00001: turn 1: no text",
                               f"{WITH_ERRORS}:3_00002: turn 0: empty text"]


def test_files_that_are_not_utf8_json_are_reported_at_location_0(tmp_path):
    shutil.copy(os.path.join(TRAIN, "dialogues_001.json"), tmp_path / "dialogues_001.json")
    (tmp_path / "dialogues_000.json").write_bytes(b'[{"dialogue_id": "9_00000", ')
    (tmp_path / "dialogues_002.json").write_bytes(b'[{"utterance": "caf\xe9"}]')
    with pytest.raises(DialogueFormatError) as caught:
        list(FORMATS["sgd"](str(tmp_path), ErrorPolicy("fail")))
    assert caught.value.path == str(tmp_path / "dialogues_000.json")
    assert caught.value.location == 0
    dialogues, errors = convert(str(tmp_path), mode="skip")
    assert dialogues == EXPECTED[:2]
    assert errors.skipped == 2
    assert errors.messages[1] == f"{tmp_path / 'dialogues_002.json'}:0: not UTF-8 (byte 19)"


def test_an_id_repeated_across_files_is_reported(tmp_path):
    for name in ("dialogues_001.json", "dialogues_002.json"):
        shutil.copy(os.path.join(TRAIN, "dialogues_001.json"), tmp_path / name)
    dialogues, errors = convert(str(tmp_path), mode="skip")
    assert dialogues == EXPECTED[:2]
    assert errors.skipped == 2
    assert errors.messages[0] == (f"{tmp_path / 'dialogues_002.json'}:1_00000: "
                                  "duplicate dialogue id '1_00000'")


def test_missing_input_raises_file_not_found(tmp_path):
    missing = str(tmp_path / "test")
    with pytest.raises(FileNotFoundError, match=missing):
        list(FORMATS["sgd"](missing, ErrorPolicy("fail")))
    with pytest.raises(FileNotFoundError, match="no dialogues_"):
        list(FORMATS["sgd"](str(tmp_path), ErrorPolicy("fail")))


def test_single_domain_keeps_dialogues_with_one_thesis_domain(tmp_path):
    """The thesis' SGD (released domain.py, one_domain): a service's domain is its name without
    _N; Travel and Weather are not domains, so only services among the 14 count."""
    records = [{"dialogue_id": f"9_{i:05d}", "services": services,
                "turns": [{"speaker": "USER", "utterance": "hello", "frames": []}]}
               for i, services in enumerate([["Restaurants_1", "Restaurants_2"], ["Travel_1"], ["Hotels_2", "Travel_1"],
                                             ["Weather_1", "Alarm_1"], ["Hotels_2", "RideSharing_1"]])]
    (tmp_path / "dialogues_001.json").write_text(json.dumps(records), encoding="utf-8")
    dropped = collections.Counter()
    kept = [d.to_json() for d in FORMATS["sgd_single_domain"](str(tmp_path), ErrorPolicy("fail"), dropped=dropped)]
    assert dropped == {"none of the thesis' 14 domains (only Travel)": 1,
                       "none of the thesis' 14 domains (only Alarm, Weather)": 1,
                       "several of the thesis' 14 domains": 1}  # Hotels + RideSharing
    assert [(d["id"], d["labels"]) for d in kept] == [
        ("9_00000", {"services": ["Restaurants_1", "Restaurants_2"], "domain": "Restaurants"}),
        ("9_00002", {"services": ["Hotels_2", "Travel_1"], "domain": "Hotels"})]
    assert [d.labels for d in FORMATS["sgd_single_domain"](TRAIN, ErrorPolicy("fail"))] == [
        {"services": ["Restaurants_1"], "domain": "Restaurants"}, {"services": ["Movies_1"], "domain": "Movies"}]
