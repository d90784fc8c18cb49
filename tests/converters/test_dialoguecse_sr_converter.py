"""DialogueCSE semantic-retrieval file → one record per query/candidate line, and its bad lines."""

import os

import pytest

from tfdialemb.converters.dialoguecse_eval import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "dialoguecse_sr")
SELECT = os.path.join(FIXTURES, "select.txt")
SELECT_WITH_ERRORS = os.path.join(FIXTURES, "select_with_errors.txt")
convert = FORMATS["dialoguecse_sr"]


def _record(qid, query, intent, positive_ids, negative_ids):
    labels = {"intent": intent, "positive_ids": positive_ids, "negative_ids": negative_ids}
    return Dialogue(qid, (Turn("query", query),), labels)


def test_converts_queries_and_candidates():
    errors = ErrorPolicy("fail")
    assert list(convert(SELECT, errors)) == [
        _record("0", "有什么办法能快点发货吗", "物流咨询", ["1", "2"], ["3", "4"]),
        _record("1", "今天下单什么时候能发货", "物流咨询", ["0", "2"], ["3"]),
        _record("2", "麻烦尽快帮我发货", "物流咨询", [], []),
        _record("3", "这个可以用信用卡付款吗", "支付方式", ["4"], ["0", "1"]),
        _record("4", "能用支付宝付钱吗", "", ["3"], []),
    ]
    assert errors.skipped == 0


def test_first_bad_line_fails_naming_file_and_line():
    with pytest.raises(DialogueFormatError) as raised:
        list(convert(SELECT_WITH_ERRORS, ErrorPolicy("fail")))
    assert raised.value.path == SELECT_WITH_ERRORS
    assert raised.value.location == 2
    assert raised.value.reason == (
        "expected 5 tab-separated columns (qid, query, intent, pos_ids, neg_ids), got 3"
    )


def test_skip_mode_keeps_every_good_line_and_counts_bad_ones():
    errors = ErrorPolicy("skip")
    assert list(convert(SELECT_WITH_ERRORS, errors)) == [
        _record("0", "怎么申请退款", "退款", ["1"], ["2"]),
        _record("2", "发票可以改抬头吗", "发票", [], []),
    ]
    assert errors.skipped == 4
    assert [message.split(": ", 1)[1] for message in errors.messages] == [
        "expected 5 tab-separated columns (qid, query, intent, pos_ids, neg_ids), got 3",
        "duplicate qid '0'",
        "empty query",
        "empty id in a comma-separated id list",
    ]


def test_missing_file_raises_with_path(tmp_path):
    missing = str(tmp_path / "select.txt")
    with pytest.raises(FileNotFoundError, match="select.txt"):
        list(convert(missing, ErrorPolicy("fail")))
