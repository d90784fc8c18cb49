"""DialogueCSE D-STS file → one sentence-pair record per line, and its bad lines."""

import os

import pytest

from tfdialemb.converters.dialoguecse_eval import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "dialoguecse_sts")
STS = os.path.join(FIXTURES, "sts.txt")
STS_WITH_ERRORS = os.path.join(FIXTURES, "sts_with_errors.txt")
convert = FORMATS["dialoguecse_sts"]


def _pair(line, score, first, second):
    return Dialogue(f"sts-{line}", (Turn("s1", first), Turn("s2", second)), {"score": score})


def test_converts_every_pair():
    errors = ErrorPolicy("fail")
    dialogues = list(convert(STS, errors))
    assert dialogues == [
        _pair(1, 5.0, "什么时候发货呀", "请问几时能发货"),
        _pair(2, 1.0, "可以开发票吗", "快递到哪里了"),
        _pair(3, 3.0, "能便宜点吗", "有优惠券吗"),
        _pair(4, 4.0, "帮我改一下地址", "地址填错了能改吗"),
    ]
    assert all(type(d.labels["score"]) is float for d in dialogues)
    assert errors.skipped == 0


def test_first_bad_line_fails_naming_file_and_line():
    with pytest.raises(DialogueFormatError) as raised:
        list(convert(STS_WITH_ERRORS, ErrorPolicy("fail")))
    assert raised.value.path == STS_WITH_ERRORS
    assert raised.value.location == 2
    assert raised.value.reason == "score must be a number from 1 to 5, got '6'"


def test_skip_mode_keeps_every_good_pair_and_counts_bad_lines():
    errors = ErrorPolicy("skip")
    assert list(convert(STS_WITH_ERRORS, errors)) == [
        _pair(1, 2.0, "发什么快递", "包邮吗"),
        _pair(7, 5.0, "退款到账了吗", "钱退回来了没"),
    ]
    assert errors.skipped == 5
    assert [message.split(": ", 1)[1] for message in errors.messages] == [
        "score must be a number from 1 to 5, got '6'",
        "score must be a number from 1 to 5, got '高'",
        "score must be a number from 1 to 5, got 'nan'",
        "expected 3 tab-separated columns (score, s1, s2), got 2",
        "empty sentence",
    ]


def test_missing_file_raises_with_path(tmp_path):
    missing = str(tmp_path / "sts.txt")
    with pytest.raises(FileNotFoundError, match="sts.txt"):
        list(convert(missing, ErrorPolicy("fail")))
