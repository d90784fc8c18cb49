"""Per-batch stateless seeds: fresh on every pass, replayed exactly by a fresh pipeline, so a
resumed run (which skips the batches it has trained on) continues the same augmentation stream."""
import tensorflow as tf

from tfdialemb.data.batch_seeds import map_with_batch_seeds


def _seeds(dataset):
    return [tuple(s.numpy().tolist()) for _, s in dataset]


def test_passes_differ_and_a_fresh_pipeline_skipping_n_batches_continues_the_stream():
    def pipeline():
        batches = tf.data.Dataset.range(4).batch(1).repeat(2)
        return map_with_batch_seeds(batches, 7, lambda batch, seed: (batch, seed))

    stream = _seeds(pipeline())
    assert len(set(stream)) == len(stream)  # every batch, in both passes, has its own seed
    assert all(seed[0] == 7 for seed in stream)
    assert _seeds(pipeline().skip(5)) == stream[5:]
    assert _seeds(pipeline()) == stream
