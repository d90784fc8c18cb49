"""TurnAggregation (DialogueCSE Eq. 5-7 and the released round attention) against numpy loops."""
import numpy as np
import pytest

import tfdialemb  # noqa: F401  (routes tf.keras to tf-keras first)
import tensorflow as tf
import tf_keras

from tfdialemb.layers.turn_aggregation import TurnAggregation, turn_softmax

B, A, R, L, H, HIDDEN = 3, 3, 4, 4, 8, 6
# row 0: all turns; row 1: a padded turn in the middle; row 2: one valid turn (fewer than R).
TURN_MASK = np.array([[1, 1, 1, 1], [1, 0, 1, 1], [0, 1, 0, 0]], np.float32)


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    turns = rng.normal(size=(B, A, R, H)).astype(np.float32)
    context = rng.normal(size=(B, R, L, H)).astype(np.float32)
    token_mask = (rng.uniform(size=(B, R, L)) < 0.7).astype(np.float32)
    token_mask[..., 0] = 1.0
    return turns, context, token_mask


def _randomise_weights(layer, seed=1):
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.normal(scale=0.5, size=w.shape).astype(np.float32)
                       for w in layer.get_weights()])
    return layer.get_weights()


def _np_softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def test_i2_is_the_mean_over_valid_turns():
    turns, _, _ = _inputs()
    mask = TURN_MASK.copy()
    mask[2] = 0  # a row with no valid turn at all
    got = TurnAggregation("i2")(turns, mask).numpy()
    for b in range(B):
        for a in range(A):
            valid = [turns[b, a, i] for i in range(R) if mask[b, i]]
            expected = np.mean(valid, axis=0) if valid else np.zeros(H)
            np.testing.assert_allclose(got[b, a], expected, rtol=1e-5, atol=1e-6)


def test_i1_is_the_ffn_attention_over_valid_turns():
    turns, _, _ = _inputs()
    layer = TurnAggregation("i1", hidden_size=HIDDEN)
    layer(turns, TURN_MASK)
    w1, b1, w2, b2 = _randomise_weights(layer)
    assert w1.shape == (H, HIDDEN) and w2.shape == (HIDDEN, 1)
    got = layer(turns, TURN_MASK).numpy()
    for b in range(B):
        for a in range(A):
            valid = [i for i in range(R) if TURN_MASK[b, i]]
            scores = np.array([(np.maximum(turns[b, a, i] @ w1 + b1, 0) @ w2 + b2)[0]
                               for i in valid])
            alpha = _np_softmax(scores)
            expected = sum(alpha[k] * turns[b, a, i] for k, i in enumerate(valid))
            np.testing.assert_allclose(got[b, a], expected, rtol=1e-5, atol=1e-6)


def test_i1_row_without_valid_turns_is_zero():
    turns, _, _ = _inputs()
    got = TurnAggregation("i1", hidden_size=HIDDEN)(turns, np.zeros((B, R), np.float32))
    np.testing.assert_array_equal(got.numpy(), np.zeros((B, A, H)))


def _np_released(turns, context, token_mask, turn_mask, w, bias, u, groups):
    """dialogue-cse round attention: c_i = reduce_mean(U_i * mask) over L = max_seq_len = 100 (the
    TF1 code pads every turn to 100 positions), α per direction."""
    padded = np.pad(context * token_mask[..., None], [(0, 0), (0, 0), (0, 100 - context.shape[2]), (0, 0)])
    means = padded.mean(axis=2)
    out = np.zeros((B, A, H))
    for b in range(B):
        alpha = np.zeros(R)
        for group in groups:
            scores = np.array([np.tanh(means[b, i] @ w + bias) @ u[:, 0] for i in group])
            scores = np.where(turn_mask[b, group] > 0, scores, -2.0**32 + 1)
            alpha[group] = _np_softmax(scores)
        for a in range(A):
            out[b, a] = sum((1.0 + alpha[i]) * turns[b, a, i] for i in range(R))
    return out


@pytest.mark.parametrize("preceding", [None, 2])
def test_released_round_attention(preceding):
    turns, context, token_mask = _inputs()
    # row 2 with two directions: no valid following turn → uniform α there, as released.
    layer = TurnAggregation("released", hidden_size=HIDDEN, num_preceding_turns=preceding)
    layer(turns, TURN_MASK, context_tokens=context, context_token_mask=token_mask)
    w, bias, u = _randomise_weights(layer)
    got = layer(turns, TURN_MASK, context_tokens=context, context_token_mask=token_mask).numpy()
    groups = [list(range(R))] if preceding is None else [[0, 1], [2, 3]]
    expected = _np_released(turns, context, token_mask, TURN_MASK, w, bias, u, groups)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_released_weights_follow_the_tf1_round_attention():
    layer = TurnAggregation("released")
    context = np.ones((2, R, L, 64), np.float32)
    layer(np.ones((2, A, R, 64), np.float32), np.ones((2, R)), context, np.ones((2, R, L)))
    w, bias, u = layer.get_weights()
    assert (w.shape, bias.shape, u.shape) == ((64, 256), (256,), (256, 1))
    assert all("round_attention" in v.name for v in layer.weights)
    assert 0.09 < w.std() < 0.11 and abs(w.mean()) < 0.01  # N(0, 0.1), 16384 draws
    assert 0.07 < bias.std() < 0.13 and 0.07 < u.std() < 0.13  # 256 draws each


def test_released_needs_the_context_tokens():
    turns, _, _ = _inputs()
    with pytest.raises(ValueError, match="context_tokens"):
        TurnAggregation("released")(turns, TURN_MASK)


def test_turn_softmax_masks_exactly_and_groups():
    scores = tf.constant([[3.0, -1.0, 2.0, 0.5], [1.0, 2.0, 3.0, 4.0]])
    mask = tf.constant([[1, 0, 0, 0], [0, 0, 1, 1]])
    alpha = turn_softmax(scores, mask).numpy()
    np.testing.assert_array_equal(alpha[0], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(alpha[1], [0, 0, *_np_softmax(np.array([3.0, 4.0]))], rtol=1e-6)
    grouped = turn_softmax(scores, mask, num_preceding_turns=2).numpy()
    np.testing.assert_array_equal(grouped[0], [1.0, 0.0, 0.5, 0.5])  # empty group → uniform
    np.testing.assert_allclose(grouped[1], [0.5, 0.5, *_np_softmax(np.array([3.0, 4.0]))],
                               rtol=1e-6)


@pytest.mark.parametrize("mode", ["i1", "i2", "released"])
def test_gradients_are_finite(mode):
    turns, context, token_mask = _inputs()
    turns, context = tf.constant(turns), tf.constant(context)
    token_mask[1] = 0  # a row whose turns carry no valid token
    layer = TurnAggregation(mode, hidden_size=HIDDEN, num_preceding_turns=2)
    mask = np.array([[1, 1, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]], np.float32)
    with tf.GradientTape() as tape:
        tape.watch([turns, context])
        out = tf.reduce_sum(
            layer(turns, mask, context_tokens=context, context_token_mask=token_mask))
    grads = tape.gradient(out, [turns, context] + layer.trainable_weights)
    assert all(np.all(np.isfinite(g.numpy())) for g in grads if g is not None)


def test_config_round_trip():
    layer = TurnAggregation("released", hidden_size=HIDDEN, num_preceding_turns=2)
    clone = TurnAggregation.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert isinstance(clone, tf_keras.layers.Layer)
    with pytest.raises(ValueError, match="aggregation"):
        TurnAggregation("sum")
