"""The contract every registered method passes (keras-hub's shared test harness): trained through
the one training run, its directory describes it, `load_method` rebuilds exactly the trained model,
gradients reach exactly its trainable variables, two replicas compute what one device computes,
and a float16 mixed-precision forward pass stays finite. A new method gets these for free."""
import json

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
import tiny_bert
from tiny_corpus import TOKENIZER, corpus
from training_flags import training_flags

from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import write_dialogues
from tfdialemb.core.distribute import make_strategy
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.method_record import METHOD_CONFIG, read_method_config
from tfdialemb.methods.spec import TrainingRun, get_method, method_names
from tfdialemb.model_dir import load_method
from tfdialemb.training import cli

MAX_LENGTH = 24
BATCH = 8
METHODS = method_names()
POOLER = ("pooler",)
"""Encoder variables only the methods of READ_POOLED_OUTPUT read (the others pool the token states
themselves)."""
READ_POOLED_OUTPUT = ("mlm_nsp",)
"""BERT's next-sentence head sits on the pooled output."""


def _batch(spec, tmp_path, params, init_checkpoint, seed=0):
    """One global batch of `spec`'s training data from the tiny corpus, as the training run feeds it
    (a run started from `init_checkpoint`, the tiny BERT's directory)."""
    write_dialogues(corpus(n=40, seed=3), str(tmp_path / "train.jsonl"))
    options = BuildOptions(max_length=MAX_LENGTH, num_shards=1, seed=seed, **spec.build_options(params))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "built"),
          make_builder(spec.builder, spec.builder_params(params)), TOKENIZER, options)
    dataset = make_dataset(str(tmp_path / "built"), BATCH, training=True, seed=seed, bucket_boundaries=None)
    run = TrainingRun(init_checkpoint, BATCH, MAX_LENGTH, seed)
    return next(iter(spec.batches(dataset, TOKENIZER, params, run)))


def _model(spec, params, freeze_layers=1):
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.0, attention_dropout=0.0)
    tf.keras.utils.set_random_seed(7)
    encoder = Encoder(config).build_variables()
    encoder.freeze_bottom(freeze_layers)
    return spec.make_model(encoder, params)


def _flags(tmp_path, hf_dir):
    return training_flags(train_file=str(tmp_path / "train.jsonl"), model_dir=str(tmp_path / "model"),
                          init_checkpoint=hf_dir, freeze_layers=1, max_length=MAX_LENGTH)


@pytest.mark.parametrize("name", METHODS)
def test_trained_directory_describes_and_rebuilds_the_model(name, tmp_path, hf_safetensors_dir, monkeypatch):
    spec = get_method(name)
    params = spec.resolve()
    write_dialogues(corpus(n=40, seed=3), str(tmp_path / "train.jsonl"))
    monkeypatch.setattr(cli, "FLAGS", _flags(tmp_path, hf_safetensors_dir))
    trained = []
    make_model = spec.make_model
    monkeypatch.setattr(spec, "make_model", lambda encoder, p: trained.append(make_model(encoder, p)) or trained[-1])
    assert cli.run(spec, params) == 0

    config = read_method_config(str(tmp_path / "model"))
    on_disk = json.loads((tmp_path / "model" / METHOD_CONFIG).read_text(encoding="utf-8"))
    assert config == on_disk
    assert config["method"] == name and config["params"] == params
    assert spec.resolve(config["params"]) == params
    assert config["builder"]["method"] == spec.builder
    assert config["builder"]["params"] == make_builder(spec.builder, spec.builder_params(params)).describe()["params"]
    assert config["preprocessing"]["max_length"] == MAX_LENGTH
    assert config["preprocessing"]["special_tokens"] == TOKENIZER.special_tokens
    assert sorted(config["inference"]) == sorted(spec.offers)

    loaded = load_method(str(tmp_path / "model"))
    assert loaded.spec is spec and loaded.params == params
    trained_weights = {v.name: v.numpy() for v in trained[-1].variables}
    loaded_weights = {v.name: v.numpy() for v in loaded.model.variables}
    assert sorted(loaded_weights) == sorted(trained_weights)
    for key, value in trained_weights.items():
        np.testing.assert_array_equal(loaded_weights[key], value, err_msg=key)
    batch = _batch(spec, tmp_path / "batch", params, hf_safetensors_dir)
    expected_losses, expected_metrics = trained[-1].per_example_loss(batch, training=False)
    losses, metrics = loaded.model.per_example_loss(batch, training=False)
    np.testing.assert_allclose(losses.numpy(), expected_losses.numpy(), rtol=1e-5, atol=1e-6)
    for key, value in expected_metrics.items():
        np.testing.assert_allclose(metrics[key].numpy(), value.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", METHODS)
def test_gradients_reach_exactly_the_trainable_variables(name, tmp_path, hf_safetensors_dir):
    spec = get_method(name)
    params = spec.resolve()
    batch = _batch(spec, tmp_path, params, hf_safetensors_dir)
    model = _model(spec, params, freeze_layers=1)
    constructed = {v.name for v in model.variables}
    model.per_example_loss(batch, training=False)
    assert {v.name for v in model.variables} == constructed, "every variable exists after construction"
    frozen = {v.name for v in model.encoder.bert.get_embedding_layer().weights
              + model.encoder.bert.transformer_layers[0].weights}
    assert frozen and not frozen & {v.name for v in model.trainable_variables}
    with tf.GradientTape() as tape:
        losses, _ = model.per_example_loss(batch, training=True)
        loss = tf.reduce_mean(losses)
    grads = tape.gradient(loss, model.trainable_variables)
    reached = {v.name for g, v in zip(grads, model.trainable_variables) if g is not None}
    unused = () if name in READ_POOLED_OUTPUT else POOLER
    expected = {v.name for v in model.trainable_variables if not any(part in v.name for part in unused)}
    assert reached == expected


def _loss_and_gradients(strategy, spec, params, batch):
    """The loop's global-batch loss and its summed gradients, with `training=False` so dropout
    draws cannot differ between the replicas and one device."""
    with strategy.scope():
        model = _model(spec, params)
        model.per_example_loss(batch, training=False)
    dataset = tf.data.Dataset.from_tensors(batch)
    distributed = next(iter(strategy.experimental_distribute_dataset(dataset)))

    def step(local):
        with tf.GradientTape() as tape:
            losses, _ = model.per_example_loss(local, training=False)
            total = tf.distribute.get_replica_context().all_reduce(
                tf.distribute.ReduceOp.SUM, tf.cast(tf.shape(losses)[0], tf.float32))
            loss = tf.reduce_sum(losses) / total
        grads = tape.gradient(loss, model.trainable_variables)
        return loss, [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
                      for g, v in zip(grads, model.trainable_variables)]

    loss, grads = strategy.run(tf.function(step), args=(distributed,))
    reduce = lambda value: strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None).numpy()  # noqa: E731
    return reduce(loss), [reduce(g) for g in grads]


REPLICAS_TESTED_ELSEWHERE = {
    "dial2vec": "tests/methods/test_dial2vec_method.py compares its replicas with one device",
    "siamese_s": "siamese_m's model and loss, given one context utterance",
}
"""Methods whose two-replica check runs in the slow suite only (`--runslow`): the fast suite has
its own test of their replicas."""


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in REPLICAS_TESTED_ELSEWHERE
                                  else name for name in METHODS])
def test_two_replicas_compute_the_single_device_loss_and_gradients(name, tmp_path, two_replicas,
                                                                   hf_safetensors_dir):
    spec = get_method(name)
    params = spec.resolve()
    batch = _batch(spec, tmp_path, params, hf_safetensors_dir)
    one_loss, one_grads = _loss_and_gradients(make_strategy("default"), spec, params, batch)
    two_loss, two_grads = _loss_and_gradients(two_replicas, spec, params, batch)
    np.testing.assert_allclose(two_loss, one_loss, rtol=1e-5)
    for a, b in zip(two_grads, one_grads):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name", METHODS)
def test_mixed_float16_forward_pass_is_finite(name, tmp_path, hf_safetensors_dir):
    spec = get_method(name)
    params = spec.resolve()
    batch = _batch(spec, tmp_path, params, hf_safetensors_dir)
    tf_keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = _model(spec, params)
        losses, metrics = model.per_example_loss(batch, training=False)
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
    assert losses.dtype == tf.float32
    assert np.all(np.isfinite(losses.numpy()))
    for value in metrics.values():
        assert np.all(np.isfinite(tf.cast(value, tf.float32).numpy()))
