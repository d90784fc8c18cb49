"""ECD response-selection rows → sessions: negatives dropped, growing contexts merged, bad rows."""

import collections
import os

import pytest

from tfdialemb.converters.ecd import CONTAINED, FORMATS, NEGATIVE
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "ecd")
TRAIN = os.path.join(FIXTURES, "train.txt")
ERRORS = os.path.join(FIXTURES, "errors.txt")
convert = FORMATS["ecd"]


def _alternating(*texts):
    return tuple(Turn("AB"[i % 2], text) for i, text in enumerate(texts))


EXPECTED = [
    # Rows 1, 3 and 5 are one session with a growing context: the longest (row 5) is kept.
    Dialogue(
        "train-5",
        _alternating(
            "在 吗",
            "您好 亲 在 的 呢",
            "这个 纸尿裤 L 码 还有 货 吗",
            "有 的 亲 现在 拍下 今天 就 能 发货",
            "那 帮 我 发 韵达 吧",
            "好 的 亲 给 您 备注 韵达 哦",
            "多久 能 到 杭州",
            "一般 2 到 3 天 就 到 了 哦",
        ),
    ),
    # Row 9 repeats row 7 and adds nothing.
    Dialogue(
        "train-7",
        _alternating("在 吗", "您好", "湿巾 买 二 送 一 吗", "是 的 亲 拍 两 包 送 一 包"),
    ),
    # Row 11 opens like row 7 but then differs: a new session; row 13 is a prefix of it.
    Dialogue(
        "train-11",
        _alternating(
            "在 吗",
            "您好",
            "我 的 快递 怎么 还 没 到",
            "亲 这边 帮 您 联系 快递 查 一下",
            "麻烦 快 点",
            "好 的 亲 有 消息 第一 时间 通知 您",
        ),
    ),
    Dialogue(
        "train-15",
        _alternating(
            "发票 怎么 开",
            "亲 下单 时 备注 发票 抬头 就 可以 了",
            "好 的 谢谢",
            "不 客气 哦 祝 您 购物 愉快",
        ),
    ),
]


def test_recovers_sessions_from_positive_rows():
    errors = ErrorPolicy("fail")
    assert list(convert(TRAIN, errors)) == EXPECTED
    assert errors.skipped == 0


def test_the_rows_left_out_are_counted_by_reason():
    # 16 rows: 8 negatives; of the 8 positives, 4 are kept (rows 5, 7, 11, 15) and rows 1 and 3
    # (shorter contexts of row 5), 9 (a repeat of row 7) and 13 (a prefix of row 11) are left out.
    dropped = collections.Counter()
    assert len(list(convert(TRAIN, ErrorPolicy("fail"), dropped=dropped))) == 4
    assert dropped == {NEGATIVE: 8, CONTAINED: 4}


def test_first_bad_row_fails_naming_file_and_line():
    with pytest.raises(DialogueFormatError) as raised:
        list(convert(ERRORS, ErrorPolicy("fail")))
    assert raised.value.path == ERRORS
    assert raised.value.location == 3
    assert raised.value.reason == "label must be 0 or 1, got '2'"


def test_skip_mode_keeps_every_good_session_and_counts_bad_rows():
    errors = ErrorPolicy("skip")
    assert list(convert(ERRORS, errors)) == [
        Dialogue(
            "errors-1",
            _alternating(
                "这个 奶粉 是 国行 的 吗",
                "是 的 亲 正品 国行",
                "保质期 到 什么 时候",
                "2019 年 3 月 哦 亲",
            ),
        ),
        Dialogue(
            "errors-7",
            _alternating(
                "能 便宜 点 吗",
                "亲 已经 是 活动 价 了 哦",
                "那 送 点 小 礼物 吧",
                "好 的 给 您 备注 送 试吃 装",
            ),
        ),
    ]
    assert errors.skipped == 4
    assert [message.split(": ", 1)[1] for message in errors.messages] == [
        "label must be 0 or 1, got '2'",
        "expected label, context turns and response separated by tabs, got 2 field(s)",
        "empty turn(s) [2] (1-based, response last)",  # column 3
        "empty turn(s) [4] (1-based, response last)",  # column 5
    ]


def test_missing_file_raises_with_path(tmp_path):
    missing = str(tmp_path / "train.txt")
    with pytest.raises(FileNotFoundError, match="train.txt"):
        list(convert(missing, ErrorPolicy("fail")))
