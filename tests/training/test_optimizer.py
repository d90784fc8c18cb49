"""The optimizer: its schedules by hand-worked values, its fused AdamW against a numpy AdamW."""
import math

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from tfdialemb.methods.spec import get_method
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer, learning_rate_schedule


def test_released_dialoguecse_optimiser_goes_with_the_released_scoring():
    """wrapper_bert.py: lr = max(5e-5 · 0.98^(step/10000), 1e-5), continuous; global-norm clip 3."""
    spec = get_method("mge")
    assert spec.optimizer_settings(spec.resolve({})) == {}
    settings = spec.optimizer_settings(spec.resolve({"mge_variant": "released"}))
    config = OptimizerConfig(learning_rate=5e-5, **settings)
    schedule = learning_rate_schedule(config, total_steps=100)
    for step, expected in ((0, 5e-5), (5000, 5e-5 * 0.98 ** 0.5), (10000, 4.9e-5), (1_000_000, 1e-5)):
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-5)
    assert create_optimizer(config, total_steps=100).global_clipnorm == 3.0


def test_released_augcl_optimiser_is_the_one_cycle_schedule():
    """mylib/learners/generic.py `one_cycle_lr` re-derived: warm-up floor(0.1 · total) steps,
    lr = max_lr · (1 - 0.45 (1 + cos(π s / w))) then max_lr · (0.1 + 0.45 (1 + cos(π (s - w) / (T - w)))),
    max_lr 1e-5; AMSGrad, weight decay on everything but biases."""
    spec = get_method("augcl")
    assert spec.optimizer_settings(spec.resolve({})) == {}
    settings = spec.optimizer_settings(spec.resolve({"augcl_optimizer": "released"}))
    config = OptimizerConfig(**{"learning_rate": 3e-6, "weight_decay": 0.01, **settings})
    schedule = learning_rate_schedule(config, total_steps=105)  # warm-up: floor(10.5) = 10 steps
    expected = {0: 1e-6, 5: 5.5e-6, 10: 1e-5, 10 + 95 / 2: 5.5e-6, 105: 1e-6,
                3: 1e-5 * (1 - 0.45 * (1 + math.cos(math.pi * 0.3)))}
    for step, value in expected.items():
        assert float(schedule(step)) == pytest.approx(value, rel=1e-5), step
    optimizer = create_optimizer(config, total_steps=105)
    assert optimizer.amsgrad
    bias, layer_norm = tf.Variable(0.0, name="dense/bias"), tf.Variable(0.0, name="layer_norm/gamma")
    assert optimizer._use_weight_decay(layer_norm) and not optimizer._use_weight_decay(bias)


def test_the_released_one_cycle_length_stops_the_run_at_0_63_of_the_peak():
    """mylib/trainers/encoder/data.py:16: 10,000 examples, 5 epochs, per-process batch 128: a cycle
    of floor(50,000 / 128) = 390 steps, while the run at 2 x 128 takes ceil(50,000 / 256) = 196. By
    hand at step 196: warm-up floor(39.0) = 39, progress (196 - 39) / 351, so lr = 1e-5 · (0.1 +
    0.45 (1 + cos(π · 157 / 351))) = 6.24e-6 (0.63 of the peak at exactly half the cycle)."""
    spec = get_method("augcl")
    params = spec.resolve({"augcl_optimizer": "released", "augcl_one_cycle_length": "released"})
    assert spec.schedule_steps(spec.resolve({}), 10_000, 5) is None
    assert spec.schedule_steps(params, 10_000, 5) == 390
    config = OptimizerConfig(**{**spec.optimizer_settings(params), "schedule_steps": 390})
    schedule = learning_rate_schedule(config, total_steps=196)
    assert float(schedule(196)) == pytest.approx(1e-5 * (0.1 + 0.45 * (1 + math.cos(math.pi * 157 / 351))), rel=1e-5)
    assert float(schedule(196)) == pytest.approx(6.24e-6, rel=1e-3)
    with pytest.raises(ValueError, match="give --num_epochs"):
        spec.schedule_steps(params, 10_000, None)


def test_the_released_batch_and_cycle_are_refused_without_their_settings():
    from tfdialemb.methods.spec import TrainingRun

    spec = get_method("augcl")
    released = spec.resolve({"augcl_batch": "released"})
    assert spec.check(released, TrainingRun("m", 256, 512, 0)) == []
    with pytest.raises(ValueError, match="2 processes of 128: give --batch_size=256, not 128"):
        spec.check(released, TrainingRun("m", 128, 512, 0))
    with pytest.raises(ValueError, match="give --augcl_optimizer=released"):
        spec.check(spec.resolve({"augcl_one_cycle_length": "released"}), TrainingRun("m", 128, 512, 0))


def test_context_response_trains_with_the_released_pairwise_trainers_one_cycle():
    """The released pairwise trainer's optimiser (mylib/learners/generic.py, max_lr 1e-5): over 50
    steps a floor(5.0) = 5-step cosine rise from 1e-6 to 1e-5, then a cosine fall back to 1e-6 at
    step 50, with AMSGrad and no decay on biases; `linear` keeps the shared flags' schedule."""
    spec = get_method("context_response")
    settings = spec.optimizer_settings(spec.resolve({}))
    config = OptimizerConfig(**{"learning_rate": 1e-5, "warmup_steps": 5, "weight_decay": 0.01, **settings})
    schedule = learning_rate_schedule(config, total_steps=50)
    for step in (0, 1, 2, 4, 5, 6, 20, 27.5, 49, 50):
        expected = (1e-5 * (1 - 0.45 * (1 + math.cos(math.pi * step / 5))) if step < 5 else
                    1e-5 * (0.1 + 0.45 * (1 + math.cos(math.pi * (step - 5) / 45))))
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-5), step
    assert (float(schedule(0)), float(schedule(5)), float(schedule(50))) == pytest.approx((1e-6, 1e-5, 1e-6))
    optimizer = create_optimizer(config, total_steps=50)
    assert optimizer.amsgrad
    bias, layer_norm = tf.Variable(0.0, name="dense/bias"), tf.Variable(0.0, name="layer_norm/gamma")
    assert optimizer._use_weight_decay(layer_norm) and not optimizer._use_weight_decay(bias)
    assert spec.optimizer_settings(spec.resolve({"context_response_optimizer": "linear"})) == {}


def _numpy_adamw(theta, m, v, grad, step, lr, weight_decay, beta_1=0.9, beta_2=0.999, epsilon=1e-8):
    """Decoupled weight decay (Loshchilov & Hutter) as tf-keras applies it, θ -= lr · wd · θ, then
    Adam's bias-corrected step in Kingma & Ba's efficient form (ε added to √v, end of Sec. 2)."""
    theta = theta - lr * weight_decay * theta
    m = beta_1 * m + (1 - beta_1) * grad
    v = beta_2 * v + (1 - beta_2) * grad ** 2
    alpha = lr * np.sqrt(1 - beta_2 ** step) / (1 - beta_1 ** step)
    return theta - alpha * m / (np.sqrt(v) + epsilon), m, v


def _summed_rows(rows, indices, shape):
    dense = np.zeros(shape)
    np.add.at(dense, indices, rows)
    return dense


def _applied(optimizer, starts, steps, indices):
    """The variables `starts` after `optimizer` applied each step's gradients; the embedding's as
    sparse rows at `indices` (a repeated row included)."""
    variables = {name: tf.Variable(start, dtype=tf.float32, name=name) for name, start in starts.items()}
    for grads in steps:
        pairs = []
        for name, grad in grads.items():
            grad = tf.constant(grad, tf.float32)
            if name.startswith("word_embeddings"):
                grad = tf.IndexedSlices(grad, tf.constant(indices), tf.constant(starts[name].shape))
            pairs.append((grad, variables[name]))
        optimizer.apply_gradients(pairs)
    return {name: variable.numpy() for name, variable in variables.items()}


def test_fused_adamw_follows_the_equations_for_dense_and_sparse_gradients():
    """Three steps of the optimizer the trainers use (the fused Adam kernel) against a numpy
    re-derivation, for a dense gradient, an embedding's gradient with a repeated row, and a bias
    kept from weight decay; tf-keras' own AdamW, a second code path, agrees too."""
    rng = np.random.default_rng(0)
    starts = {"dense/kernel": rng.normal(size=(3, 4)), "word_embeddings/embeddings": rng.normal(size=(5, 2)),
              "dense/bias": rng.normal(size=(4,))}
    indices = np.array([1, 3, 1, 0])
    steps = [{"dense/kernel": rng.normal(size=(3, 4)), "word_embeddings/embeddings": rng.normal(size=(4, 2)),
              "dense/bias": rng.normal(size=(4,))} for _ in range(3)]

    def run(optimizer):
        return _applied(optimizer, starts, steps, indices)

    config = OptimizerConfig(learning_rate=1e-2, weight_decay=0.1)
    fused = run(create_optimizer(config, total_steps=10))
    for name, start in starts.items():
        theta, m, v = start, np.zeros_like(start), np.zeros_like(start)
        for step, grads in enumerate(steps, start=1):
            grad = grads[name]
            if name.startswith("word_embeddings"):
                grad = _summed_rows(grad, indices, start.shape)
            theta, m, v = _numpy_adamw(theta, m, v, grad, step, 1e-2, 0.0 if "bias" in name else 0.1)
        np.testing.assert_allclose(fused[name], theta, rtol=1e-5, atol=1e-6, err_msg=name)
    plain = tf_keras.optimizers.AdamW(learning_rate=1e-2, weight_decay=0.1, epsilon=1e-8)
    plain.exclude_from_weight_decay(var_names=list(config.no_decay))
    for name, theta in run(plain).items():
        np.testing.assert_allclose(fused[name], theta, rtol=1e-5, atol=1e-6, err_msg=name)


def test_released_dial2vec_optimiser_is_bert_adam_over_the_examples():
    """dial2vec/optimization.py `warmup_linear` read at the step count before the update, with
    t_total = the training examples: 20 examples, peak 1e-5, warm-up 0.1 → step 0: 0 (x = 0),
    step 1: x = 0.05 → 0.5 · 1e-5, step 2: x = 0.1 → (1 − 0.1) · 1e-5, step 20: 0, step 30: −0.5 · 1e-5."""
    from tfdialemb.training.optimizer import BertAdam

    spec = get_method("dial2vec")
    assert spec.optimizer_settings(spec.resolve({})) == {} and spec.schedule_steps(spec.resolve({}), 20, 5) is None
    params = spec.resolve({"dial2vec_optimizer": "released"})
    assert spec.schedule_steps(params, 20, None) == 20
    config = OptimizerConfig(**{"learning_rate": 1e-5, **spec.optimizer_settings(params), "schedule_steps": 20})
    schedule = learning_rate_schedule(config, total_steps=7)
    for step, expected in ((0, 0.0), (1, 5e-6), (2, 9e-6), (10, 5e-6), (20, 0.0), (30, -5e-6)):
        assert float(schedule(step)) == pytest.approx(expected, abs=1e-12), step
    optimizer = create_optimizer(config, total_steps=7)
    assert isinstance(optimizer, BertAdam) and (optimizer.decay_rate, optimizer.epsilon) == (0.01, 1e-6)


def _numpy_bert_adam(theta, m, v, grad, lr, weight_decay, epsilon=1e-6, max_grad_norm=1.0, b1=0.9, b2=0.999):
    """dial2vec/optimization.py `BERTAdam.step` for one parameter: clip_grad_norm_(p, max_grad_norm)
    (the norm plus 1e-6), moments without bias correction, weight decay added to the update."""
    grad = grad * min(1.0, max_grad_norm / (np.linalg.norm(grad) + 1e-6))
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    return theta - lr * (m / (np.sqrt(v) + epsilon) + weight_decay * theta), m, v


def test_bert_adam_follows_the_released_step_for_dense_and_sparse_gradients():
    """Four steps of `BertAdam` under the released schedule against the numpy re-derivation: a
    gradient clipped (norm above 1), one not, and an embedding's sparse gradient with a repeated
    row; the bias is decayed as every variable is."""
    rng = np.random.default_rng(1)
    starts = {"dense/kernel": rng.normal(size=(3, 4)), "word_embeddings/embeddings": rng.normal(size=(5, 2)),
              "dense/bias": rng.normal(size=(4,))}
    indices = np.array([1, 3, 1, 0])
    scales = {"dense/kernel": 2.0, "word_embeddings/embeddings": 0.05, "dense/bias": 0.1}
    steps = [{name: scales[name] * rng.normal(size=(4, 2) if name.startswith("word") else starts[name].shape)
              for name in starts} for _ in range(4)]
    assert np.linalg.norm(steps[0]["dense/kernel"]) > 1 > np.linalg.norm(steps[0]["dense/bias"])
    spec = get_method("dial2vec")
    settings = spec.optimizer_settings(spec.resolve({"dial2vec_optimizer": "released"}))
    config = OptimizerConfig(**{"learning_rate": 1e-2, **settings, "schedule_steps": 8})
    trained = _applied(create_optimizer(config, total_steps=4), starts, steps, indices)
    rates = [1e-2 * (x / 0.1 if x < 0.1 else 1 - x) for x in (0 / 8, 1 / 8, 2 / 8, 3 / 8)]
    assert rates[0] == 0.0 and rates[1] == pytest.approx(8.75e-3)
    for name, start in starts.items():
        theta, m, v = start, np.zeros_like(start), np.zeros_like(start)
        for rate, grads in zip(rates, steps):
            grad = grads[name]
            if name.startswith("word_embeddings"):
                grad = _summed_rows(grad, indices, start.shape)
            theta, m, v = _numpy_bert_adam(theta, m, v, grad, rate, 0.01)
        np.testing.assert_allclose(trained[name], theta, rtol=1e-5, atol=1e-6, err_msg=name)
