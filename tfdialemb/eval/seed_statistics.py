"""How runs of several seeds compare: the mean of a metric over seeds with a percentile bootstrap
interval, and a configuration against a baseline by the paired per-seed differences.

Seeds are few (3 to 10), so an interval is a rough guide and a verdict says only whether it
excludes no difference; with fewer than `MIN_SEEDS` seeds there is neither interval nor verdict.
Resampling is seeded, so the same numbers always give the same interval.
"""
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

MIN_SEEDS = 3
"""Below this many seeds a bootstrap interval is not meaningful (two values resample to three means)."""
CONFIDENCE = 0.90
RESAMPLES = 10_000
BETTER, WORSE = "better", "worse"


def bootstrap_interval(values: Sequence[float], resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                       seed: int = 0) -> Optional[Tuple[float, float]]:
    """The percentile bootstrap interval of the mean of `values`: `resamples` draws of len(values)
    values with replacement (numpy's default_rng(seed)), the (1 - confidence) / 2 and
    (1 + confidence) / 2 quantiles of their means; None for fewer than MIN_SEEDS values."""
    sample = np.asarray(values, dtype=np.float64)
    if len(sample) < MIN_SEEDS:
        return None
    draws = np.random.default_rng(seed).integers(0, len(sample), size=(resamples, len(sample)))
    means = sample[draws].mean(axis=1)
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def summary(values: Sequence[float], resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
            seed: int = 0) -> Dict[str, object]:
    """{"mean", "interval" ([low, high], or None below MIN_SEEDS seeds), "seeds"} of one metric."""
    interval = bootstrap_interval(values, resamples, confidence, seed)
    return {"mean": float(np.mean(values)), "interval": list(interval) if interval else None, "seeds": len(values)}


def verdict(interval: Optional[Sequence[float]], greater_is_better: bool, seeds: int) -> str:
    """"better" or "worse" when the interval of the difference (candidate − baseline) excludes 0, in
    the metric's direction; else that no difference is detectable at this many seeds, or, below
    MIN_SEEDS, that there is no verdict."""
    if interval is None:
        return f"no verdict: {seeds} seeds give no meaningful interval (at least {MIN_SEEDS} needed)"
    low, high = interval
    if low > 0 or high < 0:
        return BETTER if (low > 0) == greater_is_better else WORSE
    return f"no detectable difference at {seeds} seeds"


def paired_difference(candidate: Sequence[float], baseline: Sequence[float], greater_is_better: bool,
                      resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = 0) -> Dict[str, object]:
    """The per-seed differences candidate − baseline (lists in the same seed order) summarised as
    `summary` does, with their `verdict`."""
    if len(candidate) != len(baseline):
        raise ValueError(f"paired runs need the same seeds: {len(candidate)} and {len(baseline)} values")
    differences = np.asarray(candidate, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    found = summary(differences, resamples, confidence, seed)
    found["verdict"] = verdict(found["interval"], greater_is_better, len(differences))
    return found
