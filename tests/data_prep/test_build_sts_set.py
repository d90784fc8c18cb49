import os
import subprocess
import sys

from data_prep.build_sts_set import build_pairs, labelled_utterances, score
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues


def _dialogues():
    return [
        Dialogue("a", (Turn("u", "hi there", {"intent": "greet"}), Turn("s", "book a room", {"intent": "book"}),
                       Turn("u", "a  room please", {"intent": "book"})), {"domain": "hotel"}),
        Dialogue("b", (Turn("u", "hello", {"intent": "greet"}), Turn("s", "a taxi now", {"intent": "taxi"}),
                       Turn("u", "no intent here")), {"domain": "taxi"}),
        Dialogue("c", (Turn("u", "hi there", {"intent": "book"}),), {"domain": "hotel"}),
    ]


def test_labels_and_scores_hand_worked():
    counts = {}
    utterances = labelled_utterances(_dialogues(), counts)
    # "hi there" has two labellings and is dropped (and counted); whitespace is collapsed.
    assert counts == {"ambiguous": 1}
    assert utterances == [("book a room", "book", "hotel"), ("a room please", "book", "hotel"),
                          ("hello", "greet", "taxi"), ("a taxi now", "taxi", "taxi")]
    assert score(utterances[0], utterances[1]) == 5
    assert score(utterances[2], ("hey", "greet", "hotel")) == 4
    assert score(utterances[2], utterances[3]) == 2
    assert score(utterances[0], utterances[3]) == 1


def test_pairs_are_balanced_distinct_and_seeded():
    utterances = [(f"t{i}", f"intent{i % 4}", f"domain{i % 3}") for i in range(60)]
    pairs = build_pairs(utterances, 40, seed=1)
    assert sorted(p[0] for p in pairs) == [1] * 10 + [2] * 10 + [4] * 10 + [5] * 10
    assert len({tuple(sorted(p[1:])) for p in pairs}) == 40
    assert build_pairs(utterances, 40, seed=1) == pairs and build_pairs(utterances, 40, seed=2) != pairs
    by_text = {u[0]: u for u in utterances}
    assert all(score(by_text[a], by_text[b]) == level for level, a, b in pairs)


def test_cli_writes_the_released_format(tmp_path):
    write_dialogues(_dialogues(), str(tmp_path / "d.jsonl"))
    (tmp_path / ".tmp-abcd1234-sts.txt").write_text("5\thalf", encoding="utf-8")  # left by a killed run
    result = subprocess.run([sys.executable, "-m", "data_prep.build_sts_set", f"--input={tmp_path}/d.jsonl",
                             f"--output={tmp_path}/sts.txt", "--pairs=4"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = (tmp_path / "sts.txt").read_text().splitlines()
    assert len(lines) <= 4 and all(len(line.split("\t")) == 3 for line in lines)
    assert "from 4 labelled utterances; dropped 1 texts with two labellings" in result.stdout
    assert f"removed .tmp-abcd1234-sts.txt, left in {tmp_path} by an interrupted run" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["d.jsonl", "sts.txt"]
