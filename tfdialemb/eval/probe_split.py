"""The seeded fit / held-out split of a probe's rows, optionally keeping groups whole.

The released benchmarks fit on a corpus' train split and score its test split
(mylib/trainers/encoder/data.py: SGD train vs test); where one file is given, the rows are split
as scatter-analysis.py does, `train_test_split(random_state=seed)` with scikit-learn's test
fraction 0.25. With `groups` (e.g. the source dialogue of each augmented view) a group lands
wholly on one side, so no view is scored against a view of its own dialogue.
"""
import dataclasses
from typing import Any, Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.eval.dialogue_metrics import label_codes

DEFAULT_TEST_FRACTION = 0.25


def held_out_split(n: int, test_fraction: float = DEFAULT_TEST_FRACTION, seed: int = 0,
                   groups: Optional[Sequence] = None) -> Tuple[np.ndarray, np.ndarray]:
    """(fit indices, held-out indices) of n rows, each sorted; both sides are non-empty."""
    from sklearn.model_selection import GroupShuffleSplit, train_test_split  # pylint: disable=import-outside-toplevel

    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"the held-out fraction must lie strictly between 0 and 1, got {test_fraction}")
    rows = np.arange(n)
    if groups is None:
        if n < 2:
            raise ValueError(f"splitting needs at least 2 rows, got {n}")
        fit, test = train_test_split(rows, test_size=test_fraction, random_state=seed)
    else:
        if len(groups) != n:
            raise ValueError(f"{len(groups)} groups for {n} rows")
        if len(set(groups)) < 2:
            raise ValueError(f"splitting by group needs at least 2 groups, got {len(set(groups))}")
        splitter = GroupShuffleSplit(n_splits=1, test_size=test_fraction, random_state=seed)
        fit, test = next(splitter.split(rows, groups=list(groups)))
    if not len(fit) or not len(test):
        raise ValueError(f"a held-out fraction of {test_fraction} leaves one side of {n} rows empty")
    return np.sort(fit), np.sort(test)


@dataclasses.dataclass(frozen=True)
class ProbeParts:
    """The fitted and held-out embeddings with their labels, and how they were made."""
    fit_x: np.ndarray
    fit_labels: List[Hashable]
    test_x: np.ndarray
    test_labels: List[Hashable]
    split: Dict[str, Any]


def probe_parts(vectors: np.ndarray, labels: Sequence[Hashable], fit_vectors: Optional[np.ndarray] = None,
                fit_labels: Optional[Sequence[Hashable]] = None, test_fraction: float = DEFAULT_TEST_FRACTION,
                seed: int = 0, fit_description: Optional[Dict[str, Any]] = None,
                groups: Optional[Sequence[Hashable]] = None) -> ProbeParts:
    """The evaluated rows held out against a fit file's rows (`fit_vectors`, the released fixed
    splits; `fit_description` says which file), or a seeded held-out fraction of them against
    the rest, each of `groups` (when given) wholly on one side; a held-out part of a single label
    is refused."""
    vectors = np.asarray(vectors)
    if fit_vectors is not None:
        return ProbeParts(np.asarray(fit_vectors), list(fit_labels), vectors, list(labels),
                          {"fixed": True, **(fit_description or {})})
    fit, test = held_out_split(len(vectors), test_fraction, seed, groups)
    held_out_labels = {labels[i] for i in test}
    if len(held_out_labels) < 2:
        raise ValueError(f"the held-out part ({len(test)} of {len(vectors)} rows: fraction {test_fraction}, "
                         f"seed {seed}) "
                         f"holds the single label {held_out_labels.pop()!r}, on which purity and macro F1 are perfect "
                         "whatever the embedding; give a fit file, or another seed or held-out fraction")
    return ProbeParts(vectors[fit], [labels[i] for i in fit], vectors[test], [labels[i] for i in test],
                      {"fixed": False, "test_fraction": test_fraction, "seed": seed,
                       **({"by_group": True} if groups is not None else {})})


def split_codes(fit_labels: Sequence[Hashable], test_labels: Sequence[Hashable]) -> Tuple[np.ndarray, np.ndarray]:
    """Integer codes of the fitted and held-out labels, one code per distinct label of both."""
    codes = label_codes(list(fit_labels) + list(test_labels))
    return codes[:len(fit_labels)], codes[len(fit_labels):]
