"""Short-term planning (triple-encoders Eq. 4; UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForSTP.py) on hand-placed embeddings."""
import hashlib
import json
import re

import numpy as np
import pytest

from tfdialemb.dialogue import DialogueFormatError
from tfdialemb.eval.short_term_planning import (PlanningRecord, evaluate_short_term_planning,
                                                planning_texts, read_planning_records)
from tfdialemb.layers.curved_scoring import released_planning_scores

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
    path = _write(tmp_path, records)
    results = evaluate_short_term_planning(path, CosineEncoder(), "ccl")
    assert results.pop("distractor_sources") == ["unrecorded"]
    assert results == pytest.approx({
        "hits@5_h2_g1": 0.5, "hits@10_h2_g1": 1.0, "hits@25_h2_g1": 1.0, "hits@50_h2_g1": 1.0,
        "avg_rank_h2_g1": 6.0, "records_h2_g1": 2,
        "hits@5_h5_g2": 0.0, "hits@10_h5_g2": 0.0, "hits@25_h5_g2": 0.0, "hits@50_h5_g2": 0.5,
        "avg_rank_h5_g2": 46.0, "records_h5_g2": 2,
        "hits@5": 0.25, "hits@10": 0.5, "hits@25": 0.5, "hits@50": 0.75, "avg_rank": 26.0,
        "records": 4, "dropped_distractors": 1})
    # Optimistic ties: T2 ranks before d6, 7 instead of 8; the other ranks have no ties.
    optimistic = evaluate_short_term_planning(path, CosineEncoder(), "ccl", ties="optimistic")
    assert {key: optimistic[key] for key in ("avg_rank_h2_g1", "hits@5_h2_g1", "avg_rank")} == (
        pytest.approx({"avg_rank_h2_g1": 5.5, "hits@5_h2_g1": 0.5, "avg_rank": (5.5 + 46) / 2}))


def test_hits_at_k_of_groups_without_more_than_k_candidates_are_null(tmp_path):
    """Group (2, 1) ranks T1 among 21 candidates: 4th (d0..d2 above it), and hits@25 and hits@50 would
    be 1 whatever the scores; group (5, 2) has 61 candidates, so hits@50 is scored there alone."""
    records = [PlanningRecord("a", ("h1", "h2"), "T1", "G", tuple(DISTRACTORS[:20]), 1),
               PlanningRecord("c", ("h1", "h2", "h3", "h4", "h5"), "T3", "G", tuple(DISTRACTORS), 2)]
    results = evaluate_short_term_planning(_write(tmp_path, records), CosineEncoder(), "ccl")
    assert (results["hits@5_h2_g1"], results["hits@10_h2_g1"]) == (1.0, 1.0)
    assert results["hits@25_h2_g1"] is None and results["hits@50_h2_g1"] is None
    assert (results["hits@25_h5_g2"], results["hits@50_h5_g2"]) == (0.0, 1.0)  # T3 ranks 31st
    assert results["hits@25"] is None and results["hits@50"] is None
    assert (results["hits@10"], results["avg_rank"]) == (0.5, (4 + 31) / 2)


def _released_compute_stp_scores(goal_embedding, candidates_embeddings, history):
    """UKPLab/acl2024-triple-encoders triple_encoders/TripleEncodersForSTP.py:compute_stp_scores,
    ported line by line from torch to numpy: torch.nn.functional.normalize(x, p=2, dim=d) is
    x / max(||x||, 1e-12) along d, `t.repeat(c, 1, 1)` of a 2-D t is np.tile(t, (c, 1, 1))."""
    def normalize(x, dim):
        return x / np.maximum(np.linalg.norm(x, axis=dim, keepdims=True), 1e-12)

    scores_single = np.matmul(normalize(goal_embedding, 0), normalize(candidates_embeddings, 0).T)
    scores_single = scores_single * history.shape[0]
    history = np.tile(history, (candidates_embeddings.shape[0], 1, 1))
    candidates_embeddings = candidates_embeddings[:, np.newaxis]
    candidates_embeddings = np.tile(candidates_embeddings, (1, history.shape[1], 1))
    mean_history_candidate_utterances = (history + candidates_embeddings) / 2.0
    goal_embedding_expanded = goal_embedding[np.newaxis, np.newaxis]
    goal_embedding_expanded = np.tile(goal_embedding_expanded,
                                      (mean_history_candidate_utterances.shape[0], 1, 1))
    mean_history_candidate_utterances = normalize(mean_history_candidate_utterances, 2)
    goal_embedding_expanded = normalize(goal_embedding_expanded, 2)
    dot_products_single_goal = np.matmul(mean_history_candidate_utterances,
                                         goal_embedding_expanded.transpose(0, 2, 1))
    scores = np.sum(dot_products_single_goal, axis=1)
    scores_single = scores_single[:, np.newaxis]
    scores = np.concatenate((scores_single, scores), axis=1)
    return np.sum(scores, axis=1)


def _released_rank(scores):
    """evaluate_stp_dataset: the true candidate is last; 1 + the first index of its score in the
    descending sort."""
    return int((np.sort(scores)[::-1] == scores[-1]).argmax()) + 1


class SpaceEncoder:
    """[B1] texts → B1[u], [B2] texts → B2[u], "[A] u" → AFTER[u]; speaker tokens ignored."""
    B1 = {"h1": [0.0, 0.0, 1.0], "h2": [0.0, 0.2, 1.0], "h3": [0.5, 0.0, 1.0]}
    B2 = {"T": [1.0, 0.0, 0.0], "d1": [3.0, 4.0, 0.0], "d2": [0.0, 1.0, 0.0],
          "d3": [0.5, 0.5, 0.0]}
    AFTER = {"G": [1.0, 0.0, 0.0], "F": [0.8, 0.6, 0.0]}

    def __call__(self, texts):
        rows = []
        for text in texts:
            space, utterance = re.match(r"(\[B1\]|\[B2\]|\[A\]).* (\S+)$", text).groups()
            rows.append({"[B1]": self.B1, "[B2]": self.B2, "[A]": self.AFTER}[space][utterance])
        return np.array(rows)


def test_released_scorer_reproduces_the_released_computation(tmp_path):
    # Record a: T has cosine 1 with the goal, d1 (3, 4, 0) 0.6, so Eq. 4 ranks T first; the
    # released dim-0 normalisation gives d1's first term 3/√10 over T's 1/√10 and ranks it
    # above T. Record b keeps a copy of T among its distractors (the released matrix holds it).
    records = [PlanningRecord("a", ("h1", "h2"), "T", "G", ("d1", "d2"), 1),
               PlanningRecord("b", ("h1", "h2", "h3"), "T", "F", ("d1", "T", "d2", "d3"), 2)]
    path = _write(tmp_path, records)
    encode = SpaceEncoder()
    released = evaluate_short_term_planning(path, encode, "c3l", scorer="released",
                                            ties="optimistic")
    paper = evaluate_short_term_planning(path, encode, "c3l")
    for record in records:
        h, g = record.history_length, record.goal_distance
        candidates = np.array([encode.B2[u] for u in record.distractors + (record.candidate,)])
        history = np.array([encode.B1[u] for u in record.history])
        expected = _released_compute_stp_scores(np.array(encode.AFTER[record.goal]), candidates,
                                                history)
        assert released_planning_scores(history, candidates, np.array(encode.AFTER[record.goal])
                                        ).numpy() == pytest.approx(expected, abs=1e-12)
        assert released[f"avg_rank_h{h}_g{g}"] == _released_rank(expected)
    assert (paper["avg_rank_h2_g1"], released["avg_rank_h2_g1"]) == (1.0, 2.0)
    assert (paper["dropped_distractors"], released["dropped_distractors"]) == (1, 0)


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
    assert chunked.pop("distractor_sources") == results.pop("distractor_sources") == ["unrecorded"]
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
    with pytest.raises(ValueError, match="--c3l_stp_scorer=released is the released "
                                         "triple-encoder scoring .*not --curved_mode=ccl"):
        evaluate_short_term_planning(path, _hashed, "ccl", scorer="released")
    with pytest.raises(ValueError, match="ties must be one of pessimistic, optimistic"):
        evaluate_short_term_planning(path, _hashed, "ccl", ties="random")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="no STP records"):
        evaluate_short_term_planning(str(empty), _hashed, "ccl")


def test_a_record_whose_distractors_all_copy_its_candidate_is_refused(tmp_path):
    """Dropping the copies leaves the candidate alone: rank 1 for any model."""
    copies = PlanningRecord("r0", ("h1", "h2"), "T1", "G", ("T1", "T1"), 1, "random_pool seed=0")
    with pytest.raises(ValueError, match="record 'r0' has no distractor but copies of its candidate"):
        evaluate_short_term_planning(_write(tmp_path, [copies]), CosineEncoder(), "ccl")
