"""Incremental next-utterance scoring with triple-encoders and CCL bi-encoders (triple-encoders Sec. 4.1).

Each new utterance is encoded once, alone; the dialogue's state grows by one row of triple-encoders Table 1
per turn (O(h) vector operations), so a dialogue of n turns costs n encoder calls, not n(n+1)/2.

The subtlety is the speaker token. A history utterance u_i gets speaker_token(n - i), its
distance to the candidate at position n (UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForConversationalSequenceModeling.py:evaluate_seq_dataset:
the most recent utterance is
[O]), so every utterance's token flips when a turn is added. Each utterance is therefore encoded
in every variant it can need, [B1]/[B2] x [E]/[O] (four short texts; two without speaker tokens),
and the state is kept under both parity assignments: assignment a (= n mod 2) gives u_i the token
speaker_token(a - i). Scoring reads the assignment of the current length.

`speaker_tokens="by_speaker"` is the released incremental API instead
(TripleEncodersForConversationalSequenceModeling.contextualize_utterance(utterance, sequence,
dialog_partner)): the caller names who said each utterance, [E] or [O], its token stays, and a
turn encodes one text per space (two in the C3L modes). For a dialogue of alternating turns
scored for the [E] speaker's reply (the last utterance [O]) it gives the tokens by distance;
scored otherwise, it does not.

Modes: `c3l` Eq. 3, `c3l_maxsim` Appendix B, `bi_b2` the triple-encoder as bi-encoder
(Σ_i cos(E([B2] [S] [B] u_i), E([A] c)), triple-encoders Sec. 6.1.2), `ccl` the CCL bi-encoder
(Σ_i cos(E([S] [B] u_i), E([A] c)), Justus-Jonas/imaginaryNLP
imaginaryNLP/ImaginaryEmbeddingsForSequenceModeling.py). Scores are float64: a score sums
up to h(h-1)/2 cosines, and float32 accumulation order would decide near-ties.
"""
from typing import Callable, List, Optional, Sequence, Union

import numpy as np
import tensorflow as tf

from tfdialemb.text.curved_format import EVEN, ODD, SPACES, after_text, before_text, speaker_token
from tfdialemb.layers import curved_scoring

Encode = Callable[[List[str]], np.ndarray]
"""Texts in, one embedding row per text out (e.g. `SentenceEmbedder.embed`)."""

MODES = tuple(SPACES)
SPEAKERS = (EVEN, ODD)
BY_SPEAKER = "by_speaker"
"""`speaker_tokens` value: each utterance's token is the speaker the caller names in `add`."""


def check_mode(mode: str, k_last_rows: Optional[int]) -> Optional[int]:
    """The validated `k_last_rows` of `mode`; a ValueError for an unknown mode, or for
    `k_last_rows` with a bi-encoder mode (it selects rows of the C3L triangle)."""
    if mode not in SPACES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    k_last_rows = curved_scoring.check_k_last_rows(k_last_rows)
    if k_last_rows is not None and len(SPACES[mode]) == 1:
        raise ValueError(f"k_last_rows applies to the triple-encoder modes, not to {mode!r}")
    return k_last_rows


def before_variants(utterance: str, mode: str, speaker_tokens: bool = True) -> List[str]:
    """The before-space texts of `utterance` that `mode` can need, space-major, then [E], [O]."""
    speakers = SPEAKERS if speaker_tokens else (None,)
    return [before_text(utterance, speaker, space) for space in SPACES[mode]
            for speaker in speakers]


def _encoded(encode: Encode, texts: List[str]) -> np.ndarray:
    vectors = np.asarray(encode(texts), np.float64)
    if vectors.ndim != 2 or len(vectors) != len(texts):
        raise ValueError(f"the encoder returned shape {vectors.shape} for {len(texts)} texts")
    return vectors


class SequenceScorer:
    """The state of one dialogue: `add` each utterance as it is said, `score` candidates for the
    next one at any point (triple-encoders Sec. 4.1)."""

    def __init__(self, encode: Encode, mode: str = "c3l", k_last_rows: Optional[int] = None,
                 speaker_tokens: Union[bool, str] = True):
        """`speaker_tokens`: True, each utterance's token by its distance to the candidate (the
        paper's evaluation); BY_SPEAKER, the token the caller names in `add`; False, none."""
        if isinstance(speaker_tokens, (bool, np.bool_)):
            speaker_tokens = bool(speaker_tokens)
        elif speaker_tokens != BY_SPEAKER:
            raise ValueError(f"speaker_tokens must be True, False or {BY_SPEAKER!r}, got {speaker_tokens!r}")
        self.encode = encode
        self.mode = mode
        self.k_last_rows = check_mode(mode, k_last_rows)
        self.speaker_tokens = speaker_tokens
        self.history: List[str] = []
        self.speakers: List[str] = []
        """With BY_SPEAKER, the speaker `add` was given for each utterance of the history."""
        assignments = len(SPEAKERS) if speaker_tokens is True else 1
        # Per assignment: the [B1] vectors of the history (C3L modes), and one entry per row j:
        # the row sum S_j (c3l), the row's mixes [j, D] (c3l_maxsim) or the before vector (bi).
        self._b1: List[List[np.ndarray]] = [[] for _ in range(assignments)]
        self._rows: List[List[np.ndarray]] = [[] for _ in range(assignments)]

    def _speaker_index(self, assignment: int, position: int) -> int:
        """Which speaker variant u_position takes under `assignment`."""
        return SPEAKERS.index(speaker_token(assignment - position)) if self.speaker_tokens is True else 0

    def _texts(self, utterance: str, speaker: Optional[str]) -> List[str]:
        if self.speaker_tokens == BY_SPEAKER:
            if speaker not in SPEAKERS:
                raise ValueError(f"with speaker_tokens={BY_SPEAKER!r}, add(utterance, speaker) names who said "
                                 f"it: {EVEN!r} or {ODD!r}, got {speaker!r}")
            return [before_text(utterance, speaker, space) for space in SPACES[self.mode]]
        if speaker is not None:
            raise ValueError(f"a speaker is given to add only with speaker_tokens={BY_SPEAKER!r}; "
                             f"with {self.speaker_tokens!r} the scorer sets the tokens")
        return before_variants(utterance, self.mode, self.speaker_tokens)

    def add(self, utterance: str, speaker: Optional[str] = None) -> None:
        """Encodes `utterance` (one encoder call of 1-4 texts) and appends its row. `speaker`, [E]
        or [O], is who said it, given with speaker_tokens=BY_SPEAKER and only then."""
        spaces = SPACES[self.mode]
        vectors = _encoded(self.encode, self._texts(utterance, speaker))
        variants = vectors.reshape(len(spaces), -1, vectors.shape[-1])
        position = len(self.history)
        for assignment, rows in enumerate(self._rows):
            variant = self._speaker_index(assignment, position)
            if len(spaces) == 1:
                rows.append(variants[0, variant])
                continue
            b1, b2 = variants[0, variant], variants[1, variant]
            earlier = np.reshape(self._b1[assignment], [position, vectors.shape[-1]])
            if self.mode == "c3l":
                rows.append(curved_scoring.latest_row_sum(earlier, b2).numpy())
            else:
                rows.append(curved_scoring.mix(earlier, b2).numpy())
            self._b1[assignment].append(b1)
        self.history.append(utterance)
        if self.speaker_tokens == BY_SPEAKER:
            self.speakers.append(speaker)

    def encode_candidates(self, texts: Sequence[str]) -> np.ndarray:
        """[C, D] after-space vectors E([A] c), to score many histories against one pool."""
        return _encoded(self.encode, [after_text(text) for text in texts])

    def _candidate_vectors(self, candidates: Union[Sequence[str], np.ndarray]) -> np.ndarray:
        if isinstance(candidates, (np.ndarray, tf.Tensor)):
            vectors = np.asarray(candidates, np.float64)
            if vectors.ndim != 2:
                raise ValueError(f"candidate vectors must be [C, D], got shape {vectors.shape}")
            return vectors
        if not all(isinstance(text, str) for text in candidates):
            raise ValueError("candidates must be texts or a [C, D] array of after-space vectors")
        return self.encode_candidates(list(candidates))

    def score(self, candidates: Union[Sequence[str], np.ndarray]) -> np.ndarray:
        """[C] float64 scores of candidate texts, or of after-space vectors [C, D], as the next
        utterance of the history so far."""
        if not self.history:
            raise ValueError("the history is empty: add an utterance before scoring")
        after = self._candidate_vectors(candidates)
        rows = self._rows[len(self.history) % len(self._rows)]
        if self.mode == "c3l":
            return curved_scoring.scores_from_row_sums(
                np.stack(rows), after, self.k_last_rows).numpy()
        if self.mode == "c3l_maxsim":
            # Rows concatenated are the full triangle in `triangle_pairs` order; j(j-1)/2 + i is
            # the position of mix (i, j) in it.
            mixes = np.concatenate(rows)
            pairs = curved_scoring.triangle_pairs(len(rows), self.k_last_rows)
            positions = pairs[:, 1] * (pairs[:, 1] - 1) // 2 + pairs[:, 0]
            return curved_scoring.maxsim_scores_from_mixes(
                tf.gather(mixes, positions), pairs, after).numpy()
        return curved_scoring.bi_encoder_scores(np.stack(rows), after).numpy()

    def score_from_scratch(self, history: Sequence[str], candidates: Union[Sequence[str], np.ndarray],
                           speakers: Optional[Sequence[str]] = None) -> np.ndarray:
        """[C]: the reference computation, with none of this scorer's state: every utterance of
        `history` encoded with its current speaker token, speaker_token(n - i) (with BY_SPEAKER,
        its entry of `speakers`), then Eq. 3, MaxSim or the bi-encoder sum computed directly."""
        if not history:
            raise ValueError("the history is empty")
        n, spaces = len(history), SPACES[self.mode]
        if self.speaker_tokens == BY_SPEAKER:
            if speakers is None or len(speakers) != n or not all(speaker in SPEAKERS for speaker in speakers):
                raise ValueError(f"with speaker_tokens={BY_SPEAKER!r}, give one speaker per history utterance, "
                                 f"{EVEN!r} or {ODD!r}")
            tokens = list(speakers)
        elif speakers is not None:
            raise ValueError(f"speakers are given only with speaker_tokens={BY_SPEAKER!r}")
        else:
            tokens = [speaker_token(n - i) if self.speaker_tokens else None for i in range(n)]
        texts = [before_text(utterance, tokens[i], space)
                 for space in spaces for i, utterance in enumerate(history)]
        before = _encoded(self.encode, texts).reshape(len(spaces), n, -1)
        after = self._candidate_vectors(candidates)
        if self.mode == "c3l":
            return curved_scoring.c3l_scores(before[0], before[1], after, self.k_last_rows).numpy()
        if self.mode == "c3l_maxsim":
            return curved_scoring.maxsim_scores(before[0], before[1], after,
                                                self.k_last_rows).numpy()
        return curved_scoring.bi_encoder_scores(before[0], after).numpy()
