"""Utterance shuffling by stages (thesis Sec. 4.1 "Перемешивание высказываний": the stages
found by clustering are independent and can be reordered; released mylib/augmentations/shuffle.py
`Shuffler._shuffle`).

A dialogue of at least `min_turns` utterances (released: 12) has its stages put in another order,
each stage keeping its own order. How the order is chosen (`--shuffle_search`):
- `best` (default, the released code): for every n in [min_stages, L // turns_per_stage]
  (released: [4, L // 3]) the dialogue is cut into n stages and n random stage orders are drawn;
  the candidate whose own context-response matrix scores best is kept, the score being
  mean_a log10 softmax_b(S[a, b])[a] (`get_score`: how well each context picks its true next
  utterance among the dialogue's);
- `random`: one n drawn uniformly from that range, one random order, no scoring.
An order that leaves the dialogue as it was is a candidate like any other, as in the released code
(shuffle.py:41 `random.shuffle` may draw it, with probability 1/n! per try, and shuffle.py:48 keeps
it when it scores best: the dialogue is written unchanged, labelled "shuffle");
`allow_unchanged=False` (`--noshuffle_allow_unchanged`) redraws such orders, so that no view
labelled "shuffle" equals its original (the invariance probe then never sees one).
"""
from typing import Dict, List, Optional, Sequence

import numpy as np

from tfdialemb.augment.base import augmented
from tfdialemb.augment.similarity_sources import UtteranceSimilarity
from tfdialemb.augment.stages import RELEASED, StageOperation, Stages
from tfdialemb.dialogue import Dialogue

BEST, RANDOM = "best", "random"
SEARCHES = (BEST, RANDOM)


def order_score(matrix: np.ndarray) -> float:
    """mean_a log10 softmax_b(S[a, b])[a] of a context-response matrix (shuffle.py `get_score`)."""
    logits = np.asarray(matrix, np.float64)
    top = logits.max(axis=1, keepdims=True)
    log_softmax = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    return float(np.mean(np.diag(log_softmax)) / np.log(10.0))


class StageShuffle(StageOperation):
    name = "shuffle"

    def __init__(self, similarity: UtteranceSimilarity, seed: int = 0, *, min_turns: int = 12, min_stages: int = 4,
                 turns_per_stage: int = 3, clustering: str = RELEASED, search: str = BEST,
                 allow_unchanged: bool = True):
        super().__init__(similarity, seed, min_turns=min_turns, min_stages=min_stages,
                         turns_per_stage=turns_per_stage, clustering=clustering)
        if search not in SEARCHES:
            raise ValueError(f"shuffle: search must be one of {SEARCHES}, got {search!r}")
        self.search = search
        self.allow_unchanged = allow_unchanged

    def augment(self, dialogues: Sequence[Dialogue]) -> List[Optional[Dialogue]]:
        candidates: Dict[int, List[List[int]]] = {}
        for i, (dialogue, found) in enumerate(zip(dialogues, self.distances(dialogues))):
            if found is not None:
                candidates[i] = self._candidates(*found, self.rng(dialogue))

        def texts(i: int, order: List[int]) -> List[str]:
            return [dialogues[i].turns[j].text for j in order]

        if self.search == BEST:
            self.similarity.prepare(texts(i, order) for i, orders in candidates.items() for order in orders)
        results: List[Optional[Dialogue]] = [None] * len(dialogues)
        for i, orders in candidates.items():
            order = orders[0]
            if len(orders) > 1:
                matrices = self.similarity.order_matrices([texts(i, o) for o in orders])
                order = orders[max(range(len(orders)), key=lambda k: order_score(matrices[k]))]
            results[i] = augmented(dialogues[i], [dialogues[i].turns[j] for j in order], self.name)
        return results

    def _candidates(self, distances: np.ndarray, counts: range, rng: np.random.Generator) -> List[List[int]]:
        """The stage orders to choose among (utterance indices in their new order)."""
        if self.search == RANDOM:
            n = int(rng.integers(counts.start, counts.stop))
            return [self._order(self.stages(distances, [n])[n], rng)]
        stages = self.stages(distances, counts)
        return [self._order(stages[n], rng) for n in counts for _ in range(n)]

    def _order(self, stages: Stages, rng: np.random.Generator) -> List[int]:
        length = sum(len(stage) for stage in stages)
        while True:
            order = [i for k in rng.permutation(len(stages)) for i in stages[k]]
            if self.allow_unchanged or order != list(range(length)):
                return order
