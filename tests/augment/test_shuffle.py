"""Shuffle by stages: every utterance once, each stage in its order, the best-scored order kept
(the unchanged one too, as released); and Chain composing shuffle with crop."""
import numpy as np
import pytest
from scipy.special import softmax

from tfdialemb.augment.base import Chain
from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.shuffle import StageShuffle, order_score
from tfdialemb.augment.similarity_sources import UtteranceSimilarity
from topic_source import TopicSource, one_hot, texts, topic_dialogue

RUNS = [("hotel", 3), ("taxi", 3), ("food", 3), ("bank", 3)]


def shuffle(**kwargs):
    return StageShuffle(UtteranceSimilarity(TopicSource()), **kwargs)


def runs_of(result):
    """The topic runs of a result as (topic, utterance numbers)."""
    runs = []
    for text in texts(result):
        name, number = text.split()
        if runs and runs[-1][0] == name:
            runs[-1][1].append(int(number))
        else:
            runs.append((name, [int(number)]))
    return runs


@pytest.mark.parametrize("search", ["best", "random"])
def test_every_utterance_once_and_each_stage_in_order(search):
    dialogue = topic_dialogue("d", RUNS, {"domain": "x"})
    orders = set()
    for seed in range(8):
        [result] = shuffle(search=search, allow_unchanged=False, seed=seed).augment([dialogue])
        assert sorted(result.turns, key=lambda t: int(t.text.split()[1])) == list(dialogue.turns)
        runs = runs_of(result)
        assert sorted(name for name, _ in runs) == sorted(name for name, _ in RUNS)  # whole stages
        original = {name: list(range(3 * k, 3 * k + 3)) for k, (name, _) in enumerate(RUNS)}
        assert all(numbers == original[name] for name, numbers in runs)  # each in its order
        assert [name for name, _ in runs] != [name for name, _ in RUNS]  # not left as it was
        assert result.labels == {"domain": "x", "source_id": "d", "augmentations": ["shuffle"]}
        orders.add(tuple(name for name, _ in runs))
    assert len(orders) > 1


def test_two_stages_may_stay_as_released_and_always_swap_when_unchanged_is_redrawn():
    dialogue = topic_dialogue("d", [("hotel", 4), ("taxi", 2)])
    for seed in range(10):
        [result] = shuffle(min_turns=6, min_stages=2, search="random", allow_unchanged=False,
                           seed=seed).augment([dialogue])
        assert texts(result) == ["taxi 4", "taxi 5", "hotel 0", "hotel 1", "hotel 2", "hotel 3"]
    kept = {tuple(texts(shuffle(min_turns=6, min_stages=2, search="random",
                                seed=seed).augment([dialogue])[0])) for seed in range(16)}
    assert tuple(texts(dialogue)) in kept and len(kept) == 2


def released_score(order_texts):
    """shuffle.py get_score: contexts (last 3, here about their last utterance) against the true
    next utterances, softmax over each row, log10 of the diagonal, mean."""
    contexts = np.stack([one_hot(order_texts[i]) for i in range(len(order_texts) - 1)])
    targets = np.stack([one_hot(t) for t in order_texts[1:]])
    logits = contexts @ targets.T
    return float(np.mean(np.log10(np.diag(softmax(logits, axis=1)))))


def test_order_score_is_the_released_one():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(5, 5))
    assert order_score(logits) == pytest.approx(np.mean(np.log10(np.diag(softmax(logits, axis=1)))))


def test_best_search_keeps_the_best_scored_candidate(monkeypatch):
    # Runs hotel, taxi, hotel, food: orders that join the two hotel runs switch topic less.
    dialogue = topic_dialogue("d", [("hotel", 3), ("taxi", 3), ("hotel", 3), ("food", 3)])
    candidates = [[3, 4, 5, 0, 1, 2, 9, 10, 11, 6, 7, 8],  # taxi hotel food hotel
                  [9, 10, 11, 0, 1, 2, 6, 7, 8, 3, 4, 5],  # food hotel hotel taxi
                  [6, 7, 8, 3, 4, 5, 9, 10, 11, 0, 1, 2]]  # hotel taxi food hotel
    scores = [released_score([dialogue.turns[i].text for i in order]) for order in candidates]
    assert int(np.argmax(scores)) == 1
    operation = shuffle()
    monkeypatch.setattr(operation, "_candidates", lambda *args: candidates)
    [result] = operation.augment([dialogue])
    assert result.turns == tuple(dialogue.turns[i] for i in candidates[1])


def test_the_unchanged_order_is_kept_when_it_scores_best(monkeypatch):
    """shuffle.py:41, 48: an order `random.shuffle` leaves as it was is a candidate, and the best
    one is kept. Stages hotel 0-2, taxi 3-5, hotel 6-8, taxi 9-11 as one dialogue of runs
    hotel-hotel-taxi-taxi: the original switches topic once, the other order three times."""
    dialogue = topic_dialogue("d", [("hotel", 6), ("taxi", 6)], {"domain": "x"})
    unchanged = list(range(12))
    candidates = [[0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11], unchanged]
    scores = [released_score([dialogue.turns[i].text for i in order]) for order in candidates]
    # By hand: among the 11 targets 5 are hotels and 6 taxis in both orders, so a hotel context's
    # softmax gives e / (5e + 6) to a hotel target and 1 / (5e + 6) to a taxi one (a taxi context
    # e / (6e + 5) and 1 / (6e + 5)). The original: 5 hotel->hotel rows, 1 hotel->taxi, 5 taxi->taxi.
    # The other: 4 hotel->hotel, 2 hotel->taxi, 4 taxi->taxi, 1 taxi->hotel.
    e = np.e
    hh, ht, tt, th = (np.log10(x) for x in (e / (5 * e + 6), 1 / (5 * e + 6), e / (6 * e + 5), 1 / (6 * e + 5)))
    assert scores == pytest.approx([(4 * hh + 2 * ht + 4 * tt + th) / 11, (5 * hh + ht + 5 * tt) / 11])
    assert scores[1] > scores[0]
    operation = shuffle()
    monkeypatch.setattr(operation, "_candidates", lambda *args: candidates)
    [result] = operation.augment([dialogue])
    assert result.turns == dialogue.turns
    assert result.labels == {"domain": "x", "source_id": "d", "augmentations": ["shuffle"]}


def test_best_search_draws_n_orders_for_every_stage_count():
    dialogue = topic_dialogue("d", [("hotel", 4), ("taxi", 4), ("food", 4), ("bank", 3)])
    operation = shuffle()
    [(distances, counts)] = operation.distances([dialogue])
    assert list(counts) == [4, 5]
    assert len(operation._candidates(distances, counts, operation.rng(dialogue))) == 4 + 5


def test_short_dialogues_are_not_shuffled_and_batches_do_not_matter():
    short = topic_dialogue("short", [("hotel", 6), ("taxi", 5)])
    long = topic_dialogue("long", RUNS + [("music", 2)])
    together = shuffle(seed=3).augment([short, long])
    assert together[0] is None
    assert shuffle(seed=3).augment([long]) == together[1:]


def test_chain_applies_shuffle_then_crop_and_records_both():
    dialogue = topic_dialogue("d", [("hotel", 3), ("taxi", 5), ("food", 4)])
    similarity = UtteranceSimilarity(TopicSource())
    first, second = StageShuffle(similarity, seed=5), StageCrop(similarity, seed=5, min_stages=4)
    [chained] = Chain([first, second]).augment([dialogue])
    [shuffled] = StageShuffle(similarity, seed=5).augment([dialogue])
    [expected] = StageCrop(similarity, seed=5, min_stages=4).augment([shuffled])
    assert chained == expected
    assert chained.labels["augmentations"] == ["shuffle", "crop"] and chained.labels["source_id"] == "d"
    start = shuffled.turns.index(chained.turns[0])  # crop kept one stage: a run of the shuffled turns
    assert shuffled.turns[start:start + len(chained.turns)] == chained.turns and len(chained.turns) < 12
    short = topic_dialogue("s", [("hotel", 4), ("taxi", 4)])
    [only_crop] = Chain([first, StageCrop(similarity, seed=5)]).augment([short])
    assert only_crop.labels["augmentations"] == ["crop"]
