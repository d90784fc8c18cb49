"""Building an STP set: records per (dialogue, h, g), distractors from other dialogues or a file
(a causal LM's samples: test_causal_lm_distractors.py), each record naming its source."""
import json
import os
import subprocess
import sys

import pytest

from data_prep.build_stp_set import build_stp_set, parse_int_list
from tfdialemb.dialogue import Dialogue, DialogueFormatError, Turn, write_dialogues
from tfdialemb.eval.short_term_planning import read_planning_records

LENGTHS = {"short": 3, "mid": 5, "long": 8}  # turns "<dialogue> <t>", unique to each dialogue


def _source(tmp_path):
    path = str(tmp_path / "dialogues.jsonl")
    write_dialogues([Dialogue(name, tuple(Turn("ab"[t % 2], f"{name} {t}") for t in range(n)))
                     for name, n in LENGTHS.items()], path)
    return path


def _build(tmp_path, name="stp.jsonl", **kwargs):
    output = str(tmp_path / name)
    counts = build_stp_set(_source(tmp_path), output, **kwargs)
    return counts, list(read_planning_records(output))


def test_records_per_history_length_and_goal_distance(tmp_path):
    # len(d) >= h + g + 1: "short" (3) has none; "mid" (5): h=2 g=1,2; "long" (8): h=2 g=1..4,
    # h=5 g=1,2.
    counts, records = _build(tmp_path, history_lengths=[5, 2], goal_distances=[1, 2, 3, 4],
                             distractors=4)
    assert counts == {"dialogues": 3, "records": 8, "blank_samples": 0}
    assert [(r.id, r.history_length, r.goal_distance) for r in records] == [
        ("mid/h2/g1", 2, 1), ("mid/h2/g2", 2, 2),
        ("long/h2/g1", 2, 1), ("long/h2/g2", 2, 2), ("long/h2/g3", 2, 3), ("long/h2/g4", 2, 4),
        ("long/h5/g1", 5, 1), ("long/h5/g2", 5, 2)]
    assert {r.distractor_source for r in records} == {"random_pool seed=0"}
    record = records[7]
    assert record.history == tuple(f"long {t}" for t in range(5))
    assert (record.candidate, record.goal) == ("long 5", "long 7")
    for record in records:
        owner = record.id.split("/")[0]
        assert len(record.distractors) == 4
        assert len(set(record.distractors)) == 4
        assert not any(d.startswith(owner + " ") for d in record.distractors)


def test_seeded_distractors(tmp_path):
    def distractors(seed, name):
        return [r.distractors for r in _build(tmp_path, name, history_lengths=[2],
                                              goal_distances=[1], distractors=3, seed=seed)[1]]

    assert distractors(0, "a.jsonl") == distractors(0, "b.jsonl")
    assert len({tuple(distractors(seed, f"s{seed}.jsonl")) for seed in range(4)}) > 1


def test_distractors_file(tmp_path):
    generated = tmp_path / "generated.jsonl"
    entries = {"mid/h2/g1": ["maybe", "no"], "long/h2/g1": ["sure"]}
    generated.write_text("".join(json.dumps({"id": i, "distractors": d}) + "\n"
                                 for i, d in entries.items()))
    _, records = _build(tmp_path, history_lengths=[2], goal_distances=[1],
                        distractors_file=str(generated))
    assert {r.id: list(r.distractors) for r in records} == entries
    assert {r.distractor_source for r in records} == {f"file:{generated}"}

    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({"id": "mid/h2/g1", "distractors": ["x"]}) + "\n")
    with pytest.raises(ValueError, match="no distractors for record 'long/h2/g1'"):
        _build(tmp_path, "m.jsonl", history_lengths=[2], goal_distances=[1],
               distractors_file=str(missing))
    assert not os.path.exists(tmp_path / "m.jsonl")
    extra = tmp_path / "extra.jsonl"
    extra.write_text(generated.read_text() + json.dumps({"id": "gone/h2/g1",
                                                          "distractors": ["x"]}) + "\n")
    with pytest.raises(ValueError, match=r"1 ids match no record of this set .*'gone/h2/g1'"):
        _build(tmp_path, "u.jsonl", history_lengths=[2], goal_distances=[1],
               distractors_file=str(extra))
    assert not os.path.exists(tmp_path / "u.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "mid/h2/g1", "distractors": []}) + "\n")
    with pytest.raises(DialogueFormatError, match="bad.jsonl:1: expected"):
        _build(tmp_path, "b.jsonl", distractors_file=str(bad))


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="too few distinct utterances of other dialogues"):
        _build(tmp_path, history_lengths=[2], goal_distances=[1], distractors=12)
    with pytest.raises(ValueError, match="no dialogue has h \\+ g \\+ 1 turns"):
        _build(tmp_path, history_lengths=[10], goal_distances=[1])
    with pytest.raises(ValueError, match="history_lengths must be positive integers"):
        _build(tmp_path, history_lengths=[0])
    with pytest.raises(ValueError, match="from a file or from a model, not both"):
        _build(tmp_path, distractors_file="generated.jsonl", sampler=object())
    assert not os.path.exists(tmp_path / "stp.jsonl")
    assert parse_int_list(["2", "5"], "--history_lengths") == [2, 5]
    with pytest.raises(ValueError, match="--history_lengths must be a comma-separated list of "
                                         "integers, got '2,x'"):
        parse_int_list(["2", "x"], "--history_lengths")


def test_command_line(tmp_path):
    source, output = _source(tmp_path), tmp_path / "stp.jsonl"
    result = subprocess.run([sys.executable, "-m", "data_prep.build_stp_set", f"--input={source}",
                             f"--output={output}", "--history_lengths=2", "--goal_distances=1,2",
                             "--distractors=5"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "wrote 4 STP records from 3 dialogues" in result.stdout
    assert [len(r.distractors) for r in read_planning_records(str(output))] == [5] * 4
