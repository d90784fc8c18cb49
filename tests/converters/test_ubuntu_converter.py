"""Ubuntu V1 (Xu et al. release) response-selection lines -> canonical dialogues, on fixtures."""
import os

import pytest

from tfdialemb.converters.response_selection import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "ubuntu")
convert = FORMATS["ubuntu"]

ISO = (
    Turn("A", "how do i mount an iso file in ubuntu ?"),
    Turn("B", "sudo mount -o loop image.iso /mnt"),
    Turn("A", "thanks , is there a gui way ?"),
)
WIFI = (
    Turn("A", "my wifi stopped working after the upgrade"),
    Turn("B", "which card do you have ?"),
)


def test_every_line_becomes_context_plus_response():
    dialogues = list(convert(os.path.join(FIXTURES, "train.txt"), ErrorPolicy("fail")))
    assert dialogues == [
        Dialogue("train-1", ISO + (Turn("B", "right click it and open with disk image mounter"),),
                 {"label": 1, "context_id": 0}),
        Dialogue("train-2", ISO + (Turn("B", "try reinstalling the nvidia driver"),),
                 {"label": 0, "context_id": 0}),
        Dialogue("train-3", WIFI + (Turn("A", "an intel 5100 , lspci shows it"),),
                 {"label": 1, "context_id": 1}),
        Dialogue("train-4", WIFI + (Turn("A", "you need to edit /etc/fstab first"),),
                 {"label": 0, "context_id": 1}),
    ]


def test_bad_line_fails_with_file_and_line():
    path = os.path.join(FIXTURES, "bad", "train.txt")
    with pytest.raises(DialogueFormatError, match="label must be 0 or 1") as caught:
        list(convert(path, ErrorPolicy("fail")))
    assert (caught.value.path, caught.value.location) == (path, 2)
    assert str(caught.value).startswith(f"{path}:2:")


def test_skip_mode_keeps_good_lines_and_their_shared_context():
    # Lines 2 (label 2), 4 (no response field) and 5 (empty turn) are bad; lines 1 and 3 keep one
    # context_id although a bad line separates them.
    path = os.path.join(FIXTURES, "bad", "train.txt")
    errors = ErrorPolicy("skip")
    dialogues = list(convert(path, errors))
    assert dialogues == [
        Dialogue("train-1", WIFI + (Turn("A", "an intel 5100 , lspci shows it"),),
                 {"label": 1, "context_id": 0}),
        Dialogue("train-3", WIFI + (Turn("A", "you need to edit /etc/fstab first"),),
                 {"label": 0, "context_id": 0}),
        Dialogue("train-6", ISO + (Turn("B", "right click it and open with disk image mounter"),),
                 {"label": 1, "context_id": 1}),
    ]
    assert errors.skipped == 3
    assert [message.split(": ")[0] for message in errors.messages] == [
        f"{path}:2", f"{path}:4", f"{path}:5"]


def test_missing_file_names_the_path(tmp_path):
    missing = str(tmp_path / "valid.txt")
    with pytest.raises(FileNotFoundError, match="valid.txt"):
        list(convert(missing, ErrorPolicy("fail")))
