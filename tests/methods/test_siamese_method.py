"""SiameseBERT_S / _M on `siamese` batches: the loss recomputed from the parts, gradients."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.methods.models.siamese import SiameseModel


def _batch(rng, batch=3, candidates=4, length=6, vocab=60):
    def seqs(shape):
        ids = rng.integers(5, vocab, shape + [length]).astype(np.int32)
        lengths = rng.integers(2, length + 1, shape)
        mask = (np.arange(length) < lengths[..., None]).astype(np.int32)
        return ids * mask, mask

    previous, previous_mask = seqs([batch])
    context, context_mask = seqs([batch])
    cands, cands_mask = seqs([batch, candidates])
    return {"previous": previous, "previous_mask": previous_mask, "context": context,
            "context_mask": context_mask, "candidates": cands, "candidates_mask": cands_mask}


def _encoder():
    return Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()


def _mean_pool(encoder, ids, mask):
    """Numpy mean of the last layer over the valid tokens, one sequence at a time."""
    pooled = []
    for row_ids, row_mask in zip(ids.reshape(-1, ids.shape[-1]), mask.reshape(-1, mask.shape[-1])):
        states = encoder({"input_word_ids": row_ids[None], "input_mask": row_mask[None]})
        states = states["sequence_output"].numpy()[0]
        pooled.append(states[row_mask > 0].mean(axis=0))
    return np.stack(pooled).reshape(ids.shape[:-1] + (-1,))


def _mlp(layer, x):
    hidden, output = layer.layers
    w1, b1 = (v.numpy() for v in hidden.weights)
    w2, b2 = (v.numpy() for v in output.weights)
    return np.tanh(x @ w1 + b1) @ w2 + b2


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _log_softmax_first(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted[:, 0] - np.log(np.exp(shifted).sum(axis=-1))


@pytest.mark.parametrize("variant", ["single", "multi"])
def test_loss_is_softmax_over_candidates_recomputed_from_parts(variant):
    batch = _batch(np.random.default_rng(0))
    encoder = _encoder()
    model = SiameseModel(encoder, variant=variant, negatives=2, temperature=0.5)
    losses, metrics = model.per_example_loss(batch, training=False)
    feature = "previous" if variant == "single" else "context"
    context = _mean_pool(encoder, batch[feature], batch[f"{feature}_mask"])
    cands = _mean_pool(encoder, batch["candidates"][:, :3], batch["candidates_mask"][:, :3])
    responses = _mlp(model.response_mlp, cands)
    if variant == "single":
        # Yang et al. (2018): u · FFN(v), no scale.
        logits = np.einsum("bh,bah->ba", context, responses)
    else:
        # ConveRT: C · cos(FFN_c(u), FFN_r(v)), C starting at 1/τ = 2.
        logits = 2.0 * np.einsum("bh,bah->ba", _unit(_mlp(model.context_mlp, context)),
                                 _unit(responses))
    np.testing.assert_allclose(losses.numpy(), -_log_softmax_first(logits), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(metrics["accuracy"].numpy(),
                                  (logits.argmax(axis=-1) == 0).astype(np.float32))


@pytest.mark.parametrize("variant", ["single", "multi"])
def test_gradients_reach_the_encoder_and_the_matching_layers(variant):
    batch = _batch(np.random.default_rng(1))
    encoder = _encoder()
    model = SiameseModel(encoder, variant=variant, negatives=3)
    with tf.GradientTape() as tape:
        losses, _ = model.per_example_loss(batch, training=True)
        loss = tf.reduce_mean(losses)
    grads = tape.gradient(loss, model.trainable_variables)
    assert np.isfinite(losses.numpy()).all()
    in_encoder = {v.ref() for v in encoder.trainable_variables}
    encoder_grads = [g for v, g in zip(model.trainable_variables, grads) if v.ref() in in_encoder]
    matching_grads = [g for v, g in zip(model.trainable_variables, grads)
                      if v.ref() not in in_encoder]
    assert sum(g is not None for g in encoder_grads) > len(encoder_grads) // 2
    # 2 Dense layers (kernel, bias) per MLP; multi adds the context MLP and the log scale.
    assert len(matching_grads) == (4 if variant == "single" else 9)
    assert all(g is not None and np.any(g.numpy() != 0) for g in matching_grads)


def test_bad_arguments_and_too_few_stored_negatives():
    encoder = _encoder()
    with pytest.raises(ValueError, match="unknown siamese variant"):
        SiameseModel(encoder, variant="triple")
    with pytest.raises(ValueError, match="must be positive"):
        SiameseModel(encoder, temperature=0.0)
    model = SiameseModel(encoder, negatives=9)
    with pytest.raises(tf.errors.InvalidArgumentError, match="fewer negatives"):
        model.per_example_loss(_batch(np.random.default_rng(2)), training=False)
