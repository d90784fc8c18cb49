"""Short-term planning (triple-encoders Eq. 4; UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForSTP.py) on hand-placed embeddings."""
import hashlib
import json

import numpy as np
import pytest

from tfdialemb.dialogue import DialogueFormatError
from tfdialemb.eval.short_term_planning import (PlanningRecord, evaluate_short_term_planning,
                                                planning_texts, read_planning_records)

DISTRACTORS = [f"d{k}" for k in range(60)]


def _at(cosine):
    """A unit vector whose cosine with the goal (1, 0) is `cosine`."""
    return np.array([cosine, np.sqrt(1 - cosine ** 2)])


class CosineEncoder:
    """"[A] G" is the goal (1, 0); a before text "... [B] u" is _at(COSINES[u])."""
    COSINES = {**{f"d{k}": 0.9 - 0.01 * k for k in range(60)},
               "T1": 0.875, "T2": 0.9 - 0.01 * 6, "T3": 0.605, "T4": 0.0}

    def __call__(self, texts):
        return np.stack([np.array([1.0, 0.0]) if t == "[A] G"
                         else _at(self.COSINES[t.split("[B] ", 1)[1]]) for t in texts])


def _write(tmp_path, records, name="stp.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r.to_json() if isinstance(r, PlanningRecord) else r) + "\n"
                            for r in records), encoding="utf-8")
    return str(path)


def test_hits_and_ranks_by_hand(tmp_path):
    # d_k has cosine 0.9 - 0.01k with the goal. T1 0.875 is under d0..d2 → rank 4 (the copy of
    # T1 among its distractors is dropped); T2 equals d6 → 6 above + the tie → 8; T3 0.605
    # under d0..d29 → 31; T4 0 → 61.
    records = [
        PlanningRecord("a", ("h1", "h2"), "T1", "G", tuple(DISTRACTORS) + ("T1",), 1),
        PlanningRecord("b", ("h1", "h2"), "T2", "G", tuple(DISTRACTORS), 1),
        PlanningRecord("c", ("h1", "h2", "h3", "h4", "h5"), "T3", "G", tuple(DISTRACTORS), 2),
        PlanningRecord("d", ("h1", "h2", "h3", "h4", "h5"), "T4", "G", tuple(DISTRACTORS), 2),
    ]
    results = evaluate_short_term_planning(_write(tmp_path, records), CosineEncoder(), "ccl")
    assert results == pytest.approx({
        "hits@5_h2_g1": 0.5, "hits@10_h2_g1": 1.0, "hits@25_h2_g1": 1.0, "hits@50_h2_g1": 1.0,
        "avg_rank_h2_g1": 6.0, "records_h2_g1": 2,
        "hits@5_h5_g2": 0.0, "hits@10_h5_g2": 0.0, "hits@25_h5_g2": 0.0, "hits@50_h5_g2": 0.5,
        "avg_rank_h5_g2": 46.0, "records_h5_g2": 2,
        "hits@5": 0.25, "hits@10": 0.5, "hits@25": 0.5, "hits@50": 0.75, "avg_rank": 26.0,
        "records": 4, "dropped_distractors": 1})


def test_speaker_tokens_of_the_released_stp_evaluation():
    # UKPLab/acl2024-triple-encoders TripleEncodersForSTP.py:evaluate_stp_dataset: g even → candidates
    # [B2] [E], history (reversed index r) [B1] [O]
    # for r even, [E] for r odd; g odd → candidates [B2] [O], history [E] for r even.
    record = PlanningRecord("x", ("u0", "u1", "u2"), "c", "g", ("d",), 2)
    assert planning_texts(record, "c3l") == (
        ["[B1] [O] [B] u0", "[B1] [E] [B] u1", "[B1] [O] [B] u2"],
        ["[B2] [E] [B] c", "[B2] [E] [B] d"], "[A] g")
    record = PlanningRecord("x", ("u0", "u1", "u2"), "c", "g", ("d", "c"), 3)
    assert planning_texts(record, "c3l") == (
        ["[B1] [E] [B] u0", "[B1] [O] [B] u1", "[B1] [E] [B] u2"],
        ["[B2] [O] [B] c", "[B2] [O] [B] d"], "[A] g")
    # 4.5: the CCL bi-encoder's candidates "[O] [BEFORE]" for odd g; no history.
    assert planning_texts(record, "ccl") == ([], ["[O] [B] c", "[O] [B] d"], "[A] g")
    assert planning_texts(record, "bi_b2", speaker_tokens=False) == (
        [], ["[B2] [B] c", "[B2] [B] d"], "[A] g")


def _hashed(texts):
    return np.stack([np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:12], 16))
                     .normal(size=8) for t in texts])


def _unit(v):
    return v / np.linalg.norm(v)


def _records():
    rng = np.random.default_rng(0)
    words = ["hello", "world", "good", "morning", "taxi", "hotel", "cafe", "help"]
    records = []
    for n, (h, g) in enumerate([(2, 1), (2, 2), (3, 1), (3, 4), (2, 1), (3, 4), (2, 2)]):
        texts = [" ".join(rng.choice(words, 3)) for _ in range(h + 2 + 12)]
        records.append(PlanningRecord(f"r{n}", tuple(texts[:h]), texts[h], texts[h + 1],
                                      tuple(texts[h + 2:]), g))
    return records


def _numpy_metrics(records, mode):
    """Eq. 4 (c3l) or one cosine (bi_b2, ccl) in numpy, texts with speaker tokens by distance to
    the goal, rank = number of candidates scoring at least the true one; then per (h, g)."""
    def token(distance):
        return "[O]" if distance % 2 else "[E]"

    groups = {}
    for r in records:
        h, g = len(r.history), r.goal_distance
        space = {"c3l": "[B2] ", "bi_b2": "[B2] ", "ccl": ""}[mode]
        candidates = _hashed([f"{space}{token(g)} [B] {c}" for c in (r.candidate,) + r.distractors])
        goal = _unit(_hashed([f"[A] {r.goal}"])[0])
        history = _hashed([f"[B1] {token(h + g - j)} [B] {u}" for j, u in enumerate(r.history)])
        mixed = [np.mean([_unit((b + c) / 2) @ goal for b in history]) if mode == "c3l" else 0.0
                 for c in candidates]
        scores = np.array([_unit(c) @ goal for c in candidates]) + mixed
        groups.setdefault((h, g), []).append(int(np.sum(scores >= scores[0])))
    expected = {}
    for (h, g), ranks in groups.items():
        for k in (5, 10):
            expected[f"hits@{k}_h{h}_g{g}"] = np.mean(np.array(ranks) <= k)
        expected[f"avg_rank_h{h}_g{g}"] = np.mean(ranks)
    for metric in ("hits@5", "hits@10", "avg_rank"):
        expected[metric] = np.mean([expected[f"{metric}_h{h}_g{g}"] for h, g in groups])
    return expected


@pytest.mark.parametrize("mode", ["c3l", "bi_b2", "ccl"])
def test_matches_a_numpy_rederivation(tmp_path, mode):
    records = _records()
    path = _write(tmp_path, records)
    expected = _numpy_metrics(records, mode)
    results = evaluate_short_term_planning(path, _hashed, mode)
    assert {key: results[key] for key in expected} == pytest.approx(expected)
    calls = []
    chunked = evaluate_short_term_planning(path, lambda t: calls.append(t) or _hashed(t), mode,
                                           records_per_call=3)
    assert chunked == pytest.approx(results) and len(calls) == 3


def test_records_read_back(tmp_path):
    records = _records()
    assert list(read_planning_records(_write(tmp_path, records))) == records


@pytest.mark.parametrize("line,reason", [
    ("{", "malformed JSON"),
    ({"id": "x", "history": ["a"], "candidate": "c", "goal": "g", "distractors": ["d"],
      "history_length": 2, "goal_distance": 1}, "history_length 2 but the history holds 1"),
    ({"id": "x", "history": ["a"], "candidate": "c", "goal": "g", "distractors": [],
      "history_length": 1, "goal_distance": 1}, "'distractors' must be a non-empty list"),
    ({"id": "x", "history": ["a"], "candidate": "c", "goal": "g", "distractors": ["d"],
      "history_length": 1, "goal_distance": 0}, "'goal_distance' must be a positive integer"),
    ({"id": "x", "history": ["a"], "candidate": " ", "goal": "g", "distractors": ["d"],
      "history_length": 1, "goal_distance": 1}, "'candidate' must be a non-empty string"),
])
def test_bad_lines_name_file_line_and_field(tmp_path, line, reason):
    good = _records()[0]
    path = tmp_path / "stp.jsonl"
    path.write_text(json.dumps(good.to_json()) + "\n"
                    + (line if isinstance(line, str) else json.dumps(line)) + "\n")
    with pytest.raises(DialogueFormatError, match=f"stp.jsonl:2: {reason}"):
        evaluate_short_term_planning(str(path), _hashed, "ccl")


def test_bad_arguments(tmp_path):
    records = _records()
    path = _write(tmp_path, records + [records[0]])
    with pytest.raises(DialogueFormatError, match="stp.jsonl:8: duplicate id 'r0'"):
        evaluate_short_term_planning(path, _hashed, "ccl")
    with pytest.raises(ValueError, match="STP mode must be one of"):
        evaluate_short_term_planning(path, _hashed, "c3l_maxsim")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="no STP records"):
        evaluate_short_term_planning(str(empty), _hashed, "ccl")
