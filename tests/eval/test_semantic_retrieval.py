"""Semantic retrieval on hand-placed embeddings, from the released text file and from JSONL."""
import json

import numpy as np
import pytest

from tfdialemb.converters.dialoguecse_eval import FORMATS
from tfdialemb.dialogue import DialogueFormatError, ErrorPolicy, write_dialogues
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval, read_queries

# Query q is closest to c1, then c3, c2, c4; query r to c2, then c3, c1.
VECTORS = {
    "q": [1.0, 0.0], "r": [0.0, 1.0],
    "c1": [1.0, 0.1], "c2": [0.0, 1.0], "c3": [1.0, 0.5], "c4": [-1.0, 0.0],
    "lonely": [0.5, 0.5],
}
SELECT = [
    "0\tq\tintent_a\t1,2\t3,4",   # ranked c1+ c3- c2+ c4-: AP (1 + 2/3) / 2, RR 1
    "1\tc1\tintent_a\t\t",
    "2\tc2\tintent_a\t\t",
    "3\tc3\tintent_b\t\t",
    "4\tc4\tintent_c\t\t",
    "5\tr\t\t3\t2,1",              # ranked c2- c3+ c1-: AP 1/2, RR 1/2
    "6\tlonely\tintent_a\t1\t",    # no negatives: skipped and counted
]
EXPECTED = {
    "map": (5 / 6 + 1 / 2) / 2, "mrr": (1 + 1 / 2) / 2,
    "p@1": (1 + 0) / 2, "p@2": (1 / 2 + 1 / 2) / 2, "p@5": None,  # 4 and 3 candidates: all in the top 5
    "p@10": None, "r@10": None, "r@20": None, "r@50": None,
    "queries": 2, "skipped_queries": 1,
}


class FakeEmbedder:
    """Looks texts up in VECTORS and remembers what it was asked for."""

    def __init__(self, vectors=None):
        self.vectors = vectors or VECTORS
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.array([self.vectors[text] for text in texts])


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def _converted(tmp_path, name):
    records = FORMATS["dialoguecse_sr"](_write(tmp_path / "select.txt", SELECT), ErrorPolicy())
    path = str(tmp_path / name)
    write_dialogues(records, path)
    return path


def test_metrics_of_the_released_text_format(tmp_path):
    embed = FakeEmbedder()
    results = evaluate_semantic_retrieval(_write(tmp_path / "select.txt", SELECT), embed)
    assert results == pytest.approx(EXPECTED)
    assert list(results) == list(EXPECTED)
    assert len(embed.calls) == 1
    assert sorted(embed.calls[0]) == ["c1", "c2", "c3", "c4", "q", "r"]


@pytest.mark.parametrize("name", ["select.jsonl", "select_converted.txt"])
def test_converted_jsonl_gives_the_same_metrics(tmp_path, name):
    """JSONL is recognised by its extension or, failing that, by its first line."""
    path = _converted(tmp_path, name)
    assert evaluate_semantic_retrieval(path, FakeEmbedder()) == pytest.approx(EXPECTED)


def test_converted_jsonl_with_a_byte_order_mark_is_recognised_by_its_first_line(tmp_path):
    path = _converted(tmp_path, "select_converted.txt")
    with open(path, "rb") as f:
        content = f.read()
    with open(path, "wb") as f:
        f.write(b"\xef\xbb\xbf" + content)
    assert evaluate_semantic_retrieval(path, FakeEmbedder()) == pytest.approx(EXPECTED)


def test_a_cut_off_is_scored_when_a_query_has_more_candidates_than_it(tmp_path):
    """P@5 of q's 4 candidates keeps DialogueCSE's fixed denominator once a query has 6."""
    vectors = dict(VECTORS, c5=[0.9, 0.3], c6=[0.8, 0.6])  # r: c2- c6+ c3+ c5- c1- c4-
    lines = SELECT[:5] + ["5\tr\t\t3,7\t2,1,4,6", "6\tc5\tintent_b\t\t", "7\tc6\tintent_b\t\t"]
    results = evaluate_semantic_retrieval(_write(tmp_path / "select.txt", lines), FakeEmbedder(vectors))
    assert results["p@5"] == pytest.approx((2 / 5 + 2 / 5) / 2)
    assert results["map"] == pytest.approx((5 / 6 + (1 / 2 + 2 / 3) / 2) / 2)
    assert results["p@10"] is None and results["r@10"] is None


def test_constant_embeddings_get_the_worst_ranking_not_the_listed_order(tmp_path):
    """Positives are listed first; a collapsed encoder must not be rewarded for that."""
    constant = FakeEmbedder({text: [1.0, 1.0] for text in VECTORS})
    results = evaluate_semantic_retrieval(_write(tmp_path / "select.txt", SELECT), constant)
    # q ranks c3- c4- c1+ c2+; r ranks c2- c1- c3+.
    assert results["map"] == pytest.approx(((1 / 3 + 2 / 4) / 2 + 1 / 3) / 2)
    assert results["mrr"] == pytest.approx((1 / 3 + 1 / 3) / 2)


def test_queries_resolve_ids_to_texts(tmp_path):
    queries, skipped = read_queries(_write(tmp_path / "select.txt", SELECT))
    assert [(q.text, q.positives, q.negatives) for q in queries] == [
        ("q", ("c1", "c2"), ("c3", "c4")), ("r", ("c3",), ("c2", "c1"))]
    assert skipped == 1


def test_unknown_id_names_file_and_line(tmp_path):
    path = _write(tmp_path / "select.txt", SELECT[:5] + ["5\tr\t\t3\t2,9"])
    with pytest.raises(DialogueFormatError) as raised:
        evaluate_semantic_retrieval(path, FakeEmbedder())
    assert (raised.value.path, raised.value.location) == (path, 6)
    assert raised.value.reason == "unknown candidate ids ['9']"


def test_id_both_positive_and_negative_is_an_error(tmp_path):
    path = _write(tmp_path / "select.txt", SELECT[:5] + ["5\tr\t\t3,2\t2,1"])
    with pytest.raises(DialogueFormatError, match=r"select.txt:6: ids both positive and negative"):
        evaluate_semantic_retrieval(path, FakeEmbedder())


@pytest.mark.parametrize("line", ["5\tr\t\t3,3\t2,1", "5\tr\t\t3\t2,1,2"])
def test_a_candidate_listed_twice_is_refused(tmp_path, line):
    """Counted twice, a repeated positive would lift r's AP from 1/2 (c2- c3+ c1-) to
    (1/2 + 2/3) / 2 (c2- c3+ c3+ c1-)."""
    path = _write(tmp_path / "select.txt", SELECT[:5] + [line])
    with pytest.raises(DialogueFormatError, match=r"select.txt:6: ids listed twice: \['[32]'\]"):
        evaluate_semantic_retrieval(path, FakeEmbedder())


@pytest.mark.parametrize("line", ["5\tr\t\t5,2\t1", "5\tr\t\t2\t1,5"])
def test_a_query_listed_among_its_own_candidates_is_refused(tmp_path, line):
    """Its own text would score cosine 1 and take the first rank."""
    path = _write(tmp_path / "select.txt", SELECT[:5] + [line])
    with pytest.raises(DialogueFormatError, match=r"select.txt:6: query '5' lists itself as a candidate"):
        evaluate_semantic_retrieval(path, FakeEmbedder())


def test_bad_lines_of_either_format_name_file_and_line(tmp_path):
    text = _write(tmp_path / "select.txt", SELECT[:2] + ["2\tc2\tintent_a\t1"])
    with pytest.raises(DialogueFormatError, match=r"select.txt:3: expected 5 tab-separated"):
        evaluate_semantic_retrieval(text, FakeEmbedder())
    record = {"id": "0", "turns": [{"speaker": "query", "text": "q"}], "labels": {"intent": "a"}}
    jsonl = _write(tmp_path / "select.jsonl", [json.dumps(record)])
    with pytest.raises(DialogueFormatError, match=r"select.jsonl:1: an SR record has one turn"):
        evaluate_semantic_retrieval(jsonl, FakeEmbedder())


def test_a_set_without_usable_queries_or_file(tmp_path):
    path = _write(tmp_path / "select.txt", SELECT[1:5] + [SELECT[6]])
    with pytest.raises(ValueError, match="no query has both positive and negative candidates"):
        evaluate_semantic_retrieval(path, FakeEmbedder())
    with pytest.raises(FileNotFoundError, match="none.txt: eval file does not exist"):
        evaluate_semantic_retrieval(str(tmp_path / "none.txt"), FakeEmbedder())


def test_embedder_returning_the_wrong_number_of_rows(tmp_path):
    path = _write(tmp_path / "select.txt", SELECT)
    with pytest.raises(ValueError, match=r"returned shape \(1, 2\) for 6 texts"):
        evaluate_semantic_retrieval(path, lambda texts: np.ones([1, 2]))
