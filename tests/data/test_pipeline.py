"""tf.data pipelines over built shards."""
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


def test_training_batches_are_shuffled_bucketed_and_complete(built):
    eval_rows = sorted(_rows(make_dataset(str(built / "mlm"), 8, training=False)))
    dataset = make_dataset(str(built / "mlm"), 8, training=True, seed=3, bucket_boundaries=(6, 9))
    train_rows = _rows(dataset)
    assert sorted(train_rows) == eval_rows
    assert train_rows != _rows(make_dataset(str(built / "mlm"), 8, training=False))
    # Bucketing: within a batch every length falls in the same bucket.
    for batch in dataset:
        lengths = batch["input_word_ids_mask"].numpy().sum(axis=1)
        buckets = np.searchsorted([6, 9], lengths, side="left")
        assert len(set(buckets.tolist())) == 1, lengths
    assert _rows(make_dataset(str(built / "mlm"), 8, training=True, seed=3, bucket_boundaries=(6, 9))) == train_rows


def test_sequence_lists_pad_to_batch_shape(built):
    batch = next(iter(make_dataset(str(built / "mge"), 5, training=False)))
    assert batch["candidates"].shape[:2] == (5, 3)
    assert batch["context_before"].shape[0] == 5 and batch["context_before"].shape[1] <= 2
    first_turn_rows = batch["context_before_mask"].numpy()[0].sum(axis=-1)
    assert first_turn_rows.tolist() in ([0, 0], [0])  # the first response of a dialogue has no history
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
