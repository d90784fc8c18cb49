"""Incremental triple-encoder / CCL scoring equals re-encoding the whole history every turn."""
import hashlib

import numpy as np
import pytest

from tfdialemb.encoders import load_pretrained
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.sequence_scorer import BY_SPEAKER, SequenceScorer

DIALOGUE = ["hello", "how are you", "fine thanks", "good morning", "book a taxi", "need hotel",
            "please help", "the cafe", "hello world", "need help", "is not", "good cafe"]
CANDIDATES = ["book a hotel", "thanks", "how are you", "world"]
VARIANTS = [("c3l", None), ("c3l", 2), ("c3l", 3), ("c3l_maxsim", None), ("c3l_maxsim", 2),
            ("bi_b2", None), ("ccl", None)]


class HashedEncoder:
    """A fixed random vector per text (seeded by its hash); records each call's texts."""

    def __init__(self, dim=16):
        self.dim = dim
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.stack([np.random.default_rng(
            int(hashlib.sha256(t.encode()).hexdigest()[:12], 16)).normal(size=self.dim)
            for t in texts]).astype(np.float32)


def _unit(v):
    return v / np.linalg.norm(v)


def _assert_incremental_equals_scratch(encode, mode, k, speaker_tokens=True, atol=1e-6):
    scorer = SequenceScorer(encode, mode, k, speaker_tokens)
    candidates = scorer.encode_candidates(CANDIDATES)
    for turn, utterance in enumerate(DIALOGUE):
        scorer.add(utterance)
        np.testing.assert_allclose(scorer.score(candidates),
                                   scorer.score_from_scratch(DIALOGUE[:turn + 1], candidates),
                                   atol=atol, err_msg=f"{mode} k={k} turn {turn}")


@pytest.mark.parametrize("mode,k", VARIANTS)
def test_incremental_equals_from_scratch_with_a_hashed_encoder(mode, k):
    _assert_incremental_equals_scratch(HashedEncoder(), mode, k)
    _assert_incremental_equals_scratch(HashedEncoder(), mode, k, speaker_tokens=False)


def test_incremental_equals_from_scratch_with_a_tiny_bert(hf_safetensors_dir):
    embed = SentenceEmbedder.from_pretrained(load_pretrained(hf_safetensors_dir)).embed
    for mode, k in (("c3l", None), ("c3l", 2), ("c3l", 3), ("bi_b2", None)):
        _assert_incremental_equals_scratch(embed, mode, k)


def test_from_scratch_is_eq3_with_speaker_tokens_by_distance_to_the_end():
    # History of 3: u2 is the most recent (distance 1 to the candidate) → [O], u1 → [E],
    # u0 → [O] (UKPLab/acl2024-triple-encoders TripleEncodersForConversationalSequenceModeling.py); Eq. 3
    # sums the mixes (0,1), (0,2), (1,2).
    encode = HashedEncoder()
    history = DIALOGUE[:3]
    tokens = ["[O]", "[E]", "[O]"]
    b1 = encode([f"[B1] {s} [B] {u}" for s, u in zip(tokens, history)]).astype(np.float64)
    b2 = encode([f"[B2] {s} [B] {u}" for s, u in zip(tokens, history)]).astype(np.float64)
    after = encode([f"[A] {c}" for c in CANDIDATES]).astype(np.float64)
    expected = [sum(_unit((b1[i] + b2[j]) / 2) @ _unit(a) for i, j in ((0, 1), (0, 2), (1, 2)))
                for a in after]
    scorer = SequenceScorer(encode, "c3l")
    np.testing.assert_allclose(scorer.score_from_scratch(history, CANDIDATES), expected,
                               atol=1e-9)
    for utterance in history:
        scorer.add(utterance)
    np.testing.assert_allclose(scorer.score(CANDIDATES), expected, atol=1e-9)
    # The CCL bi-encoder: Σ_i cos(E([S] [B] u_i), E([A] c)), same tokens.
    ccl = encode([f"{s} [B] {u}" for s, u in zip(tokens, history)]).astype(np.float64)
    np.testing.assert_allclose(
        SequenceScorer(encode, "ccl").score_from_scratch(history, CANDIDATES),
        [sum(_unit(b) @ _unit(a) for b in ccl) for a in after], atol=1e-9)


def test_tokens_frozen_at_encoding_time_would_differ():
    # The parity bookkeeping matters: keeping each utterance's token from the turn it was added
    # (u0 [O] at history length 1, u1 [O] at 2) gives other scores than the current tokens.
    encode = HashedEncoder()
    history = DIALOGUE[:2]
    b1 = encode(["[B1] [O] [B] " + history[0]]).astype(np.float64)[0]
    b2 = encode(["[B2] [O] [B] " + history[1]]).astype(np.float64)[0]
    after = encode([f"[A] {c}" for c in CANDIDATES]).astype(np.float64)
    frozen = [_unit((b1 + b2) / 2) @ _unit(a) for a in after]
    scorer = SequenceScorer(encode, "c3l")
    for utterance in history:
        scorer.add(utterance)
    assert np.abs(scorer.score(CANDIDATES) - frozen).max() > 1e-3


def test_each_turn_encodes_only_the_new_utterance():
    encode = HashedEncoder()
    scorer = SequenceScorer(encode, "c3l")
    scorer.add("hello")
    scorer.add("world")
    assert encode.calls == [
        ["[B1] [E] [B] hello", "[B1] [O] [B] hello", "[B2] [E] [B] hello", "[B2] [O] [B] hello"],
        ["[B1] [E] [B] world", "[B1] [O] [B] world", "[B2] [E] [B] world", "[B2] [O] [B] world"],
    ]
    encode.calls.clear()
    SequenceScorer(encode, "ccl").add("hi")
    SequenceScorer(encode, "bi_b2", speaker_tokens=False).add("hi")
    SequenceScorer(encode, "c3l", speaker_tokens=False).add("hi")
    assert encode.calls == [["[E] [B] hi", "[O] [B] hi"], ["[B2] [B] hi"],
                            ["[B1] [B] hi", "[B2] [B] hi"]]


ALTERNATING = ["[E]", "[O]"] * (len(DIALOGUE) // 2)


@pytest.mark.parametrize("mode,k", VARIANTS)
def test_by_speaker_incremental_equals_from_scratch_with_the_given_tokens(mode, k):
    encode = HashedEncoder()
    scorer = SequenceScorer(encode, mode, k, BY_SPEAKER)
    speakers = ["[O]", "[O]", "[E]", "[O]", "[E]", "[E]", "[O]", "[E]", "[O]", "[O]", "[E]", "[O]"]
    for turn, (utterance, speaker) in enumerate(zip(DIALOGUE, speakers)):
        scorer.add(utterance, speaker)
        np.testing.assert_allclose(scorer.score(CANDIDATES), scorer.score_from_scratch(
            DIALOGUE[:turn + 1], CANDIDATES, speakers[:turn + 1]), atol=1e-6, err_msg=f"{mode} turn {turn}")
        assert scorer.speakers == speakers[:turn + 1]
    np.testing.assert_allclose(scorer.score(CANDIDATES),
                               scorer.score_from_scratch(scorer.history, CANDIDATES, scorer.speakers), atol=1e-6)


@pytest.mark.parametrize("mode,k", VARIANTS)
def test_by_speaker_equals_by_distance_when_the_last_utterance_is_the_partners(mode, k):
    # Alternating turns from [E]: after an even number the last is [O], each token that of its
    # distance to an [E] reply; after an odd number every token is the other one.
    by_speaker = SequenceScorer(HashedEncoder(), mode, k, BY_SPEAKER)
    by_distance = SequenceScorer(HashedEncoder(), mode, k)
    for turn, (utterance, speaker) in enumerate(zip(DIALOGUE, ALTERNATING)):
        by_speaker.add(utterance, speaker)
        by_distance.add(utterance)
        difference = np.abs(by_speaker.score(CANDIDATES) - by_distance.score(CANDIDATES)).max()
        if turn % 2:
            assert difference < 1e-9, (mode, turn)
        elif turn:
            assert difference > 1e-3, (mode, turn)


def test_by_speaker_encodes_one_text_per_space():
    encode = HashedEncoder()
    SequenceScorer(encode, "c3l", speaker_tokens=BY_SPEAKER).add("hello", "[O]")
    SequenceScorer(encode, "ccl", speaker_tokens=BY_SPEAKER).add("hi", "[E]")
    assert encode.calls == [["[B1] [O] [B] hello", "[B2] [O] [B] hello"], ["[E] [B] hi"]]


def test_only_by_speaker_keeps_the_speakers():
    for speaker_tokens in (True, False):
        scorer = SequenceScorer(HashedEncoder(), "c3l", speaker_tokens=speaker_tokens)
        scorer.add("hello")
        assert scorer.speakers == []


def test_texts_and_vectors_score_alike():
    encode = HashedEncoder()
    scorer = SequenceScorer(encode, "c3l_maxsim")
    for utterance in DIALOGUE[:4]:
        scorer.add(utterance)
    np.testing.assert_array_equal(scorer.score(CANDIDATES),
                                  scorer.score(scorer.encode_candidates(CANDIDATES)))


def test_bad_input():
    encode = HashedEncoder()
    with pytest.raises(ValueError, match="mode must be one of"):
        SequenceScorer(encode, "triple")
    with pytest.raises(ValueError, match="k_last_rows applies to the triple-encoder modes"):
        SequenceScorer(encode, "ccl", k_last_rows=2)
    with pytest.raises(ValueError, match="k_last_rows must be a positive int"):
        SequenceScorer(encode, "c3l", k_last_rows=0)
    scorer = SequenceScorer(encode, "c3l")
    with pytest.raises(ValueError, match="history is empty"):
        scorer.score(CANDIDATES)
    scorer.add("hello")
    with pytest.raises(ValueError, match=r"candidate vectors must be \[C, D\]"):
        scorer.score(np.zeros(16))
    with pytest.raises(ValueError, match="returned shape"):
        SequenceScorer(lambda texts: np.zeros((1, 4)), "c3l").add("hello")
    with pytest.raises(ValueError, match="speaker_tokens must be True, False or 'by_speaker'"):
        SequenceScorer(encode, "c3l", speaker_tokens="speaker")
    with pytest.raises(ValueError, match="a speaker is given to add only with"):
        scorer.add("world", "[E]")
    named = SequenceScorer(encode, "c3l", speaker_tokens=BY_SPEAKER)
    for speaker in (None, "[B1]", "E"):
        with pytest.raises(ValueError, match=r"add\(utterance, speaker\) names who said it"):
            named.add("hello", speaker)
    assert named.history == [] and named.speakers == []
    with pytest.raises(ValueError, match="give one speaker per history utterance"):
        named.score_from_scratch(["hello", "world"], CANDIDATES, ["[E]"])
    with pytest.raises(ValueError, match="give one speaker per history utterance"):
        named.score_from_scratch(["hello"], CANDIDATES, [0])
    with pytest.raises(ValueError, match="speakers are given only with"):
        scorer.score_from_scratch(["hello"], CANDIDATES, ["[E]"])
