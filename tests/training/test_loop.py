"""The shared training loop: checkpoints, exact resume, and replicas equal to one device."""
import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tiny_bert
from tiny_corpus import TOKENIZER, corpus
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.data.records import read_manifest
from tfdialemb.dialogue import write_dialogues
from tfdialemb.core.distribute import make_strategy
from tfdialemb.encoders import Encoder, EncoderConfig, load_pretrained
from tfdialemb.encoders.encoder import ROW_GROUPS
from tfdialemb.methods.models.base import Method
from tfdialemb.core import precision
from tfdialemb.training.loop import LoopConfig, NonFiniteError, TrainingLoop, read_best
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer


class ShrinkEmbeddings(Method):
    """Toy objective: the squared norm of each mean-pooled embedding."""

    def per_example_loss(self, batch, training):
        inputs = {"input_word_ids": batch["input_word_ids"], "input_mask": batch["input_word_ids_mask"]}
        embeddings = self.encoder.embed(inputs, training=training)
        losses = tf.reduce_sum(embeddings ** 2, axis=-1)
        return losses, {"norm": tf.sqrt(losses)}


class ShrinkDroppedEmbeddings(ShrinkEmbeddings):
    """ShrinkEmbeddings through a plain Keras Dropout of its own, besides the encoder's."""

    def __init__(self, encoder):
        super().__init__(encoder)
        self.dropout = tf_keras.layers.Dropout(0.3)

    def per_example_loss(self, batch, training):
        inputs = {"input_word_ids": batch["input_word_ids"], "input_mask": batch["input_word_ids_mask"]}
        embeddings = self.dropout(self.encoder.embed(inputs, training=training), training=training)
        losses = tf.reduce_sum(embeddings ** 2, axis=-1)
        return losses, {"norm": tf.sqrt(losses)}


class CountingTraces(ShrinkEmbeddings):
    """ShrinkEmbeddings counting its Python calls: one per trace of the training step."""

    def __init__(self, encoder):
        super().__init__(encoder)
        self.traces = 0

    def per_example_loss(self, batch, training):
        self.traces += 1
        return super().per_example_loss(batch, training)


class ShrinkThenCenter(ShrinkEmbeddings):
    """Two objectives trained in turn: ShrinkEmbeddings, then pulling the first embedding
    dimension towards 1."""

    objectives = ("main", "center")

    def objective_loss(self, objective, batch, training):
        if objective == "main":
            return self.per_example_loss(batch, training)
        inputs = {"input_word_ids": batch["input_word_ids"], "input_mask": batch["input_word_ids_mask"]}
        losses = (self.encoder.embed(inputs, training=training)[:, 0] - 1.0) ** 2
        return losses, {"center": losses}


class PoisonedFrom(ShrinkEmbeddings):
    """ShrinkEmbeddings until the batch that `numbered_batches` marks `poison_from` (the batch of
    step poison_from + 1): from there a NaN loss, or with `finite_loss` a loss of 0 whose gradient
    is NaN (the square root's at 0), so the weights go bad while the loss stays finite."""

    poison_from, finite_loss = 3, False

    def per_example_loss(self, batch, training):
        losses, metrics = super().per_example_loss(batch, training)
        poisoned = tf.cast(batch["batch_number"], tf.int64) >= self.poison_from
        if self.finite_loss:
            return tf.where(poisoned, tf.sqrt(losses * 0.0), losses), metrics
        return tf.where(poisoned, tf.fill(tf.shape(losses), float("nan")), losses), metrics


def numbered_batches(dataset):
    """Each batch with its 0-based number in the stream, per example."""
    return dataset.enumerate().map(lambda i, batch: {
        **batch, "batch_number": tf.fill(tf.shape(batch["input_word_ids"])[:1], i)})


def varying_batch_sizes(dataset):
    """The batches cut to 8, 5, 3, 8, ... examples."""
    sizes = tf.constant([8, 5, 3], tf.int64)
    return dataset.enumerate().map(lambda i, batch: {k: v[: sizes[i % 3]] for k, v in batch.items()})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("loop")
    write_dialogues(corpus(n=30, seed=2), str(root / "train.jsonl"))
    build(str(root / "train.jsonl"), str(root / "mlm"), make_builder("mlm"), TOKENIZER,
          BuildOptions(max_length=16, num_shards=2, merge_consecutive_turns=False, min_turns=1))
    return str(root / "mlm")


def _loop(strategy, built, model_dir, max_steps, batch=8, checkpoint_every=3, buckets=None, epsilon=1e-8,
          validate=None, validate_every=0, jit_compile=False, method_class=ShrinkEmbeddings,
          reshape_batches=lambda dataset: dataset, keep_best=None, dropout=0.0, record=None):
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=dropout,
                                                                         attention_dropout=dropout)

    def build_method():
        tf.keras.utils.set_random_seed(11)
        return method_class(Encoder(config).build_variables())

    def dataset_fn(context):
        return reshape_batches(make_dataset(built, batch, training=True, input_context=context, seed=5,
                                            repeat=True, bucket_boundaries=buckets))

    loop_config = LoopConfig(model_dir=str(model_dir), max_steps=max_steps,
                             optimizer=OptimizerConfig(learning_rate=1e-3, epsilon=epsilon),
                             checkpoint_every=checkpoint_every,
                             log_every=1, validate_every=validate_every, jit_compile=jit_compile,
                             keep_best=keep_best)
    return TrainingLoop(strategy, build_method, dataset_fn, TOKENIZER, loop_config, validate, record=record)


def _weights(loop):
    return [v.numpy() for v in loop.method.encoder.trainable_variables]


def _saved_tensors(model_dir):
    """Every tensor of the newest checkpoint of `model_dir` (weights, optimizer slots, step, the
    dropout generator's state), but the save counter."""
    reader = tf.train.load_checkpoint(str(model_dir))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if "save_counter" not in name and not name.startswith("_CHECKPOINTABLE_OBJECT_GRAPH")}


def test_trains_checkpoints_and_loads_as_a_checkpoint(built, tmp_path):
    loop = _loop(make_strategy("default"), built, tmp_path / "m", max_steps=7)
    first = loop.run()
    assert first["step"] == 7 and first["norm"] > 0
    names = sorted(n for n in os.listdir(tmp_path / "m") if n.endswith(".index"))
    assert names == ["ckpt-3.index", "ckpt-6.index", "ckpt-7.index"]
    assert os.path.isdir(tmp_path / "m" / "train")  # TensorBoard events
    reloaded = load_pretrained(str(tmp_path / "m"))
    for a, b in zip(reloaded.encoder.trainable_variables, loop.method.encoder.trainable_variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def _assert_dropout_drawn_from_the_checkpointed_generator(loop):
    """Every dropout layer of the method draws from the loop's generator: the method's own, BERT's
    embedding dropout and per block the attention probabilities', attention output's and output's
    at a positive rate (and Model Garden's feed-forward one at rate 0)."""
    dropouts = [m for m in loop.method._flatten_layers() if isinstance(m, tf_keras.layers.Dropout)]
    assert all(m.seed_generator is loop.dropout_seeds for m in dropouts)
    assert sum(m.rate > 0 for m in dropouts) == 2 + 3 * 2


def test_resume_continues_exactly_where_it_stopped(built, tmp_path):
    """With dropout on (BERT's at 0.1, the method's own Keras Dropout at 0.3), stopped at step 5
    and resumed to 8, the run saves bit for bit every tensor of a run that went straight to 8:
    weights, optimizer slots, step and the dropout generator's state."""
    def loop(name, max_steps):
        return _loop(make_strategy("default"), built, tmp_path / name, max_steps=max_steps, buckets=(6, 9),
                     dropout=0.1, method_class=ShrinkDroppedEmbeddings)

    straight = loop("straight", 8)
    _assert_dropout_drawn_from_the_checkpointed_generator(straight)
    straight.run()
    loop("resumed", 5).run()
    resumed = loop("resumed", 8)
    assert resumed.restore() == 5
    assert resumed.run()["step"] == 8
    expected, got = _saved_tensors(tmp_path / "straight"), _saved_tensors(tmp_path / "resumed")
    assert sorted(got) == sorted(expected) and any(name.startswith("dropout_seeds/") for name in got)
    for name, value in expected.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    assert _loop(make_strategy("default"), built, tmp_path / "resumed", max_steps=8, dropout=0.1,
                 method_class=ShrinkDroppedEmbeddings).run()["step"] == 8


def test_resume_across_an_epoch_boundary_continues_exactly(built, tmp_path):
    """Uniform batches (the default): stopped two steps before the first epoch ends and resumed
    three steps into the second, whose order is drawn afresh, the run saves bit for bit every
    tensor of a run that went straight there."""
    epoch = read_manifest(built)["counts"]["examples"] // 8

    def loop(name, max_steps):
        return _loop(make_strategy("default"), built, tmp_path / name, max_steps=max_steps, dropout=0.1,
                     method_class=ShrinkDroppedEmbeddings, checkpoint_every=100)

    loop("straight", epoch + 3).run()
    loop("resumed", epoch - 2).run()
    assert loop("resumed", epoch + 3).run()["step"] == epoch + 3
    expected, got = _saved_tensors(tmp_path / "straight"), _saved_tensors(tmp_path / "resumed")
    assert sorted(got) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_a_checkpoint_without_the_dropout_state_resumes_with_a_warning(built, tmp_path, caplog):
    """As one saved before the dropout generator was checkpointed: everything else is restored."""
    saved = _loop(make_strategy("default"), built, tmp_path / "m", max_steps=4, dropout=0.1)
    saved.step.assign(2)
    saved.method.encoder.trainable_variables[0].assign_add(tf.ones_like(saved.method.encoder.trainable_variables[0]))
    tf.train.CheckpointManager(tf.train.Checkpoint(encoder=saved.method.encoder, model=saved.method,
                                                   optimizer=saved.optimizer, step=saved.step),
                               str(tmp_path / "m"), max_to_keep=1).save(checkpoint_number=2)
    resumed = _loop(make_strategy("default"), built, tmp_path / "m", max_steps=4, dropout=0.1)
    with caplog.at_level("WARNING"):
        assert resumed.restore() == 2
    assert "holds no dropout state: the dropout masks from here on differ" in caplog.text
    for a, b in zip(_weights(resumed), _weights(saved)):
        np.testing.assert_array_equal(a, b)


def test_the_run_is_recorded_once_its_checkpoint_is_restored_and_steps_remain(built, tmp_path):
    from tfdialemb.encoders import CheckpointError

    records = []
    strategy = make_strategy("default")
    _loop(strategy, built, tmp_path / "m", max_steps=3, record=lambda: records.append("first")).run()
    _loop(strategy, built, tmp_path / "m", max_steps=3, record=lambda: records.append("finished")).run()
    with pytest.raises(CheckpointError, match="does not hold this run's model"):
        _loop(strategy, built, tmp_path / "m", max_steps=4, method_class=ShrinkThenCenter,
              record=lambda: records.append("refused")).run()
    _loop(strategy, built, tmp_path / "m", max_steps=4, record=lambda: records.append("resumed")).run()
    assert records == ["first", "resumed"]


def test_one_trace_serves_the_first_step_and_every_batch_shape(built, tmp_path):
    """The optimizer's slots exist before the first step (made inside it, they would trace it
    twice), and the step takes its batch from the iterator, whose spec leaves shapes open."""
    loop = _loop(make_strategy("default"), built, tmp_path / "m", max_steps=4, buckets=(6, 9),
                 method_class=CountingTraces, reshape_batches=varying_batch_sizes)
    shapes = [tuple(batch["input_word_ids"].shape) for batch in loop.dataset_fn(None).take(4)]
    assert len({size for size, _ in shapes}) == 3 and len({length for _, length in shapes}) > 1, shapes
    assert loop.run()["step"] == 4
    assert loop.method.traces == 1


def test_xla_compiled_step_equals_the_plain_step(built, tmp_path):
    """Epsilon 1, as in test_two_replicas_train_like_one_device: the updates then measure the
    gradients, not the sign of their rounding."""
    plain = _loop(make_strategy("default"), built, tmp_path / "plain", max_steps=2, epsilon=1.0)
    plain_scalars = plain.run()
    compiled = _loop(make_strategy("default"), built, tmp_path / "xla", max_steps=2, epsilon=1.0, jit_compile=True)
    compiled_scalars = compiled.run()
    # XLA compiles fixed shapes: the encoder takes each batch's rows in one call.
    assert (compiled.method.encoder.row_groups, plain.method.encoder.row_groups) == (1, ROW_GROUPS)
    assert compiled.method.encoder.fixed_shapes and not plain.method.encoder.fixed_shapes
    np.testing.assert_allclose(compiled_scalars["loss"], plain_scalars["loss"], rtol=1e-5)
    for a, b in zip(_weights(compiled), _weights(plain)):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_objectives_train_in_turn_each_with_its_own_optimizer(built, tmp_path):
    """The released triple-encoders schedule: each step, one objective's AdamW update, then the
    next objective's on the updated weights; recomputed here with two optimizers by hand."""
    loop = _loop(make_strategy("default"), built, tmp_path / "m", max_steps=2, method_class=ShrinkThenCenter)
    assert loop.run()["step"] == 2
    by_hand = _loop(make_strategy("default"), built, tmp_path / "hand", max_steps=2, method_class=ShrinkThenCenter)
    method = by_hand.method
    optimizers = {name: create_optimizer(OptimizerConfig(learning_rate=1e-3), 2) for name in method.objectives}
    for batch in by_hand.dataset_fn(None).take(2):
        for name in method.objectives:
            with tf.GradientTape() as tape:
                losses, _ = method.objective_loss(name, batch, training=True)
                loss = tf.reduce_mean(losses)
            grads = tape.gradient(loss, method.trainable_variables)
            optimizers[name].apply_gradients([(g, v) for g, v in zip(grads, method.trainable_variables)
                                              if g is not None])
    for a, b in zip(_weights(loop), _weights(by_hand)):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert "optimizer_center" in {name for name, _ in tf.train.list_variables(str(tmp_path / "m" / "ckpt-2"))
                                  for name in [name.split("/")[0]]}


def test_xla_is_refused_for_cpu_replicas(built, tmp_path, two_replicas):
    with pytest.raises(ValueError, match="jit_compile needs one device or GPU replicas"):
        _loop(two_replicas, built, tmp_path / "m", max_steps=1, jit_compile=True)


def test_mixed_bfloat16_steps_are_finite_and_near_float32(built, tmp_path, restore_precision):
    reference = _loop(make_strategy("default"), built, tmp_path / "float32", max_steps=2).run()
    precision.apply("mixed_bfloat16")
    mixed = _loop(make_strategy("default"), built, tmp_path / "bfloat16", max_steps=2)
    assert mixed.method.encoder.compute_dtype == "bfloat16"
    scalars = mixed.run()
    assert np.isfinite(scalars["loss"])
    np.testing.assert_allclose(scalars["loss"], reference["loss"], rtol=1e-2)
    assert all(v.dtype == tf.float32 for v in mixed.method.trainable_variables)


def test_mixed_float16_scales_the_loss_and_resumes_exactly(built, tmp_path, restore_precision):
    """The first steps overflow at the initial loss scale and are skipped, halving it each time.
    The scale is checkpointed, so the steps after a resume at step 6 are applied as in the
    uninterrupted run, where a scale restarted at its initial value would skip them."""
    precision.apply("mixed_float16")
    straight = _loop(make_strategy("default"), built, tmp_path / "straight", max_steps=8)
    assert isinstance(straight.optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
    initial_scale = float(straight.optimizer.loss_scale)
    straight.run()
    assert float(straight.optimizer.loss_scale) < initial_scale
    interrupted = _loop(make_strategy("default"), built, tmp_path / "resumed", max_steps=6)
    interrupted.run()
    resumed = _loop(make_strategy("default"), built, tmp_path / "resumed", max_steps=8)
    resumed.run()
    assert any(not np.array_equal(a, b) for a, b in zip(_weights(resumed), _weights(interrupted)))
    for a, b in zip(_weights(resumed), _weights(straight)):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_resume_under_two_replicas_skips_two_batches_per_step(built, tmp_path, two_replicas):
    """One input pipeline feeds both replicas, so each step consumed two of its batches; each
    replica draws its own dropout masks from the checkpointed generator, so the resumed run saves
    every tensor of the straight one."""
    def loop(name, max_steps):
        return _loop(two_replicas, built, tmp_path / name, max_steps=max_steps, epsilon=1.0, dropout=0.1,
                     method_class=ShrinkDroppedEmbeddings)

    loop("straight", 4).run()
    loop("resumed", 2).run()
    assert loop("resumed", 4).run()["step"] == 4
    expected, got = _saved_tensors(tmp_path / "straight"), _saved_tensors(tmp_path / "resumed")
    assert sorted(got) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_two_replicas_train_like_one_device(built, tmp_path, two_replicas):
    """Global batch 8: two replicas of 4 each vs one device of 8, same examples in the same order.

    Adam's first steps move every weight by about ±lr whatever its gradient's size, so for
    gradients that are zero up to float32 rounding (whose last bits differ between the two
    summation orders) the sign of the rounding would decide the update. Epsilon 1 makes the
    update proportional to the gradient, so the comparison measures the all-reduced gradients.
    """
    one = _loop(make_strategy("default"), built, tmp_path / "one", max_steps=2, epsilon=1.0)
    one_scalars = one.run()
    two = _loop(two_replicas, built, tmp_path / "two",
                max_steps=2, epsilon=1.0)
    two_scalars = two.run()
    np.testing.assert_allclose(two_scalars["loss"], one_scalars["loss"], rtol=1e-5)
    for a, b in zip(_weights(two), _weights(one)):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_validation_hook_runs_every_n_steps_with_the_current_model(built, tmp_path):
    calls = []

    def validate(method, step):
        calls.append((step, float(method.encoder.trainable_variables[0].numpy().sum())))
        return {"score": float(step)}

    _loop(make_strategy("default"), built, tmp_path / "v", max_steps=5, validate=validate, validate_every=2).run()
    assert [step for step, _ in calls] == [2, 4]
    assert calls[0][1] != calls[1][1]  # the weights moved between validations
    history = tmp_path / "v" / "validation.jsonl"
    assert [json.loads(line) for line in history.read_text().splitlines()] == [
        {"step": 2, "score": 2.0}, {"step": 4, "score": 4.0}]
    # A validation logged after the last checkpoint (a crash in between) is run again on resume,
    # so the restart forgets it instead of recording the step twice.
    with open(history, "a", encoding="utf-8") as f:
        f.write(json.dumps({"step": 6, "score": 6.0}) + "\n")
    _loop(make_strategy("default"), built, tmp_path / "v", max_steps=5, validate=validate, validate_every=2).run()
    assert [json.loads(line)["step"] for line in history.read_text().splitlines()] == [2, 4]


@pytest.mark.slow
def test_mge_under_two_replicas_trains_like_one_device(tmp_path, two_replicas):
    """The DialogueCSE model itself: loss and updated weights of 2 x 4 examples vs 1 x 8 (the fast
    suite checks its loss and gradients on two replicas in tests/methods/test_method_contract.py)."""
    from tfdialemb.methods.models.mge import MatchingGuidedEmbeddingModel

    write_dialogues(corpus(n=20, seed=6), str(tmp_path / "train.jsonl"))
    build(str(tmp_path / "train.jsonl"), str(tmp_path / "mge"),
          make_builder("mge", {"negatives": 3, "context_before": 2, "context_after": 2}), TOKENIZER,
          BuildOptions(max_length=12, num_shards=2, merge_consecutive_turns=False, min_turns=1))
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(hidden_dropout=0.0, attention_dropout=0.0)

    def run(strategy, name):
        def build_method():
            tf.keras.utils.set_random_seed(11)
            return MatchingGuidedEmbeddingModel(Encoder(config).build_variables(), turns=2, negatives=3)

        loop = TrainingLoop(
            strategy, build_method,
            lambda context: make_dataset(str(tmp_path / "mge"), 8, training=True, input_context=context, seed=5,
                                         repeat=True, bucket_boundaries=None),
            TOKENIZER, LoopConfig(model_dir=str(tmp_path / name), max_steps=2,
                                  optimizer=OptimizerConfig(learning_rate=1e-3, epsilon=1.0)))
        return loop.run(), [v.numpy() for v in loop.method.trainable_variables]

    one_scalars, one_weights = run(make_strategy("default"), "one")
    two_scalars, two_weights = run(two_replicas, "two")
    np.testing.assert_allclose(two_scalars["loss"], one_scalars["loss"], rtol=1e-5)
    for a, b in zip(two_weights, one_weights):
        np.testing.assert_allclose(a, b, atol=1e-5)


def _all_finite(checkpoint_prefix):
    reader = tf.train.load_checkpoint(checkpoint_prefix)
    floats = [name for name, dtype in reader.get_variable_to_dtype_map().items() if dtype.is_floating]
    return bool(floats) and all(np.isfinite(reader.get_tensor(name)).all() for name in floats)


class FiniteLossNanGradient(PoisonedFrom):
    poison_from, finite_loss = 1, True


@pytest.mark.parametrize("method_class, checkpoint_every, stopped, kept", [
    # The batch of step 4 gives a NaN loss: ckpt-2 is the last saved.
    (PoisonedFrom, 2, r"step 4: the loss is nan", 2),
    # Step 2's loss is 0 but its gradient NaN: the weights go bad, step 2 is not saved.
    (FiniteLossNanGradient, 1, r"step 2: \d+ variables hold NaN or infinite values .*", 1),
])
def test_non_finite_training_stops_naming_the_step_and_the_last_good_checkpoint(
        built, tmp_path, method_class, checkpoint_every, stopped, kept):
    model_dir = tmp_path / "run"
    loop = _loop(make_strategy("default"), built, model_dir, max_steps=8, checkpoint_every=checkpoint_every,
                 method_class=method_class, reshape_batches=numbered_batches)
    with pytest.raises(NonFiniteError, match=rf"^{stopped}; training stopped without saving this step\. "
                                             rf"The last good checkpoint is {model_dir}/ckpt-{kept} "):
        loop.run()
    assert sorted(n for n in os.listdir(model_dir) if n.endswith(".index")) == [f"ckpt-{kept}.index"]
    assert _all_finite(str(model_dir / f"ckpt-{kept}"))


def test_a_nan_validation_is_written_as_null_and_never_kept_as_the_best(built, tmp_path):
    scores = {2: float("nan"), 4: 0.25, 6: float("nan")}
    model_dir = tmp_path / "best_nan"
    _loop(make_strategy("default"), built, model_dir, max_steps=6, validate=lambda method, step: {"map": scores[step]},
          validate_every=2, keep_best=("map", "max")).run()
    history = [json.loads(line) for line in (model_dir / "validation.jsonl").read_text().splitlines()]
    assert history == [{"step": 2, "map": None}, {"step": 4, "map": 0.25}, {"step": 6, "map": None}]
    assert read_best(str(model_dir)) == {"step": 4, "metric": "map", "value": 0.25, "better": "max"}


def test_a_checkpoint_that_does_not_fit_on_the_disk_leaves_no_staged_shards(built, tmp_path, monkeypatch):
    from tfdialemb.core.files import OutputError

    loop = _loop(make_strategy("default"), built, tmp_path / "m", max_steps=1, checkpoint_every=100)

    def fill_the_disk(checkpoint_number):
        staged = tmp_path / "m" / f"ckpt-{checkpoint_number}_temp"
        staged.mkdir()
        (staged / "part-00000-of-00001.data-00000-of-00001.tempstate123").write_bytes(bytes(1000))
        raise tf.errors.UnknownError(None, None, f"{staged}/part-00000-of-00001.data-00000-of-00001.tempstate123; "
                                                 "No space left on device")

    monkeypatch.setattr(loop.manager, "save", fill_the_disk)
    with pytest.raises(OutputError) as error:
        loop.run()
    assert str(error.value) == f"{tmp_path / 'm' / 'ckpt-1'}: cannot write there: no space left on device"
    assert not os.path.exists(tmp_path / "m" / "ckpt-1_temp")
