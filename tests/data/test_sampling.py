"""The negative pool: an utterance of a uniformly drawn dialogue, in bounded memory."""
import tracemalloc

import numpy as np
import pytest

from tfdialemb.data.sampling import DialoguePool, UtterancePool


def test_a_negative_is_an_utterance_of_a_uniformly_drawn_dialogue():
    """DialogueCSE Sec. 4.1, "an utterance from a randomly selected dialogue": a 90-turn dialogue
    is one of the 9 other dialogues (1/9 of the draws), not 90 of their 98 utterances."""
    pool = DialoguePool(capacity=10, seed=0)
    pool.add(0, ["own turn"])
    pool.add(1, [f"long {i}" for i in range(90)])
    for index in range(2, 10):
        pool.add(index, [f"short {index}"])
    rng = np.random.default_rng(0)
    draws = [pool.sample(rng, 1, exclude_dialogue=0)[0] for _ in range(4000)]
    assert "own turn" not in draws
    assert abs(np.mean([text.startswith("long") for text in draws]) - 1 / 9) < 0.02
    assert len(set(draws)) > 60  # the long dialogue's utterances are all reachable
    assert pool.memory() == {"dialogues": 10, "utterances": 99, "corpus_dialogues_seen": 10,
                             "text_bytes_on_disk": len("own turn") + sum(len(f"long {i}") for i in range(90)) + 8 * 7,
                             "index_bytes_in_memory": 10 * (4 * 8 + 1)}


def test_the_reservoir_keeps_capacity_dialogues_each_equally_likely():
    kept = np.zeros(20)
    for seed in range(400):
        pool = DialoguePool(capacity=5, seed=seed)
        for index in range(20):
            pool.add(index, [f"u{index}"])
        assert pool.memory()["dialogues"] == 5 and pool.seen == 20
        kept[list(pool.dialogue_indices)] += 1
    assert np.allclose(kept / 400, 5 / 20, atol=0.08)


def test_utterance_draws_are_distinct_texts_none_of_them_excluded():
    pool = UtterancePool(capacity=100, seed=0)
    pool.add(0, ["own"])
    for index in range(1, 21):
        pool.add(index, ["ok", "thanks", f"text {index}"])
    rng = np.random.default_rng(0)
    for _ in range(50):
        drawn = pool.sample(rng, 8, exclude_dialogue=0, exclude_texts=("thanks",))
        assert len(set(drawn)) == 8 and "thanks" not in drawn and "own" not in drawn
    # 22 distinct texts of other dialogues, "thanks" excluded: 21 can be drawn, not 22.
    assert len(pool.sample(rng, 21, exclude_dialogue=0, exclude_texts=("thanks",))) == 21
    with pytest.raises(ValueError, match="too few distinct utterances"):
        pool.sample(rng, 22, exclude_dialogue=0, exclude_texts=("thanks",))


def test_the_pool_keeps_ids_and_offsets_in_memory_and_reads_texts_back():
    """20 dialogues of 40 KB of text each: the pool keeps none of the 800 KB in memory (texts go to
    its spill file), yet every draw is an utterance of another dialogue, with its role."""
    texts = {index: [f"{index}-{turn}-" + "é" * 10_000 for turn in range(2)] for index in range(20)}
    tracemalloc.start()
    try:
        pool = DialoguePool(capacity=100, seed=0)
        for index, pair in texts.items():
            pool.add(index, pair, roles=[0, 1])
            del pair
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    with pool:
        assert held < 50_000
        rng = np.random.default_rng(1)
        for _ in range(50):
            drawn = pool.sample(rng, 3, exclude_dialogue=4, role=1)
            assert len(set(drawn)) == 3
            for text in drawn:
                index, turn, _ = text.split("-", 2)
                assert int(index) != 4 and turn == "1" and text == texts[int(index)][1]
        # "é" is two UTF-8 bytes; indexes 10-19 have two digits.
        assert pool.memory()["text_bytes_on_disk"] == 40 * (len("0-0-") + 20_000) + 20
