"""FGC's defaults do not collapse the representations; the literal reading of Eq. 3 and 5 (sums,
raw dot product of unnormalised z) does, and so does averaging with the raw dot product. A tiny BERT trained 20 steps on batches whose positive
responses repeat context tokens and whose negatives do not: with the literal reading the [CLS]
states of all pairs merge (mean pairwise cosine near 1) and CVC sits at the value of a constant
representation, log(4N - 1) per anchor; with the defaults neither happens and selection learns."""
import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.encoders import load_pretrained
from tfdialemb.methods.models.fgc import FineGrainedContrastModel
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer

CONTEXTS = 8
STEPS = 20
COLLAPSED_CLS_COSINE = 0.96
"""Above it the [CLS] states have merged; the untrained tiny BERT starts near 0.92."""
COLLAPSED_Z_COSINE = 0.9
"""Above it the projections have merged. With cosine CVC spread-out z also score near log(4N - 1)
per anchor, so the projections' own cosine tells the two apart more widely than CVC does."""


def _batch(rng, context_length=8, response_length=5):
    """Four views per context: a positive repeating context tokens, a negative of other tokens, and
    each with one token changed as its augmentation."""
    length = context_length + response_length + 3
    ids = np.zeros([CONTEXTS, 4, length], np.int32)
    segments = np.zeros_like(ids)
    for c in range(CONTEXTS):
        context = rng.integers(15, 50, context_length)
        positive, negative = rng.choice(context, response_length), rng.integers(50, 90, response_length)
        for view, response in enumerate((positive, positive.copy(), negative, negative.copy())):
            if view in (1, 3):
                response[rng.integers(response_length)] = response[rng.integers(response_length)]
            ids[c, view] = np.concatenate([[2], context, [3], response, [3]])
            segments[c, view, context_length + 2:] = 1
    return {"pair_ids": ids, "pair_mask": np.ones_like(ids), "pair_segments": segments}


def _train(checkpoint, **options):
    """The held-out batch's metrics after STEPS steps, and its CVC per anchor."""
    tf.keras.utils.set_random_seed(0)
    model = FineGrainedContrastModel(load_pretrained(checkpoint).encoder, **options)
    optimizer = create_optimizer(OptimizerConfig(learning_rate=1e-3), STEPS)
    rng = np.random.default_rng(0)

    @tf.function
    def step(batch):
        with tf.GradientTape() as tape:
            losses, _ = model.per_example_loss(batch, training=True)
            loss = tf.reduce_mean(losses)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients([(g, v) for g, v in zip(grads, model.trainable_variables) if g is not None])

    for _ in range(STEPS):
        step(_batch(rng))
    _, metrics = model.per_example_loss(_batch(np.random.default_rng(99)), training=False)
    metrics = {name: float(np.mean(value)) for name, value in metrics.items()}
    # The sum reading reports CVC summed over the 4N anchors; the mean reading its mean.
    metrics["cvc_per_anchor"] = metrics["cvc"] / (4 * CONTEXTS if options.get("reduction") == "sum" else 1)
    return metrics


@pytest.mark.parametrize("options,collapses", [
    ({}, False), ({"reduction": "sum", "cvc_similarity": "dot"}, True),
    ({"reduction": "mean", "cvc_similarity": "dot"}, True)])
def test_the_defaults_do_not_collapse_and_the_raw_dot_product_does(hf_safetensors_dir, options, collapses):
    """The defaults, the literal reading, and averaging alone (raw dot product, means)."""
    metrics = _train(hf_safetensors_dir, **options)
    constant = np.log(4 * CONTEXTS - 1)  # every z alike: each anchor's positives at 1 / (4N - 1)
    if collapses:
        assert metrics["cls_cosine"] > COLLAPSED_CLS_COSINE and metrics["z_cosine"] > COLLAPSED_Z_COSINE
        assert abs(metrics["cvc_per_anchor"] - constant) < 0.01
        assert metrics["accuracy"] == 0.5  # every pair scored alike: chance
    else:
        assert metrics["cls_cosine"] < COLLAPSED_CLS_COSINE and metrics["z_cosine"] < COLLAPSED_Z_COSINE
        assert metrics["cvc_per_anchor"] < constant - 0.02
        assert metrics["accuracy"] > 0.6
