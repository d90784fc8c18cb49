"""The statistics of a comparison over seeds, against computations written out here: the percentile
bootstrap interval of a mean, and the paired difference with its verdict in the metric's direction."""
import numpy as np

from tfdialemb.eval.evaluator import get_evaluator
from tfdialemb.eval.seed_statistics import bootstrap_interval, paired_difference, summary


def _percentile(ordered, fraction):
    """Linear interpolation between order statistics (numpy's default quantile), by hand."""
    position = fraction * (len(ordered) - 1)
    below = int(position)
    return ordered[below] + (position - below) * (ordered[min(below + 1, len(ordered) - 1)] - ordered[below])


def test_the_interval_is_the_5th_and_95th_percentile_of_resampled_means():
    sample = [0.61, 0.58, 0.66, 0.63, 0.60]
    draws = np.random.default_rng(7).integers(0, len(sample), size=(2000, len(sample)))
    means = sorted(sum(sample[i] for i in row) / len(sample) for row in draws.tolist())
    low, high = bootstrap_interval(sample, resamples=2000, seed=7)
    assert abs(low - _percentile(means, 0.05)) < 1e-12 and abs(high - _percentile(means, 0.95)) < 1e-12
    assert min(sample) <= low < np.mean(sample) < high <= max(sample)
    assert bootstrap_interval(sample, resamples=2000, seed=7) == (low, high)  # seeded: reproducible


def test_fewer_than_three_seeds_give_no_interval():
    assert bootstrap_interval([0.5, 0.6]) is None
    assert summary([0.5, 0.6]) == {"mean": 0.55, "interval": None, "seeds": 2}


def test_the_paired_difference_is_read_in_the_metric_direction():
    baseline = [0.50, 0.52, 0.48, 0.51]
    candidate = [0.53, 0.56, 0.50, 0.56]  # +0.03, +0.04, +0.02, +0.05
    higher = paired_difference(candidate, baseline, greater_is_better=True)
    assert abs(higher["mean"] - 0.035) < 1e-12 and higher["verdict"] == "better"
    assert 0.02 <= higher["interval"][0] <= higher["interval"][1] <= 0.05
    assert paired_difference(candidate, baseline, greater_is_better=False)["verdict"] == "worse"
    ranks = paired_difference([2.5, 2.6, 2.4], [3.0, 3.2, 2.9], greater_is_better=False)  # a lower rank
    assert ranks["verdict"] == "better" and ranks["interval"][1] < 0
    mixed = paired_difference([0.52, 0.47, 0.49, 0.50], baseline, greater_is_better=True)
    assert mixed["interval"][0] < 0 < mixed["interval"][1]
    assert mixed["verdict"] == "no detectable difference at 4 seeds"


def test_two_seeds_give_no_verdict():
    found = paired_difference([0.9, 0.9], [0.1, 0.1], greater_is_better=True)
    assert found["interval"] is None and abs(found["mean"] - 0.8) < 1e-12
    assert found["verdict"] == "no verdict: 2 seeds give no meaningful interval (at least 3 needed)"


def test_evaluators_declare_which_metrics_are_better_lower():
    assert get_evaluator("sr").metric_greater_is_better("map")
    assert not get_evaluator("sequence_modeling").metric_greater_is_better("avg_rank_h3")
    assert get_evaluator("stp").metric_greater_is_better("hits@5")
    assert not get_evaluator("invariance").metric_greater_is_better("5nn_accuracy")
    assert not get_evaluator("dialogue").metric_greater_is_better("uniformity")
    assert not get_evaluator("fgc_similarity").metric_greater_is_better("cat_similarity")
