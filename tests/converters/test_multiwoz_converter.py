"""MultiWOZ 2.1 and 2.2 converters against hand-made native fixtures and hand-written output."""
import collections
import os
import shutil

import pytest

from tfdialemb.converters.multiwoz import FORMATS
from tfdialemb.dialogue import DialogueFormatError, ErrorPolicy

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
MULTIWOZ21 = os.path.join(FIXTURES, "multiwoz21")
MULTIWOZ22 = os.path.join(FIXTURES, "multiwoz22")


def convert(format_name, path, mode="fail"):
    errors = ErrorPolicy(mode)
    return [d.to_json() for d in FORMATS[format_name](path, errors)], errors


def user(text, **fields):
    return {"speaker": "user", "text": text, **fields}


def system(text):
    return {"speaker": "system", "text": text}


EXPECTED_21 = [
    {"id": "SNG0101.json",
     "turns": [user("Hi, I'd like an Italian restaurant in the centre of town, please."),
               system("Zucca Nera on Market Street is a lovely Italian place in the centre. "
                      "Shall I reserve a table?"),
               user("Yes, a table for 3 at 18:30 on Friday, please."),
               system("Done! Your table is reserved and the reference number is 4QX8R2ZB."),
               user("Thank you, goodbye."),
               system("You're welcome, enjoy your meal!")],
     "labels": {"domains": ["restaurant"], "domain": "restaurant"}},
    {"id": "MUL0202.json",
     "turns": [user("I need a 4 star hotel with free parking."),
               system("The Alder Lodge is a 4 star guesthouse with free parking. "
                      "Would you like a booking?"),
               user("Not yet. I also need a train from London Kings Cross on Sunday arriving "
                    "by 12:00."),
               system("TR7012 leaves at 09:17 and arrives at 10:08.\n"
                      "The fare is 18.88 pounds. Shall I book it?")],
     "labels": {"domains": ["hotel", "train"]}},
    {"id": "SNG0303.json",
     "turns": [user("My wallet was stolen, how do I reach the local police?"),
               system("Parkside Police Station can be reached on 01223358966.")],
     "labels": {"domains": ["police"], "domain": "police"}},
]

EXPECTED_21_GOOD_AMONG_ERRORS = [
    {"id": "SNG0404.json",
     "turns": [user("I need a taxi from the station to Clare College at 14:15."),
               system("A white Skoda will pick you up; the contact number is 07218092311.")],
     "labels": {"domains": ["taxi"], "domain": "taxi"}},
    {"id": "SNG0707.json",
     "turns": [user("Where is the nearest hospital with a paediatric clinic?"),
               system("Addenbrookes Hospital on Hills Road has a paediatric clinic.")],
     "labels": {"domains": ["hospital"], "domain": "hospital"}},
]

EXPECTED_22 = [
    {"id": "PMUL1001.json",
     "turns": [user("I'm after a cheap restaurant in the north.", intent="find_restaurant"),
               system("Royal Spice serves Indian food in the north and is cheap. "
                      "Want me to book it?"),
               user("Please book it for 2 people at 19:00 on Saturday.", intent="book_restaurant"),
               system("Booked! Reference number is 00000083. Anything else?"),
               user("I also need a taxi to get there by the booking time."),
               system("I have booked a red Toyota for you; the contact number is 07462519033.")],
     "labels": {"domains": ["restaurant", "taxi"]}},
    {"id": "SNG1002.json",
     "turns": [user("Do you have a guesthouse in the east with free wifi?", intent="find_hotel"),
               system("Yes, the Carolina Bed and Breakfast is a guesthouse in the east with "
                      "free wifi."),
               user("No, that's everything. Thanks!"),
               system("Glad I could help. Goodbye!")],
     "labels": {"domains": ["hotel"], "domain": "hotel"}},
    {"id": "SNG1003.json",
     "turns": [user("What time is the last train to Ely on Tuesday?", intent="find_train"),
               system("The last train to Ely on Tuesday departs at 23:35.")],
     "labels": {"domains": ["train"], "domain": "train"}},
]


def test_multiwoz21_data_json_gives_every_dialogue_with_goal_domains():
    dialogues, errors = convert("multiwoz21", os.path.join(MULTIWOZ21, "data.json"))
    assert dialogues == EXPECTED_21
    assert errors.skipped == 0


def test_multiwoz21_directory_input_reads_its_data_json():
    dialogues, _ = convert("multiwoz21", MULTIWOZ21)
    assert dialogues == EXPECTED_21


@pytest.mark.parametrize("split, kept", [("train", ["SNG0101.json"]), ("val", ["MUL0202.json"]),
                                         ("test", ["SNG0303.json"])])
def test_multiwoz21_split_keeps_the_dialogues_its_list_file_names(split, kept):
    dropped = collections.Counter()
    dialogues = [d.to_json() for d in FORMATS["multiwoz21"](MULTIWOZ21, ErrorPolicy("fail"), split, dropped)]
    assert dialogues == [d for d in EXPECTED_21 if d["id"] in kept]
    assert dropped == {f"another official split than {split}": 2}


def test_multiwoz21_split_without_the_list_files_names_the_missing_one(tmp_path):
    shutil.copy(os.path.join(MULTIWOZ21, "data.json"), tmp_path)
    with pytest.raises(FileNotFoundError, match="valListFile.txt: missing"):
        list(FORMATS["multiwoz21"](str(tmp_path), ErrorPolicy("fail"), "train"))


def test_multiwoz21_bad_record_fails_naming_file_and_record():
    path = os.path.join(MULTIWOZ21, "data_with_errors.json")
    with pytest.raises(DialogueFormatError) as caught:
        list(FORMATS["multiwoz21"](path, ErrorPolicy("fail")))
    assert caught.value.path == path
    assert caught.value.location == "SNG0505.json"
    assert caught.value.reason == "turn 1: empty text"


def test_multiwoz21_skip_mode_keeps_good_dialogues_and_counts_bad_ones():
    path = os.path.join(MULTIWOZ21, "data_with_errors.json")
    dialogues, errors = convert("multiwoz21", path, mode="skip")
    assert dialogues == EXPECTED_21_GOOD_AMONG_ERRORS
    assert errors.skipped == 2
    assert errors.messages[0] == f"{path}:SNG0505.json: turn 1: empty text"
    assert errors.messages[1].startswith(f"{path}:MUL0606.json: turn 1: turn order broken")


def test_multiwoz21_missing_input_raises_file_not_found(tmp_path):
    missing = str(tmp_path / "data.json")
    with pytest.raises(FileNotFoundError, match=missing):
        list(FORMATS["multiwoz21"](missing, ErrorPolicy("fail")))


def test_multiwoz22_split_directory_gives_services_and_single_active_intents():
    dialogues, errors = convert("multiwoz22", os.path.join(MULTIWOZ22, "train"))
    assert dialogues == EXPECTED_22
    assert errors.skipped == 0


def test_multiwoz22_single_file_input():
    dialogues, _ = convert("multiwoz22", os.path.join(MULTIWOZ22, "train", "dialogues_002.json"))
    assert dialogues == EXPECTED_22[2:]


def test_multiwoz22_bad_record_fails_naming_file_and_record():
    path = os.path.join(MULTIWOZ22, "with_errors", "dialogues_001.json")
    with pytest.raises(DialogueFormatError) as caught:
        list(FORMATS["multiwoz22"](path, ErrorPolicy("fail")))
    assert caught.value.path == path
    assert caught.value.location == "SNG1005.json"
    assert caught.value.reason.startswith("turn 1: turn order broken (speaker 'USER' where "
                                          "'SYSTEM' is due")


def test_multiwoz22_skip_mode_keeps_good_dialogues_and_counts_bad_ones():
    directory = os.path.join(MULTIWOZ22, "with_errors")
    path = os.path.join(directory, "dialogues_001.json")
    dialogues, errors = convert("multiwoz22", directory, mode="skip")
    assert [d["id"] for d in dialogues] == ["SNG1004.json", "SNG1007.json"]
    assert dialogues[0]["turns"] == [
        user("Any free museums in the centre?", intent="find_attraction"),
        system("The Fitzwilliam Museum in the centre is free to visit.")]
    assert dialogues[1]["labels"] == {"domains": ["police"], "domain": "police"}
    assert errors.skipped == 2
    assert errors.messages[1] == (f"{path}:3: 'dialogue_id' must be a non-empty string")


def test_multiwoz22_missing_input_raises_file_not_found(tmp_path):
    missing = str(tmp_path / "dev")
    with pytest.raises(FileNotFoundError, match=missing):
        list(FORMATS["multiwoz22"](missing, ErrorPolicy("fail")))
