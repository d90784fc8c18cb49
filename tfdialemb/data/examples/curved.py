"""Curved contrastive learning examples (triple-encoders): CCL bi-encoder pairs and C3L triple-encoder triples.

Both slide a window w = [u_s, ..., u_{s+l-1}] of `window` = l utterances (default 5) over every
dialogue, every start s = 0 .. n-l by default (the paper's sliding window); `last_window=False`
skips the final window s = n-l as the released code does (Justus-Jonas/imaginaryNLP
imaginaryNLP/trainer.py:ImaginaryEmbeddingTrainer._generate_data, UKPLab/acl2024-triple-encoders
triple_encoders/trainer.py:_generate_C3L_data), so a
dialogue then needs more than l utterances. The released C3L trainer returns after its first dialogue; here every dialogue counts.
Texts are written by `tfdialemb.text.curved_format` (the before / after spaces and speaker tokens),
where the speaker token S of a window utterance is [O] when its distance to the positive's
after-space utterance (CCL: |k - i|, C3L: l-1 - i) is odd and [E] when even; a directional
negative keeps its positive's S (`speaker_tokens=False` leaves S out). Random utterances come
from the pool, other dialogues only (the released code draws from all training utterances, the
anchor's own dialogue included), and get a random S.
"""
import dataclasses
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

from tfdialemb.data.examples import ExampleBuilder, register
from tfdialemb.data.records import FLOAT, SEQUENCE
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue
from tfdialemb.text.curved_format import EVEN, ODD, after_text, before_text, speaker_token

LABELS = ("paper", "released")
POSITIVES = ("curved", "hard")
HARD_POSITIVE_TARGET = 1.0
"""Triple-encoders Table 4, "hard positives / no curvature": every positive triple's target."""


def ccl_target(distance: int, window: int) -> float:
    """CCL: cos(E([B] u_i), E([A] u_k)) = 1 - (k - i) / l for 0 < k - i < l (triple-encoders Sec. 2)."""
    return 1 - distance / window


def c3l_target(i: int, j: int, k: int, window: int, labels: str = "paper") -> float:
    """C3L Eq. 1: norm(2 - (2k - (i + j)) / l) for i < j < k, k - i < l.

    `paper`: norm is min-max scaling from [1/l, 2 - 3/l] to [1/l, 1] (triple-encoders Sec. 3); for l = 5,
    (i, j) = (0,1) .. (2,3) with k = 4 give 0.467, 0.6, 0.733, 0.733, 0.867, 1.0.
    `released`: the released code scales from the range its window observes, [3/l, 2 - 3/l],
    to [0.2, 1.0] (UKPLab/acl2024-triple-encoders triple_encoders/trainer.py:_generate_C3L_data): 0.2,
    0.4, 0.6, 0.6, 0.8, 1.0 for l = 5.
    """
    raw = 2 - (2 * k - (i + j)) / window
    low, floor = (1 / window, 1 / window) if labels == "paper" else (3 / window, 0.2)
    return floor + (raw - low) * (1 - floor) / (2 - 3 / window - low)


class _CurvedBuilder(ExampleBuilder):
    """Windows, speaker tokens and before/after texts shared by the CCL and C3L builders."""

    uses_pool = True
    min_window = 2

    @dataclasses.dataclass(frozen=True)
    class Params:
        window: int = 5
        last_window: bool = True
        speaker_tokens: bool = True

    def validate(self) -> None:
        p = self.params
        if p.window < self.min_window:
            raise ValueError(
                f"{self.name} parameters out of range (window >= {self.min_window}): {p}")

    def windows(self, dialogue: Dialogue) -> List[List[str]]:
        """The windows of l consecutive utterances, in dialogue order."""
        texts = [turn.text for turn in dialogue.turns]
        l = self.params.window
        return [texts[s:s + l] for s in range(len(texts) - l + int(self.params.last_window))]

    def before(self, text: str, speaker: str, space: str = "") -> str:
        """`before_text`, with S only when the builder writes speaker tokens."""
        return before_text(text, speaker if self.params.speaker_tokens else None, space)

    @staticmethod
    def random_speaker(rng: np.random.Generator) -> str:
        return (EVEN, ODD)[int(rng.integers(2))]


@register
class CclBuilder(_CurvedBuilder):
    """CCL bi-encoder pairs (triple-encoders Sec. 2; Justus-Jonas/imaginaryNLP
    imaginaryNLP/trainer.py:ImaginaryEmbeddingTrainer._generate_data), 3(l-1) per window.

    For d = 1 .. l-1, in this order: the l-1 positives ([S_d] [B] w[0], [A] w[d]) with target
    1 - d/l; then per d the directional negative ([S_d] [B] w[d], [A] w[0]) and one random
    negative, ([S] [B] w[d], [A] r) or ([S] [B] r, [A] w[d]) with equal odds and a random S,
    both with target 0.
    """

    name = "ccl"
    schema = {"before": SEQUENCE, "after": SEQUENCE, "target": FLOAT}

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        l = self.params.window
        for w in self.windows(dialogue):
            for d in range(1, l):
                yield self._pair(self.before(w[0], speaker_token(d)), w[d], ccl_target(d, l))
            for d in range(1, l):
                yield self._pair(self.before(w[d], speaker_token(d)), w[0], 0.0)
                other = pool.sample(rng, 1, exclude_dialogue=index)[0]
                speaker = self.random_speaker(rng)
                if rng.integers(2):
                    yield self._pair(self.before(other, speaker), w[d], 0.0)
                else:
                    yield self._pair(self.before(w[d], speaker), other, 0.0)

    def _pair(self, before: str, after: str, target: float) -> Dict[str, Any]:
        return {"before": before, "after": after_text(after), "target": target}


@register
class C3lBuilder(_CurvedBuilder):
    """C3L triples (triple-encoders Sec. 3; UKPLab/acl2024-triple-encoders
    triple_encoders/trainer.py:_generate_C3L_data), (l-1)(l-2)/2 + 3(l-1) per window.

    With k = l-1 the window's last utterance, in this order: the positives
    ([B1] [S] [B] w[i], [B2] [S] [B] w[j], [A] w[k]) for i < j < k in (0,1), (0,2), .. order
    with target `c3l_target` (Eq. 1, `labels` paper or released), or with `positives="hard"`
    1 for each (Table 4's ablation "hard positives / no curvature"); then per context i < k the
    three hard negatives of Eq. 2, target 0: (w[i], r1), (r2, w[i]) and (r3, r4) as (B1, B2)
    with [A] w[k], r1..r4 distinct random utterances. As in the released code, r1 and r2 share
    one random speaker token and r3, r4 draw their own.
    """

    name = "c3l"
    schema = {"b1": SEQUENCE, "b2": SEQUENCE, "after": SEQUENCE, "target": FLOAT}
    min_window = 3

    @dataclasses.dataclass(frozen=True)
    class Params(_CurvedBuilder.Params):
        labels: str = "paper"
        positives: str = "curved"

    def validate(self) -> None:
        super().validate()
        if self.params.labels not in LABELS:
            raise ValueError(f"c3l labels must be one of {LABELS}, got {self.params.labels!r}")
        if self.params.positives not in POSITIVES:
            raise ValueError(f"c3l positives must be one of {POSITIVES}, got {self.params.positives!r}")
        if self.params.labels == "released" and self.params.window < 4:
            raise ValueError("c3l labels=released needs window >= 4 (its score range is empty)")

    def examples(self, dialogue: Dialogue, index: int, rng: np.random.Generator,
                 pool: Optional[DialoguePool]) -> Iterator[Dict[str, Any]]:
        p = self.params
        k = p.window - 1
        for w in self.windows(dialogue):
            context = [(self.before(w[i], speaker_token(k - i), "[B1]"),
                        self.before(w[i], speaker_token(k - i), "[B2]")) for i in range(k)]
            for i in range(k):
                for j in range(i + 1, k):
                    target = (HARD_POSITIVE_TARGET if p.positives == "hard"
                              else c3l_target(i, j, k, p.window, p.labels))
                    yield self._triple(context[i][0], context[j][1], w[k], target)
            for b1, b2 in context:
                r1, r2, r3, r4 = pool.sample(rng, 4, exclude_dialogue=index)
                shared, s3, s4 = (self.random_speaker(rng) for _ in range(3))
                yield self._triple(b1, self.before(r1, shared, "[B2]"), w[k], 0.0)
                yield self._triple(self.before(r2, shared, "[B1]"), b2, w[k], 0.0)
                yield self._triple(self.before(r3, s3, "[B1]"), self.before(r4, s4, "[B2]"),
                                   w[k], 0.0)

    def _triple(self, b1: str, b2: str, after: str, target: float) -> Dict[str, Any]:
        return {"b1": b1, "b2": b2, "after": after_text(after), "target": target}
