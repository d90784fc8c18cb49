"""Dialogue STS on hand-placed embeddings, from the released text file and from JSONL."""
import json

import numpy as np
import pytest

from tfdialemb.converters.dialoguecse_eval import FORMATS
from tfdialemb.dialogue import DialogueFormatError, ErrorPolicy, write_dialogues
from tfdialemb.eval.dialogue_sts import evaluate_dialogue_sts

# Sentence "x" against y1..y4 at the cosines below: gold order 1 2 3 4, cosine order 1 3 2 4.
COSINES = {"y1": -0.5, "y2": 0.5, "y3": 0.0, "y4": 0.9}
VECTORS = {"x": [1.0, 0.0], **{y: [c, np.sqrt(1 - c * c)] for y, c in COSINES.items()}}
STS = ["1\tx\ty1", "2\tx\ty2", "3\ty3\tx", "4\tx\ty4"]


def _embed(calls):
    def embed(texts):
        calls.append(list(texts))
        return np.array([VECTORS[text] for text in texts])
    return embed


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def _expected():
    gold, cosines = [1, 2, 3, 4], list(COSINES.values())
    # Ranks 1 2 3 4 against 1 3 2 4: 1 - 6 * 2 / (4 * 15).
    return {"spearman": 0.8, "pearson": np.corrcoef(gold, cosines)[0, 1], "pairs": 4}


def test_text_format(tmp_path):
    calls = []
    results = evaluate_dialogue_sts(_write(tmp_path / "sts.txt", STS), _embed(calls))
    assert results == pytest.approx(_expected())
    assert list(results) == ["spearman", "pearson", "pairs"]
    assert len(calls) == 1 and sorted(calls[0]) == ["x", "y1", "y2", "y3", "y4"]


def test_converted_jsonl(tmp_path):
    records = FORMATS["dialoguecse_sts"](_write(tmp_path / "sts.txt", STS), ErrorPolicy())
    path = str(tmp_path / "sts.jsonl")
    write_dialogues(records, path)
    assert evaluate_dialogue_sts(path, _embed([])) == pytest.approx(_expected())


def test_bad_lines_name_file_and_line(tmp_path):
    text = _write(tmp_path / "sts.txt", STS[:2] + ["9\tx\ty3"])
    with pytest.raises(DialogueFormatError, match=r"sts.txt:3: score must be a number from 1 to 5"):
        evaluate_dialogue_sts(text, _embed([]))
    one_turn = {"id": "p", "turns": [{"speaker": "s1", "text": "x"}], "labels": {"score": 3}}
    jsonl = _write(tmp_path / "sts.jsonl", [json.dumps(one_turn)])
    with pytest.raises(DialogueFormatError, match=r"sts.jsonl:1: a D-STS record has two turns"):
        evaluate_dialogue_sts(jsonl, _embed([]))


def test_too_few_pairs(tmp_path):
    """Two pairs of different gold scores correlate 1 or -1 with any model's cosines."""
    for pairs in (1, 2):
        path = _write(tmp_path / "sts.txt", STS[:pairs])
        with pytest.raises(ValueError) as refused:
            evaluate_dialogue_sts(path, _embed([]))
        assert str(refused.value) == (f"{path}: {pairs} sentence pair(s); a correlation needs at least 3 (that of 2 is "
                                      "1 or -1 whatever the model)")
    assert evaluate_dialogue_sts(_write(tmp_path / "sts.txt", STS[:3]), _embed([]))["pairs"] == 3


def test_a_set_whose_gold_scores_are_all_equal_is_refused(tmp_path):
    """Spearman and Pearson are undefined (NaN) when the gold scores do not vary."""
    path = _write(tmp_path / "sts.txt", ["3\tx\ty1", "3\tx\ty2", "3.0\ty3\tx"])
    with pytest.raises(ValueError, match="every gold score is 3; a correlation needs pairs with different gold scores"):
        evaluate_dialogue_sts(path, _embed([]))
