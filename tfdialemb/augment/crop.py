"""Dialogue cropping by stages (thesis Sec. 4.1 "Обрезка диалога": groups of utterances may be
dropped, leaving a shorter dialogue; released mylib/augmentations/prune.py `Pruner._cut`).

A dialogue of at least `min_turns` utterances (released: 6) is cut into n stages, n drawn
uniformly from [min_stages, L // turns_per_stage] (released: [2, L // 3]). By default the largest
stage is kept and the others dropped, as the released code does; of equally large ones the first
in the clustering's order (prune.py:47 `np.argmax` over `_cluster`'s clusters: the smallest
scikit-learn label for `released`, the earliest stage for `contiguous`). With
`keep` (`--crop_keep`, a fraction of the utterances), stages are visited in a random order and each
is dropped while at least ceil(keep · L) utterances remain. Either way at least `min_kept`
utterances (2) remain, and a dialogue from which nothing could be dropped is not cropped (None).
"""
import math
from typing import List, Optional, Sequence

from tfdialemb.augment.base import augmented
from tfdialemb.augment.stages import RELEASED, StageOperation, Stages
from tfdialemb.augment.similarity_sources import UtteranceSimilarity
from tfdialemb.dialogue import Dialogue


class StageCrop(StageOperation):
    name = "crop"

    def __init__(self, similarity: UtteranceSimilarity, seed: int = 0, *, min_turns: int = 6, min_stages: int = 2,
                 turns_per_stage: int = 3, clustering: str = RELEASED, keep: Optional[float] = None,
                 min_kept: int = 2):
        super().__init__(similarity, seed, min_turns=min_turns, min_stages=min_stages,
                         turns_per_stage=turns_per_stage, clustering=clustering)
        if keep is not None and not 0.0 < keep < 1.0:
            raise ValueError(f"crop: keep is the fraction of utterances kept, in (0, 1); got {keep}")
        if min_kept < 1:
            raise ValueError(f"crop: min_kept must be at least 1, got {min_kept}")
        self.keep = keep
        self.min_kept = min_kept

    def augment(self, dialogues: Sequence[Dialogue]) -> List[Optional[Dialogue]]:
        results: List[Optional[Dialogue]] = []
        for dialogue, found in zip(dialogues, self.distances(dialogues)):
            if found is None:
                results.append(None)
                continue
            distances, counts = found
            rng = self.rng(dialogue)
            n = int(rng.integers(counts.start, counts.stop))
            kept = self._kept(self.stages(distances, [n])[n], len(dialogue.turns), rng)
            results.append(None if kept is None else
                           augmented(dialogue, [dialogue.turns[i] for i in kept], self.name))
        return results

    def _kept(self, stages: Stages, length: int, rng) -> Optional[List[int]]:
        """The utterances left, in dialogue order; None when fewer than min_kept or all."""
        if self.keep is None:
            kept = max(stages, key=len)
        else:
            floor = max(self.min_kept, math.ceil(self.keep * length - 1e-9))
            dropped, left = set(), length
            for k in rng.permutation(len(stages)):
                if left - len(stages[k]) >= floor:
                    dropped.add(int(k))
                    left -= len(stages[k])
            kept = [i for k, stage in enumerate(stages) if k not in dropped for i in stage]
        if len(kept) < self.min_kept or len(kept) == length:
            return None
        return sorted(kept)
