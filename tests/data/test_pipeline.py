"""tf.data pipelines over built shards."""
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

from tiny_corpus import TOKENIZER, corpus, packed_ids as _ids
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.data.records import IncompleteBuildError
from tfdialemb.dialogue import write_dialogues


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipe")
    path = str(root / "train.jsonl")
    write_dialogues(corpus(n=40, seed=1), path)
    options = BuildOptions(max_length=24, num_shards=4, merge_consecutive_turns=False, min_turns=1)
    build(path, str(root / "mlm"), make_builder("mlm"), TOKENIZER, options)
    build(path, str(root / "mge"), make_builder("mge", {"negatives": 2, "context_before": 2,
                                                        "context_after": 2}), TOKENIZER, options)
    return root


def _rows(dataset, key="input_word_ids"):
    rows = []
    for batch in dataset:
        ids, mask = batch[key].numpy(), batch[f"{key}_mask"].numpy()
        assert ids.shape == mask.shape
        for r, m in zip(ids, mask):
            n = int(m.sum())
            assert m[:n].all() and not m[n:].any() and not r[n:].any()
            rows.append(tuple(r[:n]))
    return rows


def test_evaluation_order_reads_every_example_once(built):
    rows = _rows(make_dataset(str(built / "mlm"), batch_size=7, training=False))
    expected = [tuple(_ids(t.text, 24)) for d in corpus(n=40, seed=1) for t in d.turns]
    assert sorted(rows) == sorted(expected)


def test_training_batches_are_shuffled_full_and_bucketed_when_asked(built):
    """A training epoch is full batches of distinct examples in a new order, the partial last
    batch dropped (of each length class, with buckets); bucketed batches keep to one class."""
    eval_rows = _rows(make_dataset(str(built / "mlm"), 8, training=False))
    for buckets in (None, (6, 9)):
        dataset = make_dataset(str(built / "mlm"), 8, training=True, seed=3, bucket_boundaries=buckets)
        batches = [_rows([batch]) for batch in dataset]
        train_rows = sum(batches, [])
        assert all(len(b) == 8 for b in batches)
        assert len(eval_rows) - len(train_rows) < (8 if buckets is None else 8 * 3)
        remaining = Counter(eval_rows)
        remaining.subtract(train_rows)
        assert min(remaining.values()) >= 0  # no example more often than the corpus holds it
        assert train_rows != eval_rows[: len(train_rows)]
        assert _rows(make_dataset(str(built / "mlm"), 8, training=True, seed=3, bucket_boundaries=buckets)) == train_rows
    for batch in make_dataset(str(built / "mlm"), 8, training=True, seed=3, bucket_boundaries=(6, 9)):
        lengths = batch["input_word_ids_mask"].numpy().sum(axis=1)
        buckets = np.searchsorted([6, 9], lengths, side="left")
        assert len(set(buckets.tolist())) == 1, lengths


def test_sequence_lists_pad_to_batch_shape(built):
    batch = next(iter(make_dataset(str(built / "mge"), 5, training=False)))
    assert batch["candidates"].shape[:2] == (5, 3)
    assert batch["context_before"].shape[0] == 5 and batch["context_before"].shape[1] <= 2
    # The first response of each of the 40 dialogues has no history: all its rows are padding.
    without_history = sum(int((b["context_before_mask"].numpy().sum(axis=(1, 2)) == 0).sum())
                          for b in make_dataset(str(built / "mge"), 5, training=False))
    assert without_history == 40
    fixed = next(iter(make_dataset(str(built / "mge"), 5, training=False, pad_to=24)))
    assert fixed["candidates"].shape[-1] == 24


def test_input_context_shards_files_between_pipelines(built):
    everything = sorted(_rows(make_dataset(str(built / "mlm"), 4, training=False)))
    parts = []
    for pipeline in range(2):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline,
                                             num_replicas_in_sync=2)
        dataset = make_dataset(str(built / "mlm"), 4, training=False, input_context=context)
        assert next(iter(dataset))["input_word_ids"].shape[0] == 2  # per-replica batch
        parts.append(_rows(dataset))
    assert sorted(parts[0] + parts[1]) == everything
    too_many = tf.distribute.InputContext(num_input_pipelines=5, input_pipeline_id=0)
    with pytest.raises(ValueError, match="4 shards cannot feed 5 input pipelines"):
        make_dataset(str(built / "mlm"), 4, input_context=too_many)


def test_missing_manifest_is_refused(tmp_path):
    with pytest.raises(IncompleteBuildError):
        make_dataset(str(tmp_path), 4)
