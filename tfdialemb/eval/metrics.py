"""Ranking and correlation metrics on numpy arrays, as the papers' evaluation scripts define them.

Ranking functions score one query: `scores` [n] are the model's similarities to its n candidates,
`relevance` [n] is 1 for a relevant candidate and 0 otherwise. MAP, MRR, P@k and R@k of a test set
are the means of the per-query values. Ties are broken pessimistically: among candidates with
equal scores the non-relevant ones rank first (then input order), so a model that gives every
candidate the same score cannot look good because of the order the candidates were listed in
(DialogueCSE lists positives first; its reversed `np.argsort` leaves ties to the sort algorithm).
`rank_of` also ranks optimistically (`--rank_ties=optimistic`), as the triple-encoders' released
evaluations do, so their published ranks can be reproduced. A NaN score is always a miss
(`pessimistic_scores`): a relevant candidate scored NaN ranks below every other, a non-relevant
one above every other, so a diverged model whose scores are all NaN ranks every relevant
candidate last.
"""
import warnings

import numpy as np

from tfdialemb.core.options import Option

PESSIMISTIC, OPTIMISTIC = "pessimistic", "optimistic"
RANK_TIES = Option(
    "rank_ties", PESSIMISTIC, "sequence_modeling / stp: where the true candidate ranks among "
    "candidates scoring exactly as it does: pessimistic (after them) or optimistic (before them, "
    "as UKPLab/acl2024-triple-encoders ranks: the first position of the true score in the "
    "descending sort).", choices=(PESSIMISTIC, OPTIMISTIC))


def pessimistic_scores(scores: np.ndarray, relevance: np.ndarray) -> np.ndarray:
    """`scores` as float64 with each NaN replaced by the worst value for the model: -inf for a
    relevant candidate, +inf for a non-relevant one (any shape, `relevance` alike)."""
    scores, relevance = np.asarray(scores, np.float64), np.asarray(relevance)
    return np.where(np.isnan(scores), np.where(relevance == 1, -np.inf, np.inf), scores)


def ranked_relevance(scores: np.ndarray, relevance: np.ndarray) -> np.ndarray:
    """Relevance [n] in rank order: descending score, ties non-relevant first, then input order;
    NaN scores as `pessimistic_scores` places them."""
    scores, relevance = np.asarray(scores, np.float64), np.asarray(relevance, np.int64)
    if scores.shape != relevance.shape or scores.ndim != 1:
        raise ValueError(f"scores {scores.shape} and relevance {relevance.shape} must be equal 1-D")
    if not np.isin(relevance, (0, 1)).all():
        raise ValueError("relevance must hold only 0 and 1")
    return relevance[np.lexsort((relevance, -pessimistic_scores(scores, relevance)))]


def _ranked_with_relevant(scores, relevance) -> np.ndarray:
    """ranked_relevance; a query without relevant candidates has undefined metrics: refused."""
    ranked = ranked_relevance(scores, relevance)
    if not ranked.any():
        raise ValueError("the query has no relevant candidate")
    return ranked


def average_precision(scores: np.ndarray, relevance: np.ndarray) -> float:
    """Mean over the relevant candidates of the precision at their rank.

    AP = (1/R) Σ_{i: rel_i = 1} (#relevant in the top i) / i, with R the number of relevant
    candidates and i the 1-based rank; MAP is its mean over queries.
    """
    ranked = _ranked_with_relevant(scores, relevance)
    ranks = np.flatnonzero(ranked) + 1
    return float(np.mean(np.arange(1, len(ranks) + 1) / ranks))


def reciprocal_rank(scores: np.ndarray, relevance: np.ndarray) -> float:
    """1 / (1-based rank of the first relevant candidate); MRR is its mean over queries."""
    ranked = _ranked_with_relevant(scores, relevance)
    return 1.0 / (int(np.argmax(ranked)) + 1)


def check_ties(ties: str) -> str:
    """`ties` itself when it is one of RANK_TIES' choices; a ValueError otherwise."""
    if ties not in RANK_TIES.choices:
        raise ValueError(f"ties must be one of {', '.join(RANK_TIES.choices)}, got {ties!r}")
    return ties


def rank_of(scores: np.ndarray, index: int, ties: str = PESSIMISTIC) -> int:
    """1-based rank of candidate `index` when it is the only relevant one, after the candidates
    that tie with it (`pessimistic`) or before them (`optimistic`: 1 + the number of higher
    scores, UKPLab/acl2024-triple-encoders
    triple_encoders/TripleEncodersForSequenceModeling.py:_sequence_model_batch and
    TripleEncodersForSTP.py:evaluate_stp_dataset). NaN scores rank pessimistically either way."""
    relevance = np.zeros(len(scores), np.int64)
    relevance[index] = 1
    if check_ties(ties) == OPTIMISTIC:
        scores = pessimistic_scores(scores, relevance)
        return int(np.sum(scores > scores[index])) + 1
    return int(np.argmax(ranked_relevance(scores, relevance))) + 1


def precision_at_k(scores: np.ndarray, relevance: np.ndarray, k: int) -> float:
    """(#relevant in the top k) / k; a query with fewer than k candidates still divides by k.

    The fixed denominator is DialogueCSE's: it pads shorter rankings with non-relevant entries.
    """
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    return float(ranked_relevance(scores, relevance)[:k].sum() / k)


def recall_at_k(scores: np.ndarray, relevance: np.ndarray, k: int) -> float:
    """(#relevant in the top k) / (#relevant)."""
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    ranked = _ranked_with_relevant(scores, relevance)
    return float(ranked[:k].sum() / ranked.sum())


def _correlation(statistic: str, gold, predicted) -> float:
    """The scipy.stats correlation named `statistic` (spearmanr, pearsonr) of two equal 1-D arrays
    of at least 2 values.

    NaN when either input is constant, where a correlation is undefined.
    """
    import scipy.stats  # pylint: disable=import-outside-toplevel

    gold, predicted = np.asarray(gold, np.float64), np.asarray(predicted, np.float64)
    if gold.shape != predicted.shape or gold.ndim != 1 or len(gold) < 2:
        raise ValueError(f"need two equal 1-D arrays of at least 2 values, got {gold.shape} "
                         f"and {predicted.shape}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.stats.ConstantInputWarning)
        return float(getattr(scipy.stats, statistic)(gold, predicted).statistic)


def spearman(gold: np.ndarray, predicted: np.ndarray) -> float:
    """Spearman's rank correlation: Pearson of the ranks, tied values sharing their mean rank.

    NaN when either input is constant.
    """
    return _correlation("spearmanr", gold, predicted)


def pearson(gold: np.ndarray, predicted: np.ndarray) -> float:
    """Pearson's linear correlation; NaN when either input is constant."""
    return _correlation("pearsonr", gold, predicted)
