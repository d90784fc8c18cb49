"""A fresh stateless seed for every batch of a pipeline, replayed exactly by a fresh pipeline."""
import tensorflow as tf


def map_with_batch_seeds(dataset: tf.data.Dataset, seed: int, fn) -> tf.data.Dataset:
    """Maps `fn(batch, batch_seed)` over `dataset`, `batch_seed` a [2] int64 stateless seed.

    The seed of a batch is (seed, r) with r drawn by `Dataset.random(seed,
    rerandomize_each_iteration=True)` alongside it: batches differ, every pass (a `repeat` before
    or after this map, or iterating the dataset again) draws fresh values, and a fresh pipeline
    with the same seed replays the same stream, so `skip(n)` resumes it exactly. Like the seeded
    shuffles of `make_dataset`, r also depends on `tf.random.set_seed`'s global seed when set.
    With several input pipelines, give each its own `seed`.
    """
    draws = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)

    def apply(batch, draw):
        return fn(batch, tf.stack([tf.constant(seed, tf.int64), draw]))

    return tf.data.Dataset.zip(dataset, draws).map(apply, num_parallel_calls=tf.data.AUTOTUNE)
