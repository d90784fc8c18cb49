"""Training batches are uniform samples of the corpus, epoch after epoch, whatever its order."""
import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from tiny_corpus import TOKENIZER, corpus
from tfdialemb.data.build import SHUFFLED_ORDER, BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.external_shuffle import ExternalShuffle
from tfdialemb.data.pipeline import SHUFFLE_BUFFER, make_dataset
from tfdialemb.data.records import read_manifest
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.training.data import training_batches

SHORT_WORDS = ["hello", "good", "fine", "taxi"]
LONG_TURN = 20
"""Words per turn of a long dialogue: its examples are longer than every length class a short one
falls in."""
BLOCK = 3_000
"""Dialogues per block; the corpus' examples outnumber the training shuffle buffer."""
BATCH = 32


def _blocked_corpus():
    """BLOCK dialogues of one-word turns, then BLOCK of LONG_TURN-word turns: a corpus stored by kind."""
    rng = np.random.default_rng(0)
    for i in range(2 * BLOCK):
        words = 1 if i < BLOCK else LONG_TURN
        turns = [Turn("ab"[t % 2], " ".join(rng.choice(SHORT_WORDS, size=words))) for t in range(2)]
        yield Dialogue(f"d{i}", tuple(turns))


@pytest.fixture(scope="module")
def blocked(tmp_path_factory):
    root = tmp_path_factory.mktemp("blocked")
    path = str(root / "train.jsonl")
    write_dialogues(_blocked_corpus(), path)
    build(path, str(root / "mlm"), make_builder("mlm"), TOKENIZER,
          BuildOptions(max_length=32, num_shards=4, merge_consecutive_turns=False, min_turns=1))
    return str(root / "mlm")


def _long_counts(dataset, batches):
    """The long examples (over 8 tokens) in each of the first `batches` batches."""
    return [int((batch["input_word_ids_mask"].numpy().sum(axis=1) > 8).sum())
            for batch in itertools.islice(dataset, batches)]


def test_default_training_batches_are_uniform_samples_of_a_corpus_stored_in_blocks(blocked):
    """Each batch of the default training stream holds long examples in the corpus' share within
    hypergeometric bounds (a batch is drawn without replacement), and their spread over batches
    is the hypergeometric one; with --bucket_by_length every batch is pure."""
    examples = read_manifest(blocked)["counts"]["examples"]
    assert examples == 4 * BLOCK > SHUFFLE_BUFFER
    batches = 2 * (examples // BATCH)  # two epochs
    counts = _long_counts(training_batches(blocked, BATCH, seed=0), batches)
    population = stats.hypergeom(examples, examples // 2, BATCH)
    # Every batch within bounds that a uniform draw leaves with probability 1e-3 over all batches.
    alpha = 1e-3 / batches
    low, high = population.ppf(alpha / 2), population.isf(alpha / 2)
    assert all(low <= c <= high for c in counts), (low, high, sorted(counts)[:3], sorted(counts)[-3:])
    assert abs(np.mean(counts) - population.mean()) < 4 * population.std() / math.sqrt(batches)
    assert 0.7 < np.var(counts) / population.var() < 1.4
    bucketed = _long_counts(training_batches(blocked, BATCH, seed=0, bucket_by_length=True), batches)
    assert set(bucketed) <= {0, BATCH} and 0 < bucketed.count(BATCH) < batches


def test_the_build_writes_a_corpus_stored_in_blocks_in_a_uniform_order(blocked):
    """Every shard holds the long kind in the corpus' share (3 standard deviations of a uniform
    sample of its size): evaluation reads the shards one after another."""
    manifest = read_manifest(blocked)
    assert manifest["example_order"] == SHUFFLED_ORDER
    long = [int(b["input_word_ids_mask"].numpy().sum() > 8) for b in make_dataset(blocked, 1, training=False)]
    start = 0
    for size in manifest["counts"]["per_shard"]:
        share = np.mean(long[start: start + size])
        assert abs(share - 0.5) < 3 * math.sqrt(0.25 / size), (start, size, share)
        start += size


def _distinct_corpus(path, turns):
    """Two-turn dialogues (the last one of one turn when `turns` is odd) whose turns are all
    different texts, so each mlm example is known by its ids."""
    words = ["hello", "world", "good", "morning", "how", "are", "you", "fine", "thanks", "book"]
    texts = [" ".join(c) for c in itertools.islice(itertools.product(words, repeat=3), turns)]
    write_dialogues([Dialogue(f"d{i}", tuple(Turn("ab"[k], t) for k, t in enumerate(texts[i: i + 2])))
                     for i in range(0, turns, 2)], path)


def _ids(batch):
    ids, mask = batch["input_word_ids"].numpy(), batch["input_word_ids_mask"].numpy()
    return [tuple(row[: int(m.sum())]) for row, m in zip(ids, mask)]


@pytest.mark.parametrize("bucket", [False, True])
def test_every_epoch_visits_each_example_at_most_once_in_a_fresh_order(tmp_path, bucket):
    """53 examples in batches of 8: each epoch is 6 full batches of distinct examples (5 left out,
    as DataLoader's drop_last leaves them), a new order each epoch."""
    _distinct_corpus(str(tmp_path / "train.jsonl"), 53)
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"), make_builder("mlm"), TOKENIZER,
          BuildOptions(max_length=8, num_shards=3, merge_consecutive_turns=False, min_turns=1))
    examples = read_manifest(str(tmp_path / "built"))["counts"]["examples"]
    assert examples == 53
    stream = training_batches(str(tmp_path / "built"), 8, seed=4, bucket_by_length=bucket)
    batches = [_ids(b) for b in itertools.islice(stream, 18)]
    assert all(len(b) == 8 for b in batches)
    every = set(_ids(next(iter(make_dataset(str(tmp_path / "built"), 64, training=False)))))
    assert len(every) == 53
    # With buckets too: every example falls in one length class, so an epoch is 6 full batches.
    epochs = [sum(batches[6 * e: 6 * e + 6], []) for e in range(3)]
    for epoch in epochs:
        assert len(set(epoch)) == 48 and set(epoch) <= every
    assert epochs[0] != epochs[1] != epochs[2]
    assert len(set(epochs[0]) | set(epochs[1]) | set(epochs[2])) > 48  # another 5 left out each time


def test_a_corpus_smaller_than_a_batch_batches_across_epochs(tmp_path):
    write_dialogues(corpus(n=2, seed=0), str(tmp_path / "train.jsonl"))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"), make_builder("mlm"), TOKENIZER,
          BuildOptions(max_length=16, num_shards=1, merge_consecutive_turns=False, min_turns=1))
    examples = read_manifest(str(tmp_path / "built"))["counts"]["examples"]
    assert examples < 16
    batches = list(itertools.islice(training_batches(str(tmp_path / "built"), 16, seed=0), 3))
    assert [b["input_word_ids"].shape[0] for b in batches] == [16, 16, 16]


def test_the_external_shuffle_is_a_uniform_permutation_also_when_it_splits_again(tmp_path):
    """4 records, 2 spill files, a spill file split again once it holds over 2 records' bytes:
    over 2,400 seeds each of the 24 orders comes up as often as a uniform draw makes it
    (chi-square), every record exactly once, the same seed the same order."""
    records = [bytes([i]) * 3 for i in range(4)]  # 11 bytes each with the length header

    def order(seed):
        out = []
        with ExternalShuffle(str(tmp_path), seed, max_bytes=22, fanout=2) as shuffle:
            for record in records:
                shuffle.add(record)
            shuffle.drain(out.append)
        return tuple(records.index(r) for r in out)

    orders = Counter(order(seed) for seed in range(2400))
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders)
    assert len(orders) == 24
    assert stats.chisquare(list(orders.values())).pvalue > 1e-3
    assert order(7) == order(7)
    assert list(tmp_path.iterdir()) == []  # the spill files are gone
