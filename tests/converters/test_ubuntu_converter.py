"""Ubuntu V1 (Xu et al. release) response-selection lines -> canonical dialogues, on fixtures in the
released layouts: test blocks of 10 lines per context, the positive first; training pairs of a
positive and a negative per context."""
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
MOUNT = (Turn("A", "how do i mount a usb stick from the terminal ?"), Turn("B", "sudo mount /dev/sdb1 /mnt"))


def test_every_line_becomes_context_plus_response():
    dialogues = list(convert(os.path.join(FIXTURES, "train.txt"), ErrorPolicy("fail"), block_size=2))
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


def test_adjacent_test_blocks_sharing_a_context_stay_two_blocks_of_ten():
    """Lines 1-10 and 11-20 ask about the same mount: grouping by identical context would merge
    them into one block of 20 candidates with two positives."""
    dialogues = list(convert(os.path.join(FIXTURES, "test.txt"), ErrorPolicy("fail")))
    assert [d.labels["context_id"] for d in dialogues] == [0] * 10 + [1] * 10 + [2] * 10
    assert [d.labels["label"] for d in dialogues] == ([1] + [0] * 9) * 3
    assert all(d.turns[:-1] == MOUNT for d in dialogues[:20]) and dialogues[20].turns[:-1] == WIFI
    assert [d.id for d in dialogues[9:11]] == ["test-10", "test-11"]


def test_a_block_size_that_does_not_fit_the_file_is_refused_with_the_lines():
    errors = ErrorPolicy("skip")
    assert not list(convert(os.path.join(FIXTURES, "test.txt"), errors, block_size=15))
    assert [message.split("test.txt:")[1] for message in errors.messages] == [
        "1-15: 2 positives; each block of an Ubuntu file has exactly one",
        "16-30: line 21 has another context than line 16, but a block of --block_size=15 lines holds one "
        "context's candidates (training files pair each context with one negative: --block_size=2)"]
    with pytest.raises(DialogueFormatError, match=r"train\.txt:1-10: the file ends after 4 line\(s\) of this "
                                                  r"block; blocks have --block_size=10 lines"):
        list(convert(os.path.join(FIXTURES, "train.txt"), ErrorPolicy("fail")))
    # Lines 3-4 continue the context of lines 1-2 (a 10-line block cut into 2s), without the positive.
    with pytest.raises(DialogueFormatError, match=r"test\.txt:3-4: no positive, and the context of the block "
                                                  r"before it: one context's candidates run on past --block_size=2 "
                                                  r"lines; pass the file's block size"):
        list(convert(os.path.join(FIXTURES, "test.txt"), ErrorPolicy("fail"), block_size=2))


def test_bad_line_fails_with_file_and_line():
    path = os.path.join(FIXTURES, "bad", "train.txt")
    with pytest.raises(DialogueFormatError, match="label must be 0 or 1") as caught:
        list(convert(path, ErrorPolicy("fail"), block_size=2))
    assert (caught.value.path, caught.value.location) == (path, 4)
    assert str(caught.value).startswith(f"{path}:4:")


def test_skip_mode_keeps_only_whole_valid_blocks_and_names_the_rest():
    path = os.path.join(FIXTURES, "bad", "train.txt")
    errors = ErrorPolicy("skip")
    dialogues = list(convert(path, errors, block_size=2))
    assert dialogues == [
        Dialogue("train-1", WIFI + (Turn("A", "an intel 5100 , lspci shows it"),), {"label": 1, "context_id": 0}),
        Dialogue("train-2", WIFI + (Turn("A", "you need to edit /etc/fstab first"),), {"label": 0, "context_id": 0}),
        Dialogue("train-11", ISO + (Turn("B", "right click it and open with disk image mounter"),),
                 {"label": 1, "context_id": 5}),
        Dialogue("train-12", ISO + (Turn("B", "try reinstalling the nvidia driver"),), {"label": 0, "context_id": 5}),
    ]
    assert [message[len(path) + 1:] for message in errors.messages] == [
        "4: label must be 0 or 1, got '2'",
        "5: expected label, context turns and response separated by tabs, got 2 field(s)",
        "6: empty turn(s) [2] (1-based, response last)",
        "3-4: 1 valid line(s) of 2; blocks have --block_size=2 lines (test and validation files: 10 candidates "
        "per context; training files: 2)",
        "7-8: 2 positives; each block of an Ubuntu file has exactly one",
        "9-10: line 10 has another context than line 9, but a block of --block_size=2 lines holds one context's "
        "candidates (training files pair each context with one negative: --block_size=2)",
    ]
    assert errors.skipped == 6


def test_missing_file_names_the_path(tmp_path):
    missing = str(tmp_path / "valid.txt")
    with pytest.raises(FileNotFoundError, match="valid.txt"):
        list(convert(missing, ErrorPolicy("fail")))
