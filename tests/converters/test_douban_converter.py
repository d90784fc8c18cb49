"""Douban Conversation Corpus response-selection lines -> canonical dialogues, on fixtures in the
released test layout: 10 lines per session, human labels."""
import os

import pytest

from tfdialemb.converters.response_selection import FORMATS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, ErrorPolicy, Turn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "douban")
convert = FORMATS["douban"]

MOVIE = (
    Turn("A", "周末 有 什么 好看 的 电影 推荐 吗"),
    Turn("B", "最近 上映 的 那部 科幻片 不错"),
    Turn("A", "在 哪个 影院 看 比较 好"),
)


def candidate(number, response, label, context_id=0):
    return Dialogue(f"test-{number}", MOVIE + (Turn("B", response),),
                    {"label": label, "context_id": context_id})


def test_a_test_block_of_ten_candidates_shares_one_context_id():
    # Douban's human-labelled test blocks may hold several positives: here lines 1 and 3.
    dialogues = list(convert(os.path.join(FIXTURES, "test.txt"), ErrorPolicy("fail")))
    assert dialogues == [
        candidate(1, "万达 的 IMAX 厅 效果 最好", 1),
        candidate(2, "我 家 猫 今天 又 打翻 了 水杯", 0),
        candidate(3, "市中心 那家 新开 的 影城 音响 很 棒", 1),
        candidate(4, "明天 要 下雨 记得 带 伞", 0),
        candidate(5, "这 道 数学 题 怎么 做", 0),
        candidate(6, "求 推荐 好用 的 护手霜", 0),
        candidate(7, "火车票 已经 买好 了", 0),
        candidate(8, "楼主 的 头像 好 可爱", 0),
        candidate(9, "周一 早上 开会 别 迟到", 0),
        candidate(10, "这 首 歌 的 吉他 谱 哪里 有", 0),
    ]


def test_adjacent_sessions_with_one_context_stay_two_blocks(tmp_path):
    """Two sessions quote the same context, each with a positive (2, then 1): blocks by position
    (Douban's human labels allow several positives, unlike Ubuntu's one)."""
    lines = open(os.path.join(FIXTURES, "twin", "test.txt"), encoding="utf-8").read().splitlines(keepends=True)
    both = tmp_path / "test.txt"
    both.write_text("".join(lines[:14] + ["1" + lines[14][1:]] + lines[15:]), encoding="utf-8")
    dialogues = list(convert(str(both), ErrorPolicy("fail")))
    assert [d.labels["context_id"] for d in dialogues] == [0] * 10 + [1] * 10
    assert [sum(d.labels["label"] for d in dialogues[b * 10:(b + 1) * 10]) for b in (0, 1)] == [2, 1]
    with pytest.raises(DialogueFormatError, match=r"test\.txt:1-10: 2 positives; each block of an Ubuntu file"):
        list(FORMATS["ubuntu"](str(both), ErrorPolicy("fail")))


def test_a_block_without_a_positive_that_repeats_the_context_before_it_is_refused():
    """2 positives, then 10 more candidates of the same context and none: a 20-candidate block cut at
    10 lines, refused naming --block_size (on Douban it would pass as a context without a positive)."""
    path = os.path.join(FIXTURES, "twin", "test.txt")
    with pytest.raises(DialogueFormatError, match=r"test\.txt:11-20: no positive, and the context of the block "
                                                  r"before it: .* past --block_size=10 lines"):
        list(convert(path, ErrorPolicy("fail")))
    dialogues = list(convert(path, ErrorPolicy("fail"), block_size=20))
    assert [d.labels["context_id"] for d in dialogues] == [0] * 20
    assert sum(d.labels["label"] for d in dialogues) == 2


def test_bad_line_fails_with_file_and_line():
    path = os.path.join(FIXTURES, "bad", "test.txt")
    with pytest.raises(DialogueFormatError, match="label must be 0 or 1, got 'yes'") as caught:
        list(convert(path, ErrorPolicy("fail")))
    assert (caught.value.path, caught.value.location) == (path, 2)


def test_skip_mode_drops_a_block_that_lost_lines():
    # Line 2 has label "yes", line 4 empty turns: block 1-10 lacks two candidates; 11-20 is whole.
    path = os.path.join(FIXTURES, "bad", "test.txt")
    errors = ErrorPolicy("skip")
    dialogues = list(convert(path, errors))
    assert [d.id for d in dialogues] == [f"test-{n}" for n in range(11, 21)]
    assert {d.labels["context_id"] for d in dialogues} == {1}
    assert dialogues[0] == Dialogue("test-11", (Turn("A", "有 人 喜欢 喝 普洱 吗"), Turn("B", "熟 普 比较 温和"),
                                                Turn("A", "生 普 要 放 几年 再 喝")), {"label": 1, "context_id": 1})
    assert errors.skipped == 3
    assert "empty turn(s) [2, 3]" in errors.messages[1]
    assert errors.messages[2].startswith(f"{path}:1-10: 8 valid line(s) of 10")
