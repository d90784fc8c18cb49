"""MGE (DialogueCSE Eq. 3-4, pooling, Eq. 5-7, sim of Eq. 8) against numpy re-derivations."""
import numpy as np
import pytest

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf
import tf_keras

from tfdialemb.layers.matching_guided_embedding import (
    MatchingGuidedEmbedding, matching_matrix, refine)
from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent

A, LC, LR, H, HIDDEN = 3, 4, 5, 8, 6
# Paper inputs, R = 3. row 0: all turns; row 1: a padded middle turn (no tokens); row 2: one valid
# turn, fewer than R.
TURN_LENGTHS = [[3, 2, 4], [2, 0, 3], [4, 0, 0]]
TURN_MASK = np.array([[1, 1, 1], [1, 0, 1], [1, 0, 0]], np.float32)
CANDIDATE_LENGTHS = [[5, 3, 4], [2, 5, 1], [4, 4, 2]]
# Released inputs, R = 2 preceding + 2 following. Padded rounds carry one token ([CLS]) as the
# released code needs; row 2 has no following turn, so its following α is uniform, as released.
RELEASED_TURN_LENGTHS = [[3, 2, 4, 1], [1, 2, 3, 4], [4, 3, 1, 1]]
RELEASED_TURN_MASK = np.array([[1, 1, 1, 0], [0, 1, 1, 1], [1, 1, 0, 0]], np.float32)


def _mask(lengths, size):
    return (np.arange(size) < np.array(lengths)[..., None]).astype(np.float32)


def _inputs(turn_lengths=TURN_LENGTHS, seed=0):
    rng = np.random.default_rng(seed)
    batch, turns = np.array(turn_lengths).shape
    context = rng.normal(size=(batch, turns, LC, H)).astype(np.float32)
    candidates = rng.normal(size=(batch, A, LR, H)).astype(np.float32)
    return (context, _mask(turn_lengths, LC), candidates,
            _mask(CANDIDATE_LENGTHS[:batch], LR))


def _call(layer, context, context_mask, turn_mask, candidates, candidate_mask):
    return layer(context, context_mask, turn_mask, candidates, candidate_mask).numpy()


def _cos(x, y):
    norms = np.linalg.norm(x) * np.linalg.norm(y)
    return 0.0 if norms == 0 else float(x @ y / norms)


def _randomise_weights(layer, seed=1):
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.normal(scale=0.5, size=w.shape).astype(np.float32)
                       for w in layer.get_weights()])
    return layer.get_weights()


def _np_paper(context, context_mask, turn_mask, candidates, candidate_mask, aggregation, tau,
              ffn=None):
    """Eq. 3-7 on the valid tokens only: pool each R̂_i over its context tokens, fuse, cos / τ."""
    batch, turns = turn_mask.shape
    out = np.zeros((batch, A))
    for b in range(batch):
        for a in range(A):
            r_bar = candidates[b, a][candidate_mask[b, a] > 0].astype(np.float64)
            pooled = []
            for i in range(turns):
                if not turn_mask[b, i]:
                    continue
                u_bar = context[b, i][context_mask[b, i] > 0].astype(np.float64)
                r_hat = (u_bar @ r_bar.T / np.sqrt(H)) @ r_bar  # Eq. 3, Eq. 4
                pooled.append(r_hat.mean(axis=0) if len(u_bar) else np.zeros(H))
            if not pooled:
                aware = np.zeros(H)
            elif aggregation == "i2":
                aware = np.mean(pooled, axis=0)  # Eq. 7
            else:
                w1, b1, w2, b2 = ffn
                scores = np.array([(np.maximum(p @ w1 + b1, 0.0) @ w2 + b2)[0] for p in pooled])
                alpha = np.exp(scores - scores.max())
                alpha /= alpha.sum()  # Eq. 6
                aware = sum(x * p for x, p in zip(alpha, pooled))  # Eq. 5
            out[b, a] = _cos(r_bar.mean(axis=0), aware) / tau
    return out


def _np_released_tf1(context, context_mask, turn_mask, candidates, candidate_mask, weights,
                     preceding, guard=False):
    """Numpy port of dialogue-cse model/dse_cl_bert.py CLBERT.forward (bidirectional)."""
    w, bias, u = (x.astype(np.float64) for x in weights)
    u_all = context.astype(np.float64) * context_mask[..., None]
    r_all = candidates.astype(np.float64) * candidate_mask[..., None]
    free = r_all.sum(2) / (candidate_mask.sum(2)[..., None] + 1e-6)

    def direction(u_dir, mask_dir, rounds_mask):
        # The TF1 code pads every turn to max_seq_len = 100 and reduce_means over all positions.
        padded = np.pad(u_dir, [(0, 0), (0, 0), (0, 100 - u_dir.shape[2]), (0, 0)])
        vu = np.tanh(padded.mean(axis=2) @ w + bias) @ u[:, 0]
        vu = np.where(rounds_mask > 0, vu, -2.0**32 + 1)
        score = np.exp(vu - vu.max(-1, keepdims=True))
        score /= score.sum(-1, keepdims=True)
        features = []
        for i in range(u_dir.shape[1]):
            tiled = np.repeat(u_dir[:, i:i + 1], A, axis=1)
            matching = np.matmul(tiled, r_all.transpose(0, 1, 3, 2)) * 0.1
            features.append(np.matmul(matching, r_all))
        with np.errstate(invalid="ignore"):
            pooled = np.stack(features, 2).sum(3) / mask_dir.sum(-1)[:, None, :, None]
        if guard:
            pooled = np.nan_to_num(pooled)
        return pooled * (1.0 + score[:, None, :, None])

    split = [slice(0, preceding), slice(preceding, None)]
    aware = sum(direction(u_all[:, s], context_mask[:, s], turn_mask[:, s]) for s in split)
    aware = aware.sum(2)
    cos = (free * aware).sum(-1) / (np.linalg.norm(free, axis=-1) * np.linalg.norm(aware, axis=-1))
    return cos / 0.1


@pytest.mark.parametrize("scale", [1 / np.sqrt(H), 0.1])
def test_matching_matrix_is_eq3(scale):
    context, _, candidates, _ = _inputs()
    got = matching_matrix(context, candidates, scale).numpy()
    assert got.shape == (3, A, 3, LC, LR)
    expected = np.zeros(got.shape)
    for b, a, i, c, j in np.ndindex(*got.shape):
        expected[b, a, i, c, j] = scale * sum(
            context[b, i, c, h] * candidates[b, a, j, h] for h in range(H))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_refine_is_eq4_without_padded_candidate_tokens():
    context, _, candidates, candidate_mask = _inputs()
    matching = np.random.default_rng(2).normal(size=(3, A, 3, LC, LR)).astype(np.float32)
    got = refine(matching, candidates, candidate_mask).numpy()
    expected = np.zeros((3, A, 3, LC, H))
    for b, a, i, c in np.ndindex(3, A, 3, LC):
        for j in range(LR):
            if candidate_mask[b, a, j]:
                expected[b, a, i, c] += matching[b, a, i, c, j] * candidates[b, a, j]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_paper_i2_matches_numpy():
    inputs = _inputs()
    layer = MatchingGuidedEmbedding(aggregation="i2", temperature=0.2)
    got = _call(layer, inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3])
    expected = _np_paper(inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3], "i2", 0.2)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_paper_i1_matches_numpy():
    context, context_mask, candidates, candidate_mask = _inputs()
    layer = MatchingGuidedEmbedding(aggregation="i1", hidden_size=HIDDEN)
    _call(layer, context, context_mask, TURN_MASK, candidates, candidate_mask)
    ffn = _randomise_weights(layer)
    got = _call(layer, context, context_mask, TURN_MASK, candidates, candidate_mask)
    expected = _np_paper(context, context_mask, TURN_MASK, candidates, candidate_mask, "i1", 0.1,
                         ffn)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def _released_layer(inputs, turn_mask):
    layer = MatchingGuidedEmbedding(variant="released", hidden_size=HIDDEN, num_preceding_turns=2)
    _call(layer, inputs[0], inputs[1], turn_mask, inputs[2], inputs[3])
    return layer, _randomise_weights(layer)


def test_released_matches_a_port_of_the_tf1_forward():
    inputs = _inputs(RELEASED_TURN_LENGTHS)
    layer, weights = _released_layer(inputs, RELEASED_TURN_MASK)
    got = _call(layer, inputs[0], inputs[1], RELEASED_TURN_MASK, inputs[2], inputs[3])
    expected = _np_released_tf1(*inputs[:2], RELEASED_TURN_MASK, *inputs[2:], weights, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_released_guards_the_empty_round_division():
    lengths = [[3, 2, 4, 0], [0, 2, 3, 4], [4, 3, 0, 0]]  # padded rounds without any token
    inputs = _inputs(lengths)
    layer, weights = _released_layer(inputs, RELEASED_TURN_MASK)
    got = _call(layer, inputs[0], inputs[1], RELEASED_TURN_MASK, inputs[2], inputs[3])
    unguarded = _np_released_tf1(*inputs[:2], RELEASED_TURN_MASK, *inputs[2:], weights, 2)
    assert np.isnan(unguarded).all()  # the released code's 0/0
    expected = _np_released_tf1(*inputs[:2], RELEASED_TURN_MASK, *inputs[2:], weights, 2,
                                guard=True)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("aggregation", ["i1", "i2"])
def test_padded_turn_is_the_same_as_no_turn(aggregation):
    context, context_mask, candidates, candidate_mask = (x[1:2] for x in _inputs())
    layer = MatchingGuidedEmbedding(aggregation=aggregation, hidden_size=HIDDEN)
    with_pad = _call(layer, context, context_mask, TURN_MASK[1:2], candidates, candidate_mask)
    keep = [0, 2]
    without = _call(layer, context[:, keep], context_mask[:, keep], TURN_MASK[1:2, keep],
                    candidates, candidate_mask)
    np.testing.assert_allclose(with_pad, without, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("aggregation", ["i1", "i2"])
def test_row_with_one_valid_turn_uses_that_turn_alone(aggregation):
    context, context_mask, candidates, candidate_mask = (x[2:3] for x in _inputs())
    layer = MatchingGuidedEmbedding(aggregation=aggregation, hidden_size=HIDDEN)
    got = _call(layer, context, context_mask, TURN_MASK[2:3], candidates, candidate_mask)
    expected = _np_paper(context, context_mask, TURN_MASK[2:3, :1], candidates, candidate_mask,
                         "i2", 0.1)  # one turn: α = 1 (I1) and 1/(t-1) = 1 (I2)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("aggregation", ["i1", "i2"])
def test_row_without_valid_turns_gives_zero_logits(aggregation):
    inputs = _inputs()
    turn_mask = TURN_MASK.copy()
    turn_mask[2] = 0
    layer = MatchingGuidedEmbedding(aggregation=aggregation, hidden_size=HIDDEN)
    got = _call(layer, inputs[0], inputs[1], turn_mask, inputs[2], inputs[3])
    np.testing.assert_array_equal(got[2], np.zeros(A))
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("variant,aggregation,turn_lengths,turn_mask", [
    ("paper", "i1", TURN_LENGTHS, TURN_MASK),
    ("paper", "i2", TURN_LENGTHS, TURN_MASK),
    ("released", None, RELEASED_TURN_LENGTHS, RELEASED_TURN_MASK),
])
def test_values_at_padded_tokens_do_not_matter(variant, aggregation, turn_lengths, turn_mask):
    context, context_mask, candidates, candidate_mask = _inputs(turn_lengths)
    layer = MatchingGuidedEmbedding(aggregation=aggregation, variant=variant, hidden_size=HIDDEN,
                                    num_preceding_turns=2)
    clean = _call(layer, context, context_mask, turn_mask, candidates, candidate_mask)
    rng = np.random.default_rng(3)
    noisy_context = np.where(context_mask[..., None] > 0, context,
                             100 * rng.normal(size=context.shape)).astype(np.float32)
    noisy_candidates = np.where(candidate_mask[..., None] > 0, candidates,
                                100 * rng.normal(size=candidates.shape)).astype(np.float32)
    noisy = _call(layer, noisy_context, context_mask, turn_mask, noisy_candidates, candidate_mask)
    np.testing.assert_allclose(noisy, clean, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("variant,aggregation", [("paper", "i1"), ("paper", "i2"),
                                                 ("released", None)])
def test_gradients_are_finite(variant, aggregation):
    context, context_mask, candidates, candidate_mask = _inputs()
    turn_mask = TURN_MASK.copy()
    turn_mask[2] = 0  # plus a row with no valid turn at all
    context, candidates = tf.constant(context), tf.constant(candidates)
    layer = MatchingGuidedEmbedding(aggregation=aggregation, variant=variant, hidden_size=HIDDEN,
                                    num_preceding_turns=1)
    with tf.GradientTape() as tape:
        tape.watch([context, candidates])
        logits = layer(context, context_mask, turn_mask, candidates, candidate_mask)
        loss = tf.reduce_mean(candidate_nt_xent(logits, variant=variant))
    grads = tape.gradient(loss, [context, candidates] + layer.trainable_weights)
    assert np.isfinite(loss.numpy())
    assert all(g is not None and np.all(np.isfinite(g.numpy())) for g in grads)


def test_float16_inputs_compute_in_float32():
    context, context_mask, candidates, candidate_mask = _inputs()
    layer = MatchingGuidedEmbedding()
    full = _call(layer, context, context_mask, TURN_MASK, candidates, candidate_mask)
    half = layer(tf.constant(context, tf.float16), context_mask, TURN_MASK,
                 tf.constant(candidates, tf.float16), candidate_mask)
    assert half.dtype == tf.float32
    assert candidate_nt_xent(tf.cast(half, tf.float16)).dtype == tf.float32
    np.testing.assert_allclose(half.numpy(), full, rtol=1e-2, atol=1e-2)


def test_stays_float32_under_mixed_precision():
    tf_keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        layer = MatchingGuidedEmbedding(aggregation="i1", hidden_size=HIDDEN)
        inputs = _inputs()
        logits = layer(inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3])
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
    assert logits.dtype == tf.float32
    assert all(w.dtype == tf.float32 for w in layer.weights)


def test_config_round_trip():
    inputs = _inputs()
    layer = MatchingGuidedEmbedding(aggregation="i1", temperature=0.05, hidden_size=HIDDEN)
    _call(layer, inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3])
    clone = MatchingGuidedEmbedding.from_config(layer.get_config())
    _call(clone, inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3])
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(
        _call(clone, inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3]),
        _call(layer, inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3]))


@pytest.mark.parametrize("variant,aggregation", [("paper", "i1"), ("released", None)])
def test_runs_in_a_graph_with_unknown_batch_turn_and_length(variant, aggregation):
    layer = MatchingGuidedEmbedding(aggregation=aggregation, variant=variant, hidden_size=HIDDEN,
                                    num_preceding_turns=1)
    floats, ints = tf.float32, tf.int32

    @tf.function(input_signature=[
        tf.TensorSpec([None, None, None, H], floats), tf.TensorSpec([None, None, None], ints),
        tf.TensorSpec([None, None], ints), tf.TensorSpec([None, None, None, H], floats),
        tf.TensorSpec([None, None, None], ints)])
    def logits(*args):
        return layer(*args)

    inputs = _inputs()
    eager = _call(layer, inputs[0], inputs[1], TURN_MASK, inputs[2], inputs[3])
    graph = logits(inputs[0], inputs[1].astype(np.int32), TURN_MASK.astype(np.int32), inputs[2],
                   inputs[3].astype(np.int32))
    np.testing.assert_allclose(graph.numpy(), eager, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs,match", [
    ({"temperature": 0.0}, "temperature"),
    ({"variant": "released", "aggregation": "i2"}, "aggregation"),
    ({"variant": "released", "temperature": 0.2}, "temperature"),
    ({"variant": "simcse"}, "variant"),
    ({"aggregation": "released"}, "aggregation"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MatchingGuidedEmbedding(**kwargs)
