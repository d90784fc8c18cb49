"""Crop by stages on topic dialogues, whose stages are their topic runs."""
import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering

from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.similarity_sources import UtteranceSimilarity
from topic_source import TopicSource, texts, topic_dialogue


def crop(**kwargs):
    return StageCrop(UtteranceSimilarity(TopicSource()), **kwargs)


def test_keeps_the_largest_stage_by_default():
    # 9 utterances, n fixed to 3 (min_stages 3 = 9 // 3): the runs hotel x2, taxi x5, food x2.
    dialogue = topic_dialogue("d", [("hotel", 2), ("taxi", 5), ("food", 2)], {"domain": "travel"})
    [result] = crop(min_stages=3).augment([dialogue])
    assert texts(result) == [f"taxi {k}" for k in range(2, 7)]
    assert [t.speaker for t in result.turns] == [t.speaker for t in dialogue.turns[2:7]]
    assert result.id == "d"
    assert result.labels == {"domain": "travel", "source_id": "d", "augmentations": ["crop"]}


def test_largest_stage_ties_keep_the_first_in_the_clusterings_order():
    """Three stages of 3: released keeps the one prune.py `_cut` keeps (np.argmax of the sizes of
    `_cluster`'s clusters, listed by scikit-learn label); contiguous keeps the earliest."""
    dialogue = topic_dialogue("d", [("hotel", 3), ("taxi", 3), ("food", 3)])
    operation = crop(min_stages=3)
    [(distances, _)] = operation.distances([dialogue])
    labels = AgglomerativeClustering(n_clusters=3, linkage="average", metric="precomputed").fit_predict(distances)
    clusters = [[i for i, label in enumerate(labels) if label == k] for k in range(3)]
    kept = clusters[int(np.argmax([len(c) for c in clusters]))]
    [result] = operation.augment([dialogue])
    assert texts(result) == [f"{dialogue.turns[i].text}" for i in kept] == ["food 6", "food 7", "food 8"]
    [contiguous] = crop(min_stages=3, clustering="contiguous").augment([dialogue])
    assert texts(contiguous) == ["hotel 0", "hotel 1", "hotel 2"]


def test_never_below_two_turns_and_min_kept():
    # 6 utterances -> 2 stages [0..3] and [4, 5]; keeping 1% drops one stage, whichever comes
    # first in the random visit, leaving 2 or 4 utterances; with min_kept 3 only [0..3] may stay.
    dialogue = topic_dialogue("d", [("hotel", 4), ("taxi", 2)])
    kept = {tuple(texts(crop(keep=0.01, seed=seed).augment([dialogue])[0])) for seed in range(12)}
    assert kept == {("hotel 0", "hotel 1", "hotel 2", "hotel 3"), ("taxi 4", "taxi 5")}
    for seed in range(12):
        [result] = crop(keep=0.01, min_kept=3, seed=seed).augment([dialogue])
        assert texts(result) == ["hotel 0", "hotel 1", "hotel 2", "hotel 3"]
    [short] = crop(min_kept=5).augment([topic_dialogue("s", [("hotel", 4), ("taxi", 2)])])
    assert short is None  # the largest stage (4) is under min_kept


def test_keep_fraction_drops_whole_stages_down_to_the_fraction():
    # 12 utterances, n = 4 runs of 3; keep 0.5 -> at least 6 stay: two whole runs, in order.
    runs = [("hotel", 3), ("taxi", 3), ("food", 3), ("bank", 3)]
    dialogue = topic_dialogue("d", runs)
    seen = set()
    for seed in range(10):
        [result] = crop(keep=0.5, min_stages=4, seed=seed).augment([dialogue])
        kept = texts(result)
        assert len(kept) == 6
        assert kept == sorted(kept, key=lambda text: int(text.split()[1]))
        topics = [text.split()[0] for text in kept]
        assert topics[0] == topics[2] and topics[3] == topics[5] and topics[0] != topics[3]
        seen.add(tuple(topics[::3]))
    assert len(seen) > 1


def test_short_dialogues_are_not_cropped_and_draws_are_seeded():
    short = topic_dialogue("short", [("hotel", 3), ("taxi", 2)])
    long = topic_dialogue("long", [("hotel", 4), ("taxi", 4), ("food", 4), ("bank", 3)])
    first = crop(seed=7).augment([short, long])
    assert first[0] is None and first[1] is not None
    assert crop(seed=7).augment([long]) == first[1:]  # alone or in a batch, the same draw
    assert len({tuple(texts(crop(seed=s).augment([long])[0])) for s in range(20)}) > 1


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="keep is the fraction"):
        crop(keep=1.0)
    with pytest.raises(ValueError, match="clustering must be one of"):
        crop(clustering="single")
