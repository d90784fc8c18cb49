"""dial2vec's metrics against hand-worked values and transcriptions of the released formulas."""
import collections
import warnings

import numpy as np
import pytest
import scipy.spatial.distance
import scipy.stats
from sklearn.cluster import KMeans

from tfdialemb.eval import dialogue_metrics as dm

# Five dialogues in 2-D; x4's label is shared by no other dialogue.
POINTS = np.array([[1.0, 0.0], [1.0, 0.2], [0.0, 1.0], [0.2, 1.0], [-1.0, 0.0]])
LABELS = ["a", "b", "a", "b", "c"]


def _random_set(seed, n=13, dim=5, classes=3):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % classes
    return rng.normal(size=[n, dim]) + 0.8 * np.eye(classes, dim)[labels], labels


@pytest.fixture
def small_blocks(monkeypatch):
    """Cosines computed three rows at a time, so the block loop is exercised."""
    monkeypatch.setattr(dm, "_BLOCK_ROWS", 3)


def test_purity_and_accuracy_by_hand():
    labels, clusters = ["a", "a", "a", "b", "b", "c"], [0, 0, 1, 1, 1, 2]
    assert dm.purity(labels, clusters) == pytest.approx(5 / 6)       # 2 + 2 + 1
    assert dm.cluster_accuracy(labels, clusters) == pytest.approx(5 / 6)
    # Singleton clusters are all pure, but a one-to-one map can match only 2 of them.
    assert dm.purity(["a", "a", "b", "b"], [0, 1, 2, 3]) == 1.0
    assert dm.cluster_accuracy(["a", "a", "b", "b"], [0, 1, 2, 3]) == 0.5
    # One cluster: the majority class only.
    assert dm.purity(["a", "b", "b"], [7, 7, 7]) == pytest.approx(2 / 3)
    assert dm.cluster_accuracy(["a", "b", "b"], [7, 7, 7]) == pytest.approx(2 / 3)


def test_categorization_of_given_assignments_averages_the_runs_by_hand():
    labels = ["a", "a", "a", "b", "b", "c"]
    runs = [[0, 0, 1, 1, 1, 2],            # purity 5/6, accuracy 5/6 (above)
            ["t", "t", "t", "t", "t", "t"]]  # one topic for all: purity = accuracy = 3/6, ARI = NMI = 0
    results = dm.categorization_of_assignments(labels, runs)
    assert results["purity"] == pytest.approx((5 / 6 + 3 / 6) / 2)
    assert results["purity_std"] == pytest.approx((5 / 6 - 3 / 6) / 2)
    assert results["accuracy"] == pytest.approx((5 / 6 + 3 / 6) / 2)
    assert results["runs"] == 2
    single = dm.categorization_of_assignments(labels, runs[1:])
    assert (single["ari"], single["nmi"]) == (0.0, 0.0)


def test_separated_domains_are_categorized_perfectly():
    rng = np.random.default_rng(0)
    labels = np.repeat(["x", "y", "z"], 6)
    centres = {"x": [10.0, 0.0], "y": [0.0, 10.0], "z": [-10.0, -10.0]}
    embeddings = np.array([centres[label] for label in labels]) + rng.normal(0, 0.1, [18, 2])
    results = dm.domain_categorization(embeddings, labels, runs=4, seed=3)
    assert results == pytest.approx({"purity": 1.0, "purity_std": 0.0, "ari": 1.0, "nmi": 1.0,
                                     "accuracy": 1.0, "runs": 4})


def test_domain_categorization_averages_seeded_kmeans_runs():
    embeddings, labels = _random_set(1, n=30)
    purities = []
    for run in range(5):
        clusters = KMeans(n_clusters=3, n_init=1, max_iter=500, tol=1e-5,
                          random_state=7 + run).fit_predict(embeddings)
        members = collections.defaultdict(list)
        for cluster, label in zip(clusters, labels):
            members[cluster].append(label)
        purities.append(sum(max(collections.Counter(m).values()) for m in members.values()) / 30)
    results = dm.domain_categorization(embeddings, labels, runs=5, seed=7)
    assert results["purity"] == pytest.approx(np.mean(purities))
    assert results["purity_std"] == pytest.approx(np.std(purities))


def test_released_number_of_runs():
    sizes = (10, 499, 500, 1000, 3500, 9000)
    assert [dm.released_kmeans_runs(n) for n in sizes] == [10, 10, 9, 8, 3, 3]
    embeddings, labels = _random_set(2)
    assert dm.domain_categorization(embeddings, labels, runs="released")["runs"] == 10


def test_spearman_all_pairs_by_hand():
    # Per row: others' indicators [1, 0, 0] against cosines ranked [3, 1, 2] → √3 / 2.
    points = np.array([[1.0, 0.0], [1.0, 0.2], [0.0, 1.0], [0.2, 1.0]])
    assert dm.spearman_all_pairs(points, ["a", "a", "b", "b"]) == pytest.approx(np.sqrt(3) / 2)


def _released_spearman(features, labels):
    """dial2vec/metrics.py `semantic_relatedness_precise`, transcribed."""
    same = (labels[:, None] == labels[None, :]).astype(float)
    norms = np.linalg.norm(features, axis=-1).reshape(-1, 1)
    cosines = features @ features.T / (norms @ norms.T + 1e-6)
    off_diagonal = ~np.eye(len(labels), dtype=bool)
    total = 0.0
    for i in range(len(labels)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.stats.ConstantInputWarning)
            corr = scipy.stats.spearmanr(same[i][off_diagonal[i]], cosines[i][off_diagonal[i]])[0]
        total += (0.0 if np.isnan(corr) else corr) / len(labels)
    return total


def test_spearman_all_pairs_equals_the_released_code(small_blocks):
    embeddings, labels = _random_set(3)
    labels[0] = 9   # a row whose indicators are all 0: NaN, counted as 0
    assert dm.spearman_all_pairs(embeddings, labels) == pytest.approx(
        _released_spearman(embeddings, labels), abs=1e-9)


def test_spearman_random_pairs_follows_the_documented_draw(small_blocks):
    embeddings, labels = _random_set(4)
    n = len(labels)
    rng = np.random.default_rng(11)
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    expected = []
    for _ in range(3):
        partners = (np.arange(n) + rng.integers(1, n, size=n)) % n
        assert (partners != np.arange(n)).all()
        cosines = np.sum(unit * unit[partners], axis=1)
        expected.append(scipy.stats.spearmanr(labels == labels[partners], cosines)[0])
    assert dm.spearman_random_pairs(embeddings, labels, seed=11, repeats=3) == pytest.approx(
        np.mean(expected))


def test_spearman_random_pairs_is_one_for_orthogonal_domains():
    """Same domain → cosine 1, other domain → 0: every pairing ranks perfectly."""
    labels = np.repeat([0, 1], 10)
    embeddings = np.eye(2)[labels]
    assert dm.spearman_random_pairs(embeddings, labels, seed=5, repeats=4) == pytest.approx(1.0)


def test_spearman_random_pairs_of_two_dialogues_is_undefined_hence_zero():
    assert dm.spearman_random_pairs(np.eye(2), ["a", "b"], seed=0, repeats=2) == 0.0


def test_retrieval_by_hand_with_pessimistic_ties():
    # Rows 0-3 find their one relevant dialogue at ranks 3, 2, 4 (x0 ties x4 at cosine 0 and
    # the non-relevant x4 ranks first), 2; row 4 has none.
    expected = (1 / 3 + 1 / 2 + 1 / 4 + 1 / 2) / 4
    assert dm.dialogue_retrieval(POINTS, LABELS) == pytest.approx(
        {"map": expected, "mrr": expected, "queries": 4, "queries_without_relevant": 1})


def test_retrieval_equals_the_released_code(small_blocks):
    embeddings, labels = _random_set(5)
    off_diagonal = ~np.eye(len(labels), dtype=bool)
    same = (labels[:, None] == labels[None, :])[off_diagonal].reshape(len(labels), -1)
    cosines = (embeddings @ embeddings.T
               / np.outer(*2 * [np.linalg.norm(embeddings, axis=1)]))[off_diagonal]
    cosines = cosines.reshape(len(labels), -1)
    rankings = np.argsort(np.argsort(-cosines, axis=-1), axis=-1) + 1   # `get_rankings`
    average_precisions = [np.mean(np.cumsum(row_same[row_same]) / np.sort(row_ranks[row_same]))
                          for row_same, row_ranks in zip(same, rankings)]
    first_relevant = [np.flatnonzero(row_same[np.argsort(-row_cos)])[0]
                      for row_same, row_cos in zip(same, cosines)]
    results = dm.dialogue_retrieval(embeddings, labels)
    assert results["map"] == pytest.approx(np.mean(average_precisions))
    assert results["mrr"] == pytest.approx(np.mean(1 / (np.array(first_relevant) + 1)))


def test_alignment_by_hand():
    points = np.array([[3.0, 0.0], [0.0, 0.5], [-2.0, 0.0]])   # normalised: (1,0), (0,1), (-1,0)
    labels = ["a", "a", "b"]
    # Positive pairs (0,1), (1,0): ‖·‖² = 2. Negative (0,2), (2,0): 4; (1,2), (2,1): 2 → mean 3.
    assert dm.alignment(points, labels) == pytest.approx(
        {"alignment": 2.0, "adjusted_alignment": -1.0})
    # Released: the 3 self-pairs join the positives: 4 / 5.
    assert dm.alignment(points, labels, variant="released") == pytest.approx(
        {"alignment": 0.8, "adjusted_alignment": 0.8 - 3.0})


def test_alignment_equals_a_loop_over_pairs():
    embeddings, labels = _random_set(6)
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    positive, negative = [], []
    for i in range(len(labels)):
        for j in range(len(labels)):
            if i != j:
                distance = np.sum((unit[i] - unit[j]) ** 2)
                (positive if labels[i] == labels[j] else negative).append(distance)
    assert dm.alignment(embeddings, labels) == pytest.approx(
        {"alignment": np.mean(positive),
         "adjusted_alignment": np.mean(positive) - np.mean(negative)})


def test_uniformity_by_hand():
    points = np.array([[3.0, 0.0], [0.0, 0.5], [-2.0, 0.0]])
    # Pair distances²: 2, 4, 2.
    assert dm.uniformity(points) == pytest.approx(np.log((2 * np.exp(-4) + np.exp(-8)) / 3))


def test_uniformity_equals_the_released_construction(small_blocks):
    embeddings, _ = _random_set(7)
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    released = np.mean([
        np.log(np.mean(np.exp(-2 * scipy.spatial.distance.pdist(
            np.concatenate([np.repeat(unit[i:i + 1], len(unit), axis=0), unit], axis=-1)) ** 2)))
        for i in range(len(unit))])
    assert dm.uniformity(embeddings) == pytest.approx(released)


@pytest.mark.parametrize("call, message", [
    (lambda: dm.dialogue_retrieval(np.ones(4), ["a", "b", "a", "b"]), "2-D array"),
    (lambda: dm.dialogue_retrieval(np.ones([4, 2]), ["a", "b", "a"]), "4 embeddings but 3 labels"),
    (lambda: dm.dialogue_retrieval(np.ones([3, 2]), ["a", "a", "a"]), "at least 2 distinct labels"),
    (lambda: dm.dialogue_retrieval(np.array([[np.nan, 1.0], [1.0, 1.0]]), ["a", "b"]), "NaN"),
    (lambda: dm.dialogue_retrieval(np.eye(3), ["a", "b", "c"]), "no two dialogues share"),
    (lambda: dm.alignment(np.array([[0.0, 0.0], [1.0, 0.0]]), ["a", "b"]), r"rows \[0\] are zero"),
    (lambda: dm.alignment(np.eye(2), ["a", "b"], variant="code"), "variant must be"),
    (lambda: dm.domain_categorization(np.eye(3), ["a", "b", "a"], runs=0), "runs must be"),
    (lambda: dm.domain_categorization(np.eye(3), [{"a": 1}, {}, {}]), "hashable"),
    (lambda: dm.spearman_random_pairs(np.eye(2), ["a", "b"], repeats=0), "repeats must be"),
    (lambda: dm.spearman_all_pairs(np.eye(2), ["a", "b"]), "at least 3 dialogues"),
    (lambda: dm.purity(["a", "b"], [0]), "equally long"),
    (lambda: dm.uniformity(np.ones([1, 3])), r"N ≥ 2"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
