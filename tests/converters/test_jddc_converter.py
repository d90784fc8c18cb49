"""JDDC chat log → dialogues: sessions, speakers, tabs inside the text, header/BOM, bad lines."""

import os

import pytest

from tfdialemb.converters.jddc import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "jddc")
CHAT = os.path.join(FIXTURES, "chat.txt")
CHAT_WITH_ERRORS = os.path.join(FIXTURES, "chat_with_errors.txt")
convert = FORMATS["jddc"]

EXPECTED = [
    Dialogue(
        "3c5e1a9f0b7d4e21a8c6f2d94b1e7a05",
        (
            Turn("customer", "请问[ORDERID_10294837]这个订单什么时候发货"),
            Turn("customer", "急用"),
            Turn("agent", "您好，很高兴为您服务，请您稍等，正在为您查询订单信息"),
            Turn("agent", "您的订单预计[日期x]前送达哦#E-s[数字x]"),
            Turn("customer", "好的，谢谢"),
            Turn("agent", "不客气，请问还有其他可以帮您的吗?"),
        ),
    ),
    Dialogue(
        "8f2b6d0c1e9a47b3a5d7c4e6f0a1b2c3",
        (
            Turn("customer", "我想换货，机器开不了机"),
            Turn("agent", "亲亲，请问您是什么时候收到的商品呢?"),
            Turn("customer", "[日期x]收到的\t就用了一次"),
            Turn("agent", "好的，这边为您申请换货，稍后会有工作人员联系您"),
        ),
    ),
    Dialogue(
        "d41a7c2e9b0f43c8b6e1a5f7c3d9e2b4",
        (
            Turn("agent", "您好，请问有什么可以帮您?"),
            Turn("customer", "我的退款[金额x]元到账了吗"),
            Turn("agent", "亲，退款已经原路返回，预计[数字x]个工作日到账"),
        ),
    ),
    Dialogue(
        "3c5e1a9f0b7d4e21a8c6f2d94b1e7a05@15",
        (
            Turn("customer", "刚才忘了问，能开发票吗"),
            Turn("agent", "可以的，订单完成后在我的订单里申请电子发票就可以了"),
        ),
    ),
]

GOOD_IN_ERRORS_FILE = [
    Dialogue(
        "a7e3c91d5f2b48e0b6c4d8f1a2e5b7c9",
        (
            Turn("customer", "你好，这个手机支持全网通吗"),
            Turn("agent", "支持的亲，全网通[数字x]G"),
        ),
    ),
    Dialogue(
        "e0b9d2f4a6c8417e9b3d5f7a1c3e5b8d",
        (Turn("customer", "发什么快递"), Turn("agent", "默认京东物流哦")),
    ),
]


def test_converts_every_session():
    errors = ErrorPolicy("fail")
    assert list(convert(CHAT, errors)) == EXPECTED
    assert errors.skipped == 0


def test_first_bad_line_fails_naming_file_and_line():
    with pytest.raises(DialogueFormatError) as raised:
        list(convert(CHAT_WITH_ERRORS, ErrorPolicy("fail")))
    assert raised.value.path == CHAT_WITH_ERRORS
    assert raised.value.location == 3
    assert "expected 7 tab-separated columns" in raised.value.reason


def test_skip_mode_keeps_every_good_session_and_counts_bad_lines():
    errors = ErrorPolicy("skip")
    assert list(convert(CHAT_WITH_ERRORS, errors)) == GOOD_IN_ERRORS_FILE
    assert errors.skipped == 3
    assert [message.split(": ", 1)[0] for message in errors.messages] == [
        f"{CHAT_WITH_ERRORS}:{line}" for line in (3, 4, 5)
    ]
    assert "waiter_send must be 0 or 1, got '2'" in errors.messages[1]
    assert "empty content" in errors.messages[2]


def test_missing_file_raises_with_path(tmp_path):
    missing = str(tmp_path / "chat.txt")
    with pytest.raises(FileNotFoundError, match="chat.txt"):
        list(convert(missing, ErrorPolicy("fail")))
