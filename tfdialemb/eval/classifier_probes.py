"""Classifiers fitted on frozen embeddings and scored on held-out ones: the thesis' probes.

The thesis (Sec. 4.4) evaluates frozen embeddings as features: a linear classifier for domains and
intents, and (Sec. 5.4-5.5, Tables 4-5) logistic regression, 5 nearest neighbours and a cosine
classifier that predict which augmentation made a dialogue. The settings are the released code's
(voorhs/dialogue-augmentation):

- logistic regression: scikit-learn's `LogisticRegression(random_state=0)` with its default 100
  iterations in mylib/embedding_benchmarks/classification.py (domains), `max_iter=1000` in
  scatter-analysis.py `dump_scores` (augmentations); `converged` says whether it stopped before
  the limit (the released code hides the warning);
- k nearest neighbours: a majority vote among the k nearest by euclidean distance, which on the
  L2-normalised rows used here orders neighbours as cosine does; a tied vote goes to the smallest
  class code (mylib/embedding_benchmarks/utils.py `KNNClassifier._predict_precomputed`: bincount,
  argmax), as scikit-learn's vote does;
- cosine nearest centroid: each class's mean unit vector, the class of the most similar centroid
  (ties: the smallest code).

Classes are integer codes 0..C-1 (callers fix their order, so ties resolve as in the released
code); embeddings are L2-normalised first (released `prepare_data`), unless `normalise=False`
(the released invariance probe fits raw embeddings).
"""
import warnings
from typing import Dict

import numpy as np

from tfdialemb.eval.dialogue_metrics import unit_rows
from tfdialemb.core.similarity import cosine_matrix

DOMAIN_MAX_ITER = 100
"""scikit-learn's default, as mylib/embedding_benchmarks/classification.py leaves it."""
INVARIANCE_MAX_ITER = 1000
"""scatter-analysis.py `dump_scores`: LogisticRegression(max_iter=1000)."""


def _checked(train_x, train_y, test_x, test_y, normalise=True):
    """Rows float64 (unit rows when `normalise`) and int codes, after checking shapes."""
    train_x, test_x = np.asarray(train_x, np.float64), np.asarray(test_x, np.float64)
    train_y, test_y = np.asarray(train_y), np.asarray(test_y)
    if train_x.ndim != 2 or test_x.ndim != 2 or train_x.shape[1] != test_x.shape[1]:
        raise ValueError(f"embeddings must be [N, H] with one H, got {train_x.shape} and {test_x.shape}")
    if len(train_x) != len(train_y) or len(test_x) != len(test_y):
        raise ValueError(f"{len(train_x)}/{len(test_x)} embeddings but {len(train_y)}/{len(test_y)} classes")
    if not len(test_x):
        raise ValueError("no held-out rows to score")
    if train_y.dtype.kind not in "iu" or test_y.dtype.kind not in "iu":
        raise ValueError("classes must be integer codes")
    if len(np.unique(train_y)) < 2:
        raise ValueError(f"the fitted part holds {len(np.unique(train_y))} class(es); need at least 2")
    if normalise:
        train_x, test_x = unit_rows(train_x), unit_rows(test_x)
    return train_x, train_y, test_x, test_y


def logistic_regression(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
                        max_iter: int = DOMAIN_MAX_ITER, normalise: bool = True) -> Dict[str, object]:
    """Held-out accuracy and macro F1 of `LogisticRegression(random_state=0, max_iter)` fitted on
    the training rows, and whether the solver converged."""
    from sklearn.exceptions import ConvergenceWarning  # pylint: disable=import-outside-toplevel
    from sklearn.linear_model import LogisticRegression  # pylint: disable=import-outside-toplevel
    from sklearn.metrics import accuracy_score, f1_score  # pylint: disable=import-outside-toplevel

    train_x, train_y, test_x, test_y = _checked(train_x, train_y, test_x, test_y, normalise)
    model = LogisticRegression(random_state=0, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        predicted = model.fit(train_x, train_y).predict(test_x)
    return {"accuracy": float(accuracy_score(test_y, predicted)),
            "macro_f1": float(f1_score(test_y, predicted, average="macro")),
            "converged": bool(np.all(model.n_iter_ < max_iter))}


def knn_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
                 k: int = 5, normalise: bool = True) -> float:
    """Held-out accuracy of the majority vote of the k nearest training rows (euclidean)."""
    from sklearn.metrics import accuracy_score  # pylint: disable=import-outside-toplevel
    from sklearn.neighbors import KNeighborsClassifier  # pylint: disable=import-outside-toplevel

    train_x, train_y, test_x, test_y = _checked(train_x, train_y, test_x, test_y, normalise)
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k={k} neighbours need 1 ≤ k ≤ {len(train_x)} training rows")
    knn = KNeighborsClassifier(n_neighbors=k, algorithm="brute", metric="euclidean")
    return float(accuracy_score(test_y, knn.fit(train_x, train_y).predict(test_x)))


def nearest_centroid_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray,
                              test_y: np.ndarray) -> float:
    """Held-out accuracy of the class whose mean training unit vector is most cosine-similar."""
    from sklearn.metrics import accuracy_score  # pylint: disable=import-outside-toplevel

    train_x, train_y, test_x, test_y = _checked(train_x, train_y, test_x, test_y)
    classes = np.unique(train_y)
    centroids = np.stack([train_x[train_y == c].mean(axis=0) for c in classes])
    predicted = classes[np.argmax(cosine_matrix(test_x, centroids), axis=1)]
    return float(accuracy_score(test_y, predicted))
