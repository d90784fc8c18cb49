"""tf.data input pipelines over built shards: interleave, shuffle, epochs of full batches, batched
parsing, optional length bucketing, dynamic padding, prefetch, and per-worker sharding through
`tf.distribute.InputContext`.

Batches are dicts of dense int32 tensors: a "sequence" feature NAME becomes `NAME` [B, T] and
`NAME_mask` [B, T]; a "sequence_list" feature becomes `NAME` [B, N, T], `NAME_mask` [B, N, T]
(rows with no tokens are all-zero); a "dialogue_list" feature becomes `NAME`, `NAME_mask`,
`NAME_turn_ids` and `NAME_role_ids`, each [B, S, T]; a "dialogue_turns" feature becomes `NAME` and
`NAME_mask` [B, N, T] (every turn of every dialogue, no special tokens), `NAME_roles` [B, N] and
`NAME_turn_counts` [B, S] (zero past an example's turns or dialogues); an "int" feature stays [B]; a "float"
feature stays [B] and float32. T is the longest sequence of the batch, not the build's max_length.
"""
from typing import Dict, Mapping, Optional, Sequence

import tensorflow as tf

from tfdialemb.data.example_codec import parse_spec
from tfdialemb.data.records import (
    DIALOGUE_LIST, DIALOGUE_TURNS, FLOAT, INT, SEQUENCE, SEQUENCE_LIST, read_manifest, shard_paths)
from tfdialemb.text.dialogue_packing import PackedDialogues, dense_dialogues

PARSE_BATCH = 256
LENGTH_BOUNDARIES = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384)
"""The length classes of `--bucket_by_length`."""
SHUFFLE_BUFFER = 10_000
"""Examples shuffled at once in training, on top of the build's uniform order."""


def example_lengths(batch: Mapping[str, tf.Tensor], schema: Mapping[str, str]) -> tf.Tensor:
    """[B] int64: the longest token sequence of each example of a parsed (ragged) batch, the
    length it pads to; 0 for an example without tokens."""
    first = batch[next(iter(schema))]
    rows = first.nrows() if isinstance(first, tf.RaggedTensor) else tf.shape(first, out_type=tf.int64)[0]
    lengths = [tf.zeros([rows], tf.int64)]
    for name, kind in schema.items():
        if kind == SEQUENCE:
            lengths.append(batch[name].row_lengths())
        elif kind in (SEQUENCE_LIST, DIALOGUE_LIST, DIALOGUE_TURNS):
            # An example with no rows has a ragged max of int64's minimum, lifted to 0 by the zeros.
            lengths.append(tf.reduce_max(batch[name].row_lengths(axis=2), axis=1))
    return tf.reduce_max(tf.stack(lengths), axis=0)


def to_dense(batch: Mapping[str, tf.Tensor], schema: Mapping[str, str], pad_id: int = 0,
             pad_to: Optional[int] = None) -> Dict[str, tf.Tensor]:
    """Pads a batch of ragged examples to its longest sequence (or to `pad_to`)."""
    dense = {}
    for name, kind in schema.items():
        value = batch[name]
        if kind == INT:
            dense[name] = tf.cast(value, tf.int32)
            continue
        if kind == FLOAT:
            dense[name] = value
            continue
        if kind == DIALOGUE_LIST:
            packed = PackedDialogues(value, batch[f"{name}_turn_ids"], batch[f"{name}_role_ids"])
            inputs = dense_dialogues(packed, pad_id, pad_to)
            dense.update({name: inputs.ids, f"{name}_mask": inputs.mask,
                          f"{name}_turn_ids": inputs.turn_ids, f"{name}_role_ids": inputs.role_ids})
            continue
        if kind == DIALOGUE_TURNS:
            for channel in ("roles", "turn_counts"):
                dense[f"{name}_{channel}"] = tf.cast(batch[f"{name}_{channel}"].to_tensor(default_value=0), tf.int32)
        mask = tf.ones_like(value, tf.int32)
        shape = None
        if pad_to is not None:
            shape = [None, pad_to] if kind == SEQUENCE else [None, None, pad_to]
        dense[name] = tf.cast(value.to_tensor(default_value=pad_id, shape=shape), tf.int32)
        dense[f"{name}_mask"] = mask.to_tensor(default_value=0, shape=shape)
    return dense


def make_dataset(
    directory: str,
    batch_size: int,
    training: bool = True,
    input_context: Optional[tf.distribute.InputContext] = None,
    seed: Optional[int] = None,
    shuffle_buffer: int = SHUFFLE_BUFFER,
    bucket_boundaries: Optional[Sequence[int]] = None,
    pad_to: Optional[int] = None,
    repeat: bool = False,
) -> tf.data.Dataset:
    """Batches of a build directory.

    `batch_size` is global; with an `input_context` (from `distribute_datasets_from_function`)
    each input pipeline reads its own shards and yields per-replica batches.

    Training reads each pass over the shards (an epoch) in a fresh order, seeded when `seed` is
    given: the shard list shuffled, the shards interleaved, `shuffle_buffer` examples shuffled. An
    epoch is cut into full batches, its last partial batch dropped as the papers'
    `DataLoader(shuffle=True, drop_last=True)` drops it, so an epoch visits every example at most
    once and never puts one example twice in a batch. The build wrote the examples in a uniformly
    random order, so every batch is a uniform sample of the corpus, whatever the corpus' own
    order. With `repeat` the epochs follow each other; a pipeline with fewer examples than one
    batch batches across epochs instead (every batch then repeats examples).

    `bucket_boundaries` groups examples of similar length into the same batch: a speed option that
    changes the objective of every method taking its negatives from the batch (they are then of
    the example's own length class, not a sample of the corpus). Evaluation keeps file order and
    the last partial batch.
    """
    manifest = read_manifest(directory)
    schema = manifest["builder"]["schema"]
    files = shard_paths(directory, manifest)
    per_shard = manifest["counts"]["per_shard"]
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
        if input_context.num_input_pipelines > 1:
            if len(files) < input_context.num_input_pipelines:
                raise ValueError(
                    f"{directory}: {len(files)} shards cannot feed {input_context.num_input_pipelines} "
                    "input pipelines; rebuild with --num_shards at least the number of workers"
                )
            files = files[input_context.input_pipeline_id::input_context.num_input_pipelines]
            per_shard = per_shard[input_context.input_pipeline_id::input_context.num_input_pipelines]
    dataset = tf.data.Dataset.from_tensor_slices(files)
    if training:
        dataset = dataset.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(len(files), 8),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=not training or seed is not None,
    )
    spec = parse_spec(schema)

    def parse(records):
        return tf.io.parse_example(records, spec)

    if not training:
        dataset = dataset.batch(batch_size).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        dataset = dataset.repeat() if repeat else dataset
    else:
        across_epochs = repeat and sum(per_shard) < batch_size
        if across_epochs:
            dataset = dataset.repeat()
        dataset = dataset.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
        if bucket_boundaries:
            dataset = _length_buckets(dataset, parse, schema, bucket_boundaries, batch_size)
        else:
            # A batch of records parses straight into a batch of examples.
            dataset = dataset.batch(batch_size, drop_remainder=True).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        if repeat and not across_epochs:
            dataset = dataset.repeat()
    pad_id = manifest.get("pad_id", 0)
    dataset = dataset.map(lambda b: to_dense(b, schema, pad_id, pad_to), num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def _length_buckets(records: tf.data.Dataset, parse, schema: Mapping[str, str], boundaries: Sequence[int],
                    batch_size: int) -> tf.data.Dataset:
    """Full batches of parsed examples, each from one length class between `boundaries`."""
    # Bucket keys are computed on the parsed batch, in the parallel map, before it is split into
    # examples for grouping: a per-example key_func would run serially in group_by_window.
    limits = tf.constant(list(boundaries), tf.int64)

    def parse_with_bucket(batch_records):
        batch = parse(batch_records)
        lengths = example_lengths(batch, schema)
        return batch, tf.reduce_sum(tf.cast(lengths[:, tf.newaxis] > limits, tf.int64), axis=1)

    parsed = records.batch(PARSE_BATCH).map(parse_with_bucket, num_parallel_calls=tf.data.AUTOTUNE)
    return parsed.unbatch().group_by_window(
        key_func=lambda _, bucket: bucket,
        reduce_func=lambda _, window: window.batch(batch_size, drop_remainder=True).map(lambda batch, _: batch),
        window_size=batch_size,
    )
