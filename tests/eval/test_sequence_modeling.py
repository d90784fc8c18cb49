"""Sequence modelling ranks (triple-encoders Sec. 4.1; UKPLab/acl2024-triple-encoders
TripleEncodersForConversationalSequenceModeling.py) on hand-placed embeddings."""
import hashlib

import numpy as np
import pytest

from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.eval.sequence_modeling import evaluate_sequence_modeling
from tiny_corpus import corpus

E0, E1, E2 = np.eye(3)


class SpaceEncoder:
    """Vectors by space and utterance, speaker tokens ignored: "[A] u" → after[u], "[B1] .. u" →
    b1[u], "[B2] .. u" → b2[u], "[S] [B] u" → b[u]; unlisted utterances get a far-off vector."""

    def __init__(self, after, b1=None, b2=None, b=None):
        self.tables = {"[A]": after, "[B1]": b1 or {}, "[B2]": b2 or {}, "": b or {}}
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            words = text.split(" ")
            space = words[0] if words[0] in ("[A]", "[B1]", "[B2]") else ""
            utterance = text.split("[B] ", 1)[-1] if space != "[A]" else text[4:]
            rows.append(self.tables[space].get(utterance, np.full(3, -5.0)))
        return np.array(rows)


def _write(tmp_path, dialogues):
    path = str(tmp_path / "dialogues.jsonl")
    write_dialogues([Dialogue(f"d{i}", tuple(Turn("ab"[t % 2], u) for t, u in enumerate(turns)))
                     for i, turns in enumerate(dialogues)], path)
    return path


@pytest.mark.parametrize("ties, expected", [
    ("pessimistic", {"avg_rank_h2": 18 / 5, "avg_rank_h3": 1.5, "avg_rank": (18 / 5 + 1.5) / 2}),
    # Optimistic (the released code): 1 + the higher scores. h = 2: d0 1, d1 1, d2 1, d3 5 (four
    # 1s over W's 0), d4 2 (W's 2 over c3's 0); h = 3: d3 1, d4 1.
    ("optimistic", {"avg_rank_h2": 10 / 5, "avg_rank_h3": 1.0, "avg_rank": 1.5}),
])
def test_ccl_hand_worked_ranks_with_either_tie_ranking(tmp_path, ties, expected):
    dialogues = [["a1", "a2", "X"], ["b1", "b2", "Y"], ["a3", "b3", "Z"],
                 ["a4", "b4", "W", "V"], ["c1", "c2", "c3", "U"]]
    before = {"a1": E0, "a2": E0, "a3": E0, "a4": E0, "b1": E1, "b2": E1, "b3": E1, "b4": E1,
              "W": E2, "c1": E2, "c2": E2, "c3": E2}
    after = {"X": E0, "Y": E1, "Z": E0, "W": E2, "c3": E0, "V": E1, "U": E2}
    # h = 2, candidates X Y Z W c3; a score is the number of history vectors equal to the
    # candidate's. d0 (2e0): X ties Z and c3 at 2 → 3; d1: 1; d2 (e0+e1): Z ties X Y c3 at
    # 1 → 4;
    # d3 (e0+e1): W scores 0 under four 1s → 5; d4 (2e2): c3 0 under W's 2, ties X Y Z → 5.
    # h = 3, candidates V U: d3 (e0+e1+e2) ties → 2; d4 (3e2): 1. h = 7: no dialogue, left out.
    results = evaluate_sequence_modeling(_write(tmp_path, dialogues), SpaceEncoder(after, b=before),
                                         mode="ccl", history_lengths=[2, 3, 7], ties=ties)
    assert results == pytest.approx({**expected, "candidates_h2": 5, "candidates_h3": 2,
                                     "single_candidate_lengths": 0})


def test_a_history_length_only_one_dialogue_reaches_is_left_out_and_counted(tmp_path):
    """At h = 3 only d1's next utterance is a candidate: it would rank first among itself alone."""
    path = _write(tmp_path, [["a1", "a2", "X"], ["b1", "b2", "Y", "V"]])
    before = {"a1": E0, "a2": E0, "b1": E1, "b2": E1, "Y": E1}
    after = {"X": E0, "Y": E1, "V": E2}
    results = evaluate_sequence_modeling(path, SpaceEncoder(after, b=before), mode="ccl", history_lengths=[2, 3])
    assert results == pytest.approx({"avg_rank_h2": 1.0, "candidates_h2": 2, "avg_rank": 1.0,
                                     "single_candidate_lengths": 1})
    with pytest.raises(ValueError, match="no two dialogues have more than 3 turns"):
        evaluate_sequence_modeling(path, SpaceEncoder(after, b=before), mode="ccl", history_lengths=[3])


def test_c3l_hand_worked_ranks_and_one_encoder_call(tmp_path):
    # One mix per history, normalize(b1[u0] + b2[u1]): d0 e0, d1 (e0+e2)/√2, d2 (e0+e1)/√2;
    # candidates X e0, Y e2, Z e1: d0 ranks X first; d1's Y ties X → 2; d2's Z ties X → 2.
    dialogues = [["p", "q", "X"], ["p", "r", "Y"], ["s", "q", "Z"]]
    encode = SpaceEncoder({"X": E0, "Y": E2, "Z": E1}, b1={"p": E0, "s": E1},
                          b2={"q": E0, "r": E2})
    results = evaluate_sequence_modeling(_write(tmp_path, dialogues), encode, mode="c3l",
                                         history_lengths=[2])
    assert results == pytest.approx({"avg_rank_h2": 5 / 3, "candidates_h2": 3,
                                     "avg_rank": 5 / 3, "single_candidate_lengths": 0})
    assert len(encode.calls) == 1
    variants = [f"{space} {s} [B] {u}" for u in "pqrs" for space in ("[B1]", "[B2]")
                for s in ("[E]", "[O]")]
    assert sorted(encode.calls[0]) == sorted(variants + ["[A] X", "[A] Y", "[A] Z"])


def _hashed(texts):
    return np.stack([np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:12], 16))
                     .normal(size=8) for t in texts])


def _unit(v):
    return v / np.linalg.norm(v)


def _numpy_average_ranks(dialogues, mode, k, speaker_tokens, lengths):
    """Ranks re-derived: texts with speaker tokens by distance to the candidate, Eq. 3 or the
    bi-encoder sum as loops, rank = number of candidates scoring at least the true one."""
    def before(space, u, distance):
        token = ("[O] " if distance % 2 else "[E] ") if speaker_tokens else ""
        return f"{space}{token}[B] {u}"

    results = {}
    for h in lengths:
        pool = [d for d in dialogues if len(d) > h]
        after = [_unit(v) for v in _hashed([f"[A] {d[h]}" for d in pool])]
        ranks = []
        for index, d in enumerate(pool):
            if mode == "c3l":
                b1 = _hashed([before("[B1] ", u, h - i) for i, u in enumerate(d[:h])])
                b2 = _hashed([before("[B2] ", u, h - i) for i, u in enumerate(d[:h])])
                mixes = [_unit((b1[i] + b2[j]) / 2) for j in range(max(1, h - (k or h)), h)
                         for i in range(j)]
            else:
                space = "[B2] " if mode == "bi_b2" else ""
                mixes = [_unit(v) for v in _hashed([before(space, u, h - i)
                                                    for i, u in enumerate(d[:h])])]
            scores = np.array([sum(m @ a for m in mixes) for a in after])
            ranks.append(int(np.sum(scores >= scores[index])))
        results[f"avg_rank_h{h}"] = np.mean(ranks)
    return results


@pytest.mark.parametrize("mode,k,speaker_tokens", [("c3l", None, True), ("c3l", 2, True),
                                                   ("bi_b2", None, True), ("ccl", None, False)])
def test_matches_a_numpy_rederivation(tmp_path, mode, k, speaker_tokens):
    dialogues = [[t.text for t in d.turns] for d in corpus(n=16, seed=4)]
    lengths = [2, 3, 4, 5]
    path = _write(tmp_path, dialogues)
    results = evaluate_sequence_modeling(path, _hashed, mode, k, lengths, speaker_tokens)
    expected = _numpy_average_ranks(dialogues, mode, k, speaker_tokens, lengths)
    assert {key: results[key] for key in expected} == pytest.approx(expected)
    assert results["avg_rank"] == pytest.approx(np.mean(list(expected.values())))


def test_bad_input(tmp_path):
    path = _write(tmp_path, [["a", "b"], ["c", "d", "e"]])
    with pytest.raises(ValueError, match="history_lengths must be >= 2"):
        evaluate_sequence_modeling(path, _hashed, "c3l", history_lengths=[1, 2])
    with pytest.raises(ValueError, match="history_lengths must be positive ints"):
        evaluate_sequence_modeling(path, _hashed, "ccl", history_lengths=[])
    with pytest.raises(ValueError, match="no two dialogues have more than 3 turns"):
        evaluate_sequence_modeling(path, _hashed, "ccl", history_lengths=[3, 4])
    with pytest.raises(ValueError, match="mode must be one of"):
        evaluate_sequence_modeling(path, _hashed, "bi")
    with pytest.raises(FileNotFoundError):
        evaluate_sequence_modeling(str(tmp_path / "none.jsonl"), _hashed)
