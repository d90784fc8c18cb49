"""Dialogue stages: groups of utterances found by agglomerative clustering of a within-dialogue
similarity matrix, what crop and shuffle move as wholes (thesis Sec. 4.1, appendix 1.1 and Fig. 4;
released code mylib/augmentations/prune.py `_cluster`, `get_similarities`).

The matrix is the released one: S[a, b] = sim(context ending at utterance a, utterance b + 1)
for a, b < L − 1 (`similarity.UtteranceSimilarity.matrices`). Utterances i < j are 1 − S[i, j − 1]
apart: the context that ends at the earlier one against the later one. The released `_cluster`
pads S to L × L and hands it to scikit-learn, which reads a precomputed matrix only above its
diagonal, so the same pairs are used there.

Two clusterings (`--stage_clustering`):
- `released` (default: what built the thesis' training sets): scikit-learn
  AgglomerativeClustering(linkage="average", metric="precomputed") with no constraint, as
  `_cluster` does; a cluster may gather utterances from far apart (a crop then keeps utterances
  that were not adjacent, a shuffle moves a "stage" that is not a run). Clusters are listed in
  scikit-learn's label order, the order `_cluster` returns them in (crop's tie-break reads it).
- `contiguous`: average linkage (the distance of two clusters is the mean distance of their
  utterance pairs) where only neighbouring runs may merge, so every stage is a run of
  consecutive utterances, the stages the thesis' text describes ("separate independent stages of
  the dialogue"); for when a crop must keep one unbroken stretch and a shuffle move whole
  stretches. Written here rather than with scikit-learn's `connectivity=` chain graph: under a
  connectivity graph scikit-learn's average linkage averages only the distances along graph
  edges, so two neighbouring runs stay as far apart as the two utterances at their border and the
  rest of the matrix goes unused (tests/augment/test_stages.py shows the difference on a
  hand-worked matrix). Ties merge the leftmost pair; stages are listed by their first utterance.

The number of stages is drawn per dialogue from [min_stages, L // turns_per_stage] (prune.py:
[2, L // 3] on dialogues of at least 6 utterances; shuffle.py: [4, L // 3] on at least 12).
"""
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.augment.base import Augmentation
from tfdialemb.augment.similarity_sources import READING, UtteranceSimilarity
from tfdialemb.core.options import PAPER
from tfdialemb.dialogue import Dialogue

CONTIGUOUS, RELEASED = "contiguous", "released"
CLUSTERINGS = (CONTIGUOUS, RELEASED)
Stages = List[List[int]]
"""Utterance indices of each stage, each in dialogue order; stages in the clustering's order (by
first utterance for `contiguous`, by scikit-learn's label for `released`)."""


def utterance_distances(similarity: np.ndarray, reading: str = PAPER) -> np.ndarray:
    """Symmetric [L, L] distances with a zero diagonal from the [L − 1, L − 1] context-response
    matrix: d(i, j) = 1 − S[i, j − 1] for i < j, or 1 / (S[i, j − 1] + 1e-5) under the `released`
    reading (similarity_sources.READING: prune.py:78 before commit 5ef94c7)."""
    similarity = np.asarray(similarity, np.float64)
    length = similarity.shape[0] + 1
    if similarity.ndim != 2 or similarity.shape[1] != length - 1:
        raise ValueError(f"a context-response matrix must be square, got shape {similarity.shape}")
    rows, cols = np.triu_indices(length, k=1)
    distances = np.zeros((length, length))
    if reading not in READING.choices:
        raise ValueError(f"reading must be one of {READING.choices}, got {reading!r}")
    above = similarity[rows, cols - 1]
    distances[rows, cols] = 1.0 - above if reading == PAPER else 1.0 / (above + 1e-5)
    return distances + distances.T


def _check_counts(length: int, counts: Iterable[int]) -> List[int]:
    counts = sorted(set(int(n) for n in counts))
    if not counts or counts[0] < 1 or counts[-1] > length:
        raise ValueError(f"cannot cut {length} utterances into {counts} stages")
    return counts


def contiguous_stages(distances: np.ndarray, counts: Iterable[int]) -> Dict[int, Stages]:
    """For each n of `counts`, the n runs of consecutive utterances that contiguity-constrained
    average linkage leaves; one merge sequence serves every n."""
    length = len(distances)
    counts = _check_counts(length, counts)
    prefix = np.zeros((length + 1, length + 1))
    prefix[1:, 1:] = np.asarray(distances, np.float64).cumsum(0).cumsum(1)

    def mean_between(start: int, middle: int, end: int) -> float:
        """Mean distance of the pairs across runs [start, middle) and [middle, end)."""
        total = prefix[middle, end] - prefix[start, end] - prefix[middle, middle] + prefix[start, middle]
        return total / ((middle - start) * (end - middle))

    bounds = list(range(length + 1))
    found: Dict[int, Stages] = {}
    while True:
        runs = len(bounds) - 1
        if runs in counts:
            found[runs] = [list(range(bounds[k], bounds[k + 1])) for k in range(runs)]
        if runs == counts[0]:
            return found
        gaps = [mean_between(bounds[k], bounds[k + 1], bounds[k + 2]) for k in range(runs - 1)]
        del bounds[int(np.argmin(gaps)) + 1]


def released_clusters(distances: np.ndarray, counts: Iterable[int]) -> Dict[int, Stages]:
    """For each n of `counts`, scikit-learn's unconstrained average-linkage clusters in label
    order (prune.py `_cluster`)."""
    from sklearn.cluster import AgglomerativeClustering  # pylint: disable=import-outside-toplevel

    counts = _check_counts(len(distances), counts)
    found = {}
    for n in counts:
        labels = AgglomerativeClustering(n_clusters=n, linkage="average",
                                         metric="precomputed").fit_predict(distances)
        clusters: Dict[int, List[int]] = {}
        for index, label in enumerate(labels):
            clusters.setdefault(int(label), []).append(index)
        found[n] = [clusters[label] for label in sorted(clusters)]
    return found


def cluster_stages(distances: np.ndarray, counts: Iterable[int], clustering: str = RELEASED) -> Dict[int, Stages]:
    """The stages for each number in `counts` under `clustering` (one of CLUSTERINGS)."""
    if clustering == CONTIGUOUS:
        return contiguous_stages(distances, counts)
    if clustering == RELEASED:
        return released_clusters(distances, counts)
    raise ValueError(f"unknown stage clustering {clustering!r}; one of {CLUSTERINGS}")


class StageOperation(Augmentation):
    """What crop and shuffle share: which dialogues qualify, how many stages they may be cut into,
    and their utterance distances from one batched similarity call."""

    needs = ("similarity",)

    def __init__(self, similarity: UtteranceSimilarity, seed: int = 0, *, min_turns: int, min_stages: int,
                 turns_per_stage: int = 3, clustering: str = RELEASED):
        super().__init__(seed)
        if clustering not in CLUSTERINGS:
            raise ValueError(f"{self.name}: clustering must be one of {CLUSTERINGS}, got {clustering!r}")
        if min_stages < 2 or turns_per_stage < 1 or min_turns < 2:
            raise ValueError(f"{self.name}: needs min_stages >= 2, turns_per_stage >= 1 and min_turns >= 2 "
                             f"(got {min_stages}, {turns_per_stage}, {min_turns})")
        self.similarity = similarity
        self.min_turns = min_turns
        self.min_stages = min_stages
        self.turns_per_stage = turns_per_stage
        self.clustering = clustering

    def stage_counts(self, length: int) -> range:
        """The numbers of stages a dialogue of `length` utterances may be cut into (empty: none)."""
        if length < self.min_turns:
            return range(0)
        return range(self.min_stages, length // self.turns_per_stage + 1)

    def distances(self, dialogues: Sequence[Dialogue]) -> List[Optional[Tuple[np.ndarray, range]]]:
        """(utterance distances, stage counts) of each dialogue that qualifies, None for the rest."""
        chosen = [i for i, d in enumerate(dialogues) if len(self.stage_counts(len(d.turns)))]
        matrices = self.similarity.matrices([[turn.text for turn in dialogues[i].turns] for i in chosen])
        found: List[Optional[Tuple[np.ndarray, range]]] = [None] * len(dialogues)
        for i, matrix in zip(chosen, matrices):
            found[i] = (utterance_distances(matrix, self.similarity.reading), self.stage_counts(len(dialogues[i].turns)))
        return found

    def stages(self, distances: np.ndarray, counts: Iterable[int]) -> Dict[int, Stages]:
        return cluster_stages(distances, counts, self.clustering)
