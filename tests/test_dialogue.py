"""Canonical JSONL: validation messages for every kind of bad line, and the papers' operations."""
import json
import os

import pytest

from tfdialemb.dialogue import (Dialogue, DialogueFormatError, ErrorPolicy, SeenIds, Turn, drop_short,
                                merge_consecutive_turns, read_dialogues, released_splits, role_ids,
                                split_dialogues, split_of, write_dialogues)

GOOD = {"id": "g1", "turns": [{"speaker": "user", "text": "hi", "intent": "greet"},
                              {"speaker": "agent", "text": "hello"}], "labels": {"domain": "x"}}

# (line bytes, expected reason) — one kind of bad line each.
BAD_LINES = [
    (b'{"id": "a", "turns": [', "malformed JSON"),
    (b'["not", "an", "object"]', "expected a JSON object, got list"),
    (b'{"turns": [{"speaker": "u", "text": "x"}]}', "'id' must be a non-empty string"),
    (b'{"id": 7, "turns": [{"speaker": "u", "text": "x"}]}', "'id' must be a non-empty string"),
    (b'{"id": "b", "turns": []}', "no turns"),
    (b'{"id": "c"}', "'turns' must be a list"),
    (b'{"id": "d", "turns": ["hi"]}', "turn 0 is not an object"),
    (b'{"id": "e", "turns": [{"text": "hi"}]}', "turn 0 has no 'speaker'"),
    (b'{"id": "f", "turns": [{"speaker": " ", "text": "hi"}]}', "turn 0: 'speaker' must be a non-empty string"),
    (b'{"id": "g", "turns": [{"speaker": "u"}]}', "turn 0 has no 'text'"),
    (b'{"id": "h", "turns": [{"speaker": "u", "text": "  "}]}', "turn 0 has empty text"),
    (b'{"id": "i", "turns": [{"speaker": "u", "text": ["x"]}]}', "turn 0: 'text' must be a string"),
    (b'{"id": "j", "turns": [{"speaker": "u", "text": "x"}], "labels": []}', "'labels' must be an object"),
    (b'{"id": "k", "turns": [{"speaker": "u", "text": "x"}], "meta": 1}', "unknown top-level keys ['meta']"),
    (b'{"id": "l", "turns": [{"speaker": "u", "text": "caf\xe9"}]}', "not UTF-8 (byte 51"),
    (b'{"id": "o", "turns": [{"speaker": "u", "text": "x"}], "labels": {"domain": NaN}}',
     "NaN is not JSON (write a number, or null)"),
    (b'{"id": "m", "turns": [{"speaker": "u", "text": "x", "speaker": "v"}]}', "duplicate key 'speaker' in one object"),
    (b'{"id": "n", "turns": [{"speaker": "u", "text": "x"}], "labels": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "JSON nested deeper than Python's decoder can follow"),
    (b"", "blank line"),
    (json.dumps(GOOD).encode(), "duplicate id 'g1'"),
]


def _write(tmp_path, lines):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


@pytest.mark.parametrize("line, reason", BAD_LINES, ids=[r for _, r in BAD_LINES])
def test_each_bad_line_fails_with_file_line_and_reason(tmp_path, line, reason):
    path = _write(tmp_path, [json.dumps(GOOD).encode(), line])
    with pytest.raises(DialogueFormatError) as error:
        list(read_dialogues(path))
    assert str(error.value).startswith(f"{path}:2: ")
    assert reason in str(error.value)


def test_skip_keeps_every_good_line_and_counts_the_bad(tmp_path):
    goods = [dict(GOOD, id=f"good{i}") for i in range(3)]
    lines = [json.dumps(goods[0]).encode()]
    for line, _ in BAD_LINES[:-1]:
        lines.append(line)
    lines += [json.dumps(g).encode() for g in goods[1:]]
    errors = ErrorPolicy("skip")
    dialogues = list(read_dialogues(_write(tmp_path, lines), errors))
    assert [d.id for d in dialogues] == ["good0", "good1", "good2"]
    assert errors.skipped == len(BAD_LINES) - 1
    assert dialogues[0].turns[0] == Turn("user", "hi", {"intent": "greet"})
    assert dialogues[0].labels == {"domain": "x"}


def test_write_then_read_round_trip(tmp_path):
    dialogues = [Dialogue("x", (Turn("a", "你好"), Turn("b", "hi", {"intent": "greet"})), {"domain": "d"}),
                 Dialogue("y", (Turn("a", "only"),))]
    path = str(tmp_path / "sub" / "out.jsonl")
    assert write_dialogues(dialogues, path) == 2
    assert list(read_dialogues(path)) == dialogues
    assert "你好" in open(path, encoding="utf-8").read()
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["out.jsonl"]


def test_interrupted_write_leaves_no_file(tmp_path):
    def broken():
        yield Dialogue("x", (Turn("a", "t"),))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_dialogues(broken(), str(tmp_path / "out.jsonl"))
    assert list(tmp_path.iterdir()) == []


def test_merge_drop_roles_hand_worked():
    dialogue = Dialogue("m", (Turn("u", "hi", {"intent": "greet"}), Turn("u", "there"), Turn("s", "yes"),
                              Turn("u", "ok"), Turn("u", "bye")))
    merged = merge_consecutive_turns(dialogue)
    assert [(t.speaker, t.text) for t in merged.turns] == [("u", "hi there"), ("s", "yes"), ("u", "ok bye")]
    assert merged.turns[0].fields == {"intent": "greet"}
    assert role_ids(merged) == [0, 1, 0]
    assert role_ids(Dialogue("r", (Turn("s", "a"), Turn("u", "b"), Turn("t", "c"), Turn("s", "d")))) == [0, 1, 2, 0]
    assert [d.id for d in drop_short([dialogue, merged], 4)] == ["m"]


def test_splits_are_deterministic_and_follow_the_fractions():
    ids = [f"dialogue-{i}" for i in range(20000)]
    splits = [split_of(i, seed=3) for i in ids]
    assert splits == [split_of(i, seed=3) for i in ids]
    counts = {s: splits.count(s) / len(ids) for s in ("train", "dev", "test")}
    assert abs(counts["train"] - 0.8) < 0.015 and abs(counts["dev"] - 0.1) < 0.01
    assert splits != [split_of(i, seed=4) for i in ids]
    assert {split_of(i, 0, (0.0, 0.0, 1.0)) for i in ids[:100]} == {"test"}
    with pytest.raises(ValueError, match="summing to 1"):
        split_of("x", 0, (0.5, 0.5, 0.5))
    for fractions in ((float("nan"), 0.5, 0.5), (float("inf"), 0.0, 0.0), (0.5, 0.5, float("nan"))):
        with pytest.raises(ValueError, match="summing to 1"):
            split_of("x", 0, fractions)


def test_released_splits_follow_hugging_faces_train_test_split_by_hand():
    """source.py:111-120 on n dialogues: test_size=.1 shuffled with seed 0 holds out the first
    ceil(0.1 n) of default_rng(0).permutation(n) ([4, 19, 6, ...] for 20, [19, 4, 10, 11, ...] for
    25); those, unshuffled, test_size=.5: "val" (dev) the first m - ceil(m / 2), test the rest."""
    twenty = released_splits(20, 0)
    assert twenty[4] == "dev" and twenty[19] == "test" and twenty.count("train") == 18
    twenty_five = released_splits(25, 0)  # ceil(2.5) = 3 held out: dev 3 - ceil(1.5) = 1, test 2
    assert [i for i, s in enumerate(twenty_five) if s != "train"] == [4, 10, 19]
    assert twenty_five[19] == "dev" and twenty_five[4] == twenty_five[10] == "test"
    assert released_splits(20, 1) != twenty
    with pytest.raises(ValueError, match="summing to 1"):
        released_splits(20, 0, (0.5, 0.5, 0.5))


def test_split_dialogues_released_reads_the_file_order(tmp_path):
    path = tmp_path / "all.jsonl"
    write_dialogues([Dialogue(f"z{i}", (Turn("a", "hi"),)) for i in range(20)], str(path))
    counts = split_dialogues(str(path), str(tmp_path / "out"), 0, (0.9, 0.05, 0.05), method="released")
    assert counts == {"train": 18, "dev": 1, "test": 1}
    assert [d.id for d in read_dialogues(str(tmp_path / "out" / "dev.jsonl"))] == ["z4"]
    assert [d.id for d in read_dialogues(str(tmp_path / "out" / "test.jsonl"))] == ["z19"]


def test_error_policy_rejects_unknown_mode():
    with pytest.raises(ValueError, match="on_error must be one of"):
        ErrorPolicy("ignore")


def test_seen_ids_membership_agrees_with_a_set_across_growth():
    seen, reference = SeenIds(), set()
    for i in range(5000):  # grows the 1024-slot table several times
        key = f"d{i % 3001}"
        assert seen.add(key) == (key not in reference)
        reference.add(key)
    assert len(seen) == len(reference) == 3001
    assert all(f"d{i}" in seen for i in range(3001))
    assert not any(f"d{i}" in seen for i in range(3001, 6000))


def test_an_input_that_is_no_regular_file_is_named_for_what_it_is(tmp_path):
    """A FIFO, a symbolic link loop and a dangling link each said as such, not "does not exist"."""
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone.jsonl")
    expected = {"pipe": "is a named pipe (FIFO); the input file must be a regular file",
                "loop": "cannot read the input file: too many levels of symbolic links",
                "dangling": f"is a symbolic link to {tmp_path / 'gone.jsonl'}, which does not exist",
                "missing": "input file does not exist"}
    for name, reason in expected.items():
        with pytest.raises(OSError) as error:
            list(read_dialogues(str(tmp_path / name)))
        assert str(error.value).startswith(f"{tmp_path / name}: {reason}")
