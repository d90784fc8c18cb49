"""dial2vec's intrinsic metrics of dialogue embeddings [N, H] with one domain label per dialogue.

Paper dial2vec Sec. 4.1 (domain categorization, semantic relatedness, dialogue retrieval) and Sec.
5.3.3 (alignment and uniformity, Eq. 7-9). Where the released `dial2vec/metrics.py` computes
something else (AlibabaResearch/DAMO-ConvAI dial2vec/metrics.py), the paper is the default and the
released behaviour a
named option or a second function:

- KMeans repetitions: the paper's 10 runs, or `runs="released"` for max(3, 10 - N // 500).
- Semantic relatedness: the paper pairs each dialogue with one random other
  (`spearman_random_pairs`); the released code takes, per dialogue, all N - 1 others
  (`spearman_all_pairs`).
- Alignment: the paper's positive pairs are two different dialogues; the released code also counts
  every dialogue paired with itself (`variant="released"`).
- Retrieval ties are broken pessimistically (`tfdialemb.eval.metrics`: non-relevant first), where
  the released code leaves them to an unstable argsort; a dialogue whose label no other dialogue
  shares has no relevant candidate: the paper is silent, the released MAP becomes NaN, here it is
  left out of MAP and MRR and counted.
- Cosines come from `tfdialemb.core.similarity.cosine_matrix` (norms clamped at 1e-12; the released
  code adds 1e-6 to the norm product).

Labels may be any hashable values (strings, ints); they are only compared for equality, and
labels of two kinds (`label_kind`) are refused: 3 and "3" would be two classes, True and 1 one.
"""
import numbers
from typing import Dict, Hashable, Iterator, Sequence, Tuple, Union

import numpy as np

from tfdialemb.eval import metrics
from tfdialemb.core.similarity import cosine_matrix

ALIGNMENT_VARIANTS = ("paper", "released")
KMEANS_MAX_ITER = 500
KMEANS_TOL = 1e-5
PAPER_RUNS = 10
UNIFORMITY_T = 2.0
_BLOCK_ROWS = 512


def label_kind(label: Hashable) -> str:
    """"boolean", "number", "string" or the type's name: one labelling uses one kind."""
    if isinstance(label, (bool, np.bool_)):
        return "boolean"
    if isinstance(label, numbers.Number):
        return "number"
    return "string" if isinstance(label, str) else type(label).__name__


def label_codes(labels: Sequence[Hashable]) -> np.ndarray:
    """Integer codes [N] of `labels`, 0, 1, ... in order of first appearance; labels of two
    kinds are refused."""
    if isinstance(labels, (str, bytes)) or np.ndim(np.asarray(labels, dtype=object)) != 1:
        raise ValueError("labels must be a 1-D sequence with one label per dialogue")
    examples = {}
    for label in labels:
        examples.setdefault(label_kind(label), label)
    if len(examples) > 1:
        raise ValueError(f"labels mix {' and '.join(f'{kind}s ({value!r})' for kind, value in examples.items())}: "
                         "a class is spelled one way")
    index: Dict[Hashable, int] = {}
    try:
        return np.array([index.setdefault(label, len(index)) for label in labels], np.int64)
    except TypeError:
        raise ValueError("labels must be hashable values such as strings or ints") from None


def _checked(embeddings: np.ndarray, labels: Sequence[Hashable]) -> Tuple[np.ndarray, np.ndarray]:
    """Embeddings as float64 [N, H] and label codes [N], after checking they fit together."""
    x = np.asarray(embeddings, np.float64)
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"embeddings must be a 2-D array [N, H], got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("embeddings hold NaN or infinite values")
    codes = label_codes(labels)
    if len(codes) != len(x):
        raise ValueError(f"{len(x)} embeddings but {len(codes)} labels")
    if codes.max(initial=-1) < 1:
        raise ValueError(f"need at least 2 distinct labels, got {codes.max(initial=-1) + 1}")
    return x, codes


def _contingency(labels: Sequence[Hashable], clusters: Sequence[Hashable]) -> np.ndarray:
    """Counts [classes, clusters] of two equal-length labellings of the same items."""
    from sklearn.metrics.cluster import contingency_matrix  # pylint: disable=import-outside-toplevel

    classes, found = label_codes(labels), label_codes(clusters)
    if len(classes) != len(found) or not len(classes):
        raise ValueError(f"labels ({len(classes)}) and clusters ({len(found)}) must be equally "
                         "long and not empty")
    return contingency_matrix(classes, found)


def purity(labels: Sequence[Hashable], clusters: Sequence[Hashable]) -> float:
    """Σ over clusters of the count of the cluster's majority class, / N (the paper's purity)."""
    counts = _contingency(labels, clusters)
    return float(counts.max(axis=0).sum() / counts.sum())


def cluster_accuracy(labels: Sequence[Hashable], clusters: Sequence[Hashable]) -> float:
    """Accuracy under the best one-to-one cluster→class map (Hungarian; released `get_accuracy`)."""
    from scipy.optimize import linear_sum_assignment  # pylint: disable=import-outside-toplevel

    counts = _contingency(labels, clusters)
    rows, columns = linear_sum_assignment(counts, maximize=True)
    return float(counts[rows, columns].sum() / counts.sum())


def released_kmeans_runs(n: int) -> int:
    """The released code's number of KMeans repetitions for N dialogues: max(3, 10 - N // 500)."""
    return max(3, 10 - n // 500)


def domain_categorization(embeddings: np.ndarray, labels: Sequence[Hashable],
                          runs: Union[int, str] = PAPER_RUNS, seed: int = 0) -> Dict[str, float]:
    """KMeans++ with k = #labels on the raw embeddings, metrics averaged over seeded runs.

    Run r uses random_state seed + r, one k-means++ initialisation, max_iter 500 and tol 1e-5
    (the released settings). `runs` is a count (the paper: 10) or "released".
    """
    from sklearn.cluster import KMeans  # pylint: disable=import-outside-toplevel

    x, codes = _checked(embeddings, labels)
    k = int(codes.max()) + 1
    if len(x) < k:
        raise ValueError(f"{len(x)} dialogues cannot form {k} clusters")
    if runs == "released":
        runs = released_kmeans_runs(len(x))
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive int or 'released', got {runs!r}")
    clusterings = [KMeans(n_clusters=k, init="k-means++", n_init=1, max_iter=KMEANS_MAX_ITER,
                          tol=KMEANS_TOL, random_state=seed + run).fit_predict(x) for run in range(runs)]
    return categorization_of_assignments(codes, clusterings)


def categorization_of_assignments(labels: Sequence[Hashable],
                                  clusterings: Sequence[Sequence[Hashable]]) -> Dict[str, float]:
    """Purity, ARI, NMI and Hungarian accuracy of each run's assignment of the dialogues to
    clusters, averaged over the runs; `purity_std` over the runs and `runs`.

    For KMeans clusters (`domain_categorization`) or any other assignment, e.g. each dialogue's
    most probable LDA topic (dial2vec Sec. 4.3: LDA "assign[s] each dialogue a topic").
    """
    # pylint: disable=import-outside-toplevel
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    if not clusterings:
        raise ValueError("need at least one clustering")
    codes = label_codes(labels)
    scores = {"purity": [], "ari": [], "nmi": [], "accuracy": []}
    for clusters in clusterings:
        clusters = label_codes(clusters)
        scores["purity"].append(purity(codes, clusters))
        scores["accuracy"].append(cluster_accuracy(codes, clusters))
        scores["ari"].append(adjusted_rand_score(codes, clusters))
        scores["nmi"].append(normalized_mutual_info_score(codes, clusters))
    results = {name: float(np.mean(values)) for name, values in scores.items()}
    results["purity_std"] = float(np.std(scores["purity"]))
    results["runs"] = len(clusterings)
    return results


def _cosine_blocks(x: np.ndarray) -> Iterator[Tuple[int, np.ndarray]]:
    """(first row, cosines [b, N] of rows first..first+b-1 with every row), b ≤ 512 rows."""
    for start in range(0, len(x), _BLOCK_ROWS):
        yield start, cosine_matrix(x[start:start + _BLOCK_ROWS], x)


def _rows_against_others(x: np.ndarray,
                         codes: np.ndarray) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """Per dialogue i: cosines [N-1] with the other dialogues and their same-label indicator."""
    for start, block in _cosine_blocks(x):
        for offset, cosines in enumerate(block):
            i = start + offset
            others = np.arange(len(x)) != i
            yield cosines[others], (codes[others] == codes[i]).astype(np.int64)


def spearman_random_pairs(embeddings: np.ndarray, labels: Sequence[Hashable], seed: int = 0,
                          repeats: int = PAPER_RUNS) -> float:
    """The paper's semantic relatedness: each dialogue paired with one random other dialogue.

    Spearman between the N pairs' cosines and 1[same label], averaged over `repeats` pairings
    drawn from numpy's default_rng(seed). A pairing whose indicators are all equal has no defined
    correlation and counts as 0 (the released code's rule for its NaN rows).
    """
    x, codes = _checked(embeddings, labels)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive int, got {repeats!r}")
    n = len(x)
    partners = (np.arange(n) + np.random.default_rng(seed).integers(1, n, size=(repeats, n))) % n
    pair_cosines = np.empty([repeats, n])
    for start, block in _cosine_blocks(x):
        rows = np.arange(start, start + len(block))
        pair_cosines[:, rows] = block[rows - start, partners[:, rows]]
    same = (codes[partners] == codes[None, :]).astype(np.int64)
    correlations = np.nan_to_num([metrics.spearman(s, c) for s, c in zip(same, pair_cosines)])
    return float(np.mean(correlations))


def spearman_all_pairs(embeddings: np.ndarray, labels: Sequence[Hashable]) -> float:
    """The released semantic relatedness (`semantic_relatedness_precise`).

    Per dialogue, Spearman between its N-1 cosines and same-label indicators (NaN, when all the
    others share its label or none does, counts as 0), averaged over dialogues.
    """
    x, codes = _checked(embeddings, labels)
    if len(x) < 3:
        raise ValueError("spearman_all_pairs needs at least 3 dialogues (2 others per row)")
    correlations = [metrics.spearman(same, cosines)
                    for cosines, same in _rows_against_others(x, codes)]
    return float(np.mean(np.nan_to_num(correlations)))


def dialogue_retrieval(embeddings: np.ndarray, labels: Sequence[Hashable]) -> Dict[str, float]:
    """Each dialogue queries the other N-1 by cosine; relevant = same label (paper Sec. 4.1).

    MAP and MRR are means over the queries with at least one relevant candidate; `queries` counts
    them and `queries_without_relevant` the rest.
    """
    x, codes = _checked(embeddings, labels)
    average_precisions, reciprocal_ranks = [], []
    for cosines, same in _rows_against_others(x, codes):
        if same.any():
            average_precisions.append(metrics.average_precision(cosines, same))
            reciprocal_ranks.append(metrics.reciprocal_rank(cosines, same))
    if not average_precisions:
        raise ValueError("no two dialogues share a label: retrieval has no relevant candidate")
    return {"map": float(np.mean(average_precisions)), "mrr": float(np.mean(reciprocal_ranks)),
            "queries": len(average_precisions),
            "queries_without_relevant": len(x) - len(average_precisions)}


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1; a zero row has no direction on the hypersphere and is refused, and
    so is a row holding NaN or an infinity (a diverged model's)."""
    broken = np.flatnonzero(~np.isfinite(x).all(axis=1))
    if broken.size:
        raise ValueError(f"embedding rows {broken[:10].tolist()} hold NaN or infinite values")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError(f"embedding rows {np.flatnonzero(norms[:, 0] == 0)[:10].tolist()} are "
                         "zero and cannot be L2-normalised")
    return x / norms


def alignment(embeddings: np.ndarray, labels: Sequence[Hashable],
              variant: str = "paper") -> Dict[str, float]:
    """Eq. 7 and Eq. 8 on L2-normalised embeddings, positive pairs = same label.

    alignment = E_pos ‖f(x) - f(x⁺)‖² (Eq. 7); adjusted_alignment = alignment
    - E_neg ‖f(x) - f(x⁻)‖² (Eq. 8), which the paper plots against uniformity. Pairs are ordered
    pairs of two different dialogues; `variant="released"` also counts each dialogue with itself
    as a positive pair (distance 0). Sums use Σ_{i,j∈S} ‖x_i - x_j‖² = 2|S| Σ_i ‖x_i‖²
    - 2‖Σ_i x_i‖², so no N×N matrix is formed.
    """
    if variant not in ALIGNMENT_VARIANTS:
        raise ValueError(f"variant must be one of {ALIGNMENT_VARIANTS}, got {variant!r}")
    x, codes = _checked(embeddings, labels)
    unit = unit_rows(x)

    def pair_sum(rows: np.ndarray) -> float:
        total = rows.sum(axis=0)
        return 2.0 * len(rows) * float((rows ** 2).sum()) - 2.0 * float(total @ total)

    sizes = np.bincount(codes)
    positive_sum = sum(pair_sum(unit[codes == c]) for c in range(len(sizes)))
    negative_sum = pair_sum(unit) - positive_sum
    positive_pairs = int((sizes ** 2).sum()) - (len(x) if variant == "paper" else 0)
    if positive_pairs == 0:
        raise ValueError("no two dialogues share a label: alignment has no positive pair")
    negative_pairs = len(x) ** 2 - int((sizes ** 2).sum())
    positive = positive_sum / positive_pairs
    return {"alignment": positive, "adjusted_alignment": positive - negative_sum / negative_pairs}


def uniformity(embeddings: np.ndarray, t: float = UNIFORMITY_T) -> float:
    """Eq. 9: log E_{x≠y} exp(-t ‖f(x) - f(y)‖²) over pairs of distinct L2-normalised rows, t = 2.

    This is also what the released `align_uniform` computes: its pdist of cat([x_i repeated, X])
    has the distances ‖x_j - x_k‖, the same for every i.
    """
    x = np.asarray(embeddings, np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"uniformity needs embeddings [N ≥ 2, H], got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("embeddings hold NaN or infinite values")
    unit = unit_rows(x)
    total = 0.0
    for start, block in _cosine_blocks(unit):
        kernel = np.exp(-t * np.maximum(2.0 - 2.0 * block, 0.0))
        kernel[np.arange(len(block)), np.arange(start, start + len(block))] = 0.0
        total += float(kernel.sum())
    return float(np.log(total / (len(x) * (len(x) - 1))))
