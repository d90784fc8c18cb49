"""The context-response model's in-batch accuracy@k while training: the numpy ranking of the
model's own context and response vectors, and no accuracy@k from a batch of k or fewer pairs, where
every candidate is in the top k whatever the model."""
import numpy as np
import pytest
import tensorflow as tf
import tiny_bert

from tfdialemb.data.context_response_pairs import CONTEXT, RESPONSE
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.methods.spec import TrainingRun, get_method

LENGTH = 6


def _model():
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.0, attention_dropout=0.0)
    tf.keras.utils.set_random_seed(3)
    spec = get_method("context_response")
    return spec.make_model(Encoder(config).build_variables(), spec.resolve({"projector_dropout": 0.0}))


def _batch(pairs, seed=0):
    rng = np.random.default_rng(seed)
    contexts = rng.integers(5, 30, [pairs, 3, LENGTH]).astype(np.int32)
    context_mask = np.ones_like(contexts)
    context_mask[:, 0] = 0  # an empty first slot, as a short dialogue leaves it
    contexts[:, 0] = 0
    responses = rng.integers(5, 30, [pairs, LENGTH]).astype(np.int32)
    return {CONTEXT: tf.constant(contexts), f"{CONTEXT}_mask": tf.constant(context_mask),
            RESPONSE: tf.constant(responses), f"{RESPONSE}_mask": tf.constant(np.ones_like(responses))}


@pytest.mark.parametrize("pairs, reported", [(4, ["accuracy@1"]), (5, ["accuracy@1"]),
                                             (8, ["accuracy@1", "accuracy@5"])])
def test_accuracy_at_k_is_the_numpy_ranking_and_left_out_at_k_or_fewer_pairs(pairs, reported):
    model = _model()
    batch = _batch(pairs)
    _, metrics = model.per_example_loss(batch, training=False)
    assert sorted(metrics) == reported
    contexts = model.embed_contexts(batch[CONTEXT], batch[f"{CONTEXT}_mask"]).numpy()
    responses = model.embed_responses(batch[RESPONSE], batch[f"{RESPONSE}_mask"]).numpy()
    scores = contexts @ responses.T
    above = (scores > np.diag(scores)[:, None]).sum(axis=1)  # candidates ranked above the true one
    for name in reported:
        k = int(name.split("@")[1])
        np.testing.assert_array_equal(metrics[name].numpy(), (above < k).astype(np.float32))


def test_a_run_of_k_or_fewer_pairs_per_batch_reports_no_accuracy_at_k_from_its_open_shaped_trace():
    model = _model()
    get_method("context_response").after_build(model, {}, TrainingRun("unused", 4, LENGTH, 0))
    batch = _batch(4)
    signature = {name: tf.TensorSpec([None, *value.shape[1:]], value.dtype) for name, value in batch.items()}
    step = tf.function(lambda b: model.per_example_loss(b, training=False)[1], input_signature=[signature])
    assert sorted(step(batch)) == ["accuracy@1"]
