"""CCL / C3L models (triple-encoders Sec. 2-3) on tiny batches: the loss recomputed from transformers'
encoder outputs with numpy, the auxiliary NLI term, gradients and bad input."""
import numpy as np
import pytest
import tensorflow as tf

from tfdialemb.encoders import load_pretrained
from tfdialemb.methods.models.curved import CurvedContrastiveModel

BATCH, LENGTH, VOCAB = 4, 7, 60


def _texts(rng):
    """Random token ids [B, T] with [CLS] first, valid prefixes of 2..T tokens, zero padding."""
    lengths = rng.integers(2, LENGTH + 1, BATCH)
    mask = (np.arange(LENGTH) < lengths[:, None]).astype(np.int32)
    ids = rng.integers(5, VOCAB, (BATCH, LENGTH)).astype(np.int32)
    ids[:, 0] = 2
    return ids * mask, mask


def _batch(variant, seed=0, nli=False):
    rng = np.random.default_rng(seed)
    batch = {"target": np.array([0.8, 0.0, 0.4, 1.0], np.float32)}
    for feature in (("before",) if variant == "ccl" else ("b1", "b2")) + ("after",):
        batch[feature], batch[f"{feature}_mask"] = _texts(rng)
    if nli:
        batch["nli_a"], batch["nli_a_mask"] = _texts(rng)
        batch["nli_b"], batch["nli_b_mask"] = _texts(rng)
        batch["nli_label"] = np.array([1.0, 0.0, 0.0, 1.0], np.float32)
    return batch


@pytest.fixture(scope="module")
def encoder(hf_safetensors_dir):
    return load_pretrained(hf_safetensors_dir).encoder


def _pooled(reference_model, batch, feature):
    """transformers' last layer, mean over the valid tokens, in float64."""
    ids, mask = batch[feature], batch[f"{feature}_mask"]
    states = reference_model(input_ids=ids, attention_mask=mask, token_type_ids=np.zeros_like(ids),
                             training=False).last_hidden_state.numpy().astype(np.float64)
    return (states * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)


def _cos(a, b):
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def test_ccl_loss_is_mse_of_before_after_cosine(encoder, reference_model):
    batch = _batch("ccl")
    losses, metrics = CurvedContrastiveModel(encoder, variant="ccl").per_example_loss(
        batch, training=False)
    cos = _cos(_pooled(reference_model, batch, "before"), _pooled(reference_model, batch, "after"))
    expected = (cos - batch["target"]) ** 2
    np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(metrics["mse"].numpy(), expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(metrics["abs_error"].numpy(), np.abs(cos - batch["target"]),
                               rtol=1e-4, atol=1e-6)
    assert set(metrics) == {"mse", "abs_error"}


@pytest.mark.parametrize("targets", [None, [1.0, 0.0, 1.0, 1.0]])
def test_c3l_anchor_is_the_mean_of_the_two_before_embeddings(encoder, reference_model, targets):
    """Curved targets, then Table 4's hard-positives ablation: positives regressed onto 1."""
    batch = _batch("c3l", seed=1)
    if targets:
        batch["target"] = np.array(targets, np.float32)
    losses, _ = CurvedContrastiveModel(encoder, variant="c3l").per_example_loss(batch, training=False)
    mix = (_pooled(reference_model, batch, "b1") + _pooled(reference_model, batch, "b2")) / 2
    cos = _cos(mix, _pooled(reference_model, batch, "after"))
    expected = (cos - np.array(targets or batch["target"])) ** 2
    np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-4, atol=1e-6)


def test_c3l_hard_positives_option_reaches_the_builder_and_needs_no_ccl_start(tmp_path):
    """--c3l_positives=hard: the builder's targets, --c3l_labels left without effect, and no
    warning from a start that is not a CCL model (Table 4 trains that ablation from scratch)."""
    from tfdialemb.methods.spec import TrainingRun, get_method

    spec = get_method("c3l")
    run = TrainingRun(init_checkpoint=str(tmp_path), batch_size=32, max_length=48, seed=0)
    hard, curved = spec.resolve({"c3l_positives": "hard"}), spec.resolve()
    assert spec.builder_params(hard)["positives"] == "hard" and spec.builder_params(curved)["positives"] == "curved"
    assert "c3l_labels" in spec.unused_options(hard) and "c3l_labels" not in spec.unused_options(curved)
    assert spec.check(hard, run) == [] and "not a CCL model" in spec.check(curved, run)[0]


@pytest.mark.parametrize("variant", ["ccl", "c3l"])
def test_nli_pairs_add_the_contrastive_loss_per_example(encoder, reference_model, variant):
    batch = _batch(variant, seed=2, nli=True)
    model = CurvedContrastiveModel(encoder, variant=variant)
    losses, metrics = model.per_example_loss(batch, training=False)
    plain, _ = model.per_example_loss({k: v for k, v in batch.items() if not k.startswith("nli")},
                                      training=False)
    d = 1 - _cos(_pooled(reference_model, batch, "nli_a"), _pooled(reference_model, batch, "nli_b"))
    y = batch["nli_label"]
    nli = 0.5 * (y * d ** 2 + (1 - y) * np.maximum(0.0, 0.5 - d) ** 2)
    np.testing.assert_allclose(metrics["nli_loss"].numpy(), nli, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(losses.numpy(), plain.numpy() + nli, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(metrics["mse"].numpy(), plain.numpy(), rtol=1e-6)


@pytest.mark.parametrize("variant", ["ccl", "c3l"])
def test_gradients_reach_the_encoder(encoder, variant):
    model = CurvedContrastiveModel(encoder, variant=variant)
    with tf.GradientTape() as tape:
        losses, _ = model.per_example_loss(_batch(variant, seed=3, nli=True), training=True)
        loss = tf.reduce_mean(losses)
    grads = tape.gradient(loss, model.trainable_variables)
    # No weights of its own: everything trained is the encoder's.
    assert [v.ref() for v in model.trainable_variables] == [v.ref() for v in encoder.trainable_variables]
    present = [g for g in grads if g is not None]
    assert len(present) > len(grads) // 2
    assert all(np.isfinite(tf.convert_to_tensor(g).numpy()).all() for g in present)
    assert any(np.any(tf.convert_to_tensor(g).numpy() != 0) for g in present)


def test_bad_variant_missing_keys_and_mismatched_nli_batch(encoder):
    with pytest.raises(ValueError, match="unknown curved contrastive variant 'triple'"):
        CurvedContrastiveModel(encoder, variant="triple")
    with pytest.raises(ValueError, match=r"c3l batches need the keys \['b1', 'b1_mask', 'b2', "
                                         r"'b2_mask'\].*`c3l` builder"):
        CurvedContrastiveModel(encoder, variant="c3l").per_example_loss(_batch("ccl"), training=False)
    batch = _batch("ccl", nli=True)
    del batch["nli_label"]
    with pytest.raises(ValueError, match=r"NLI batches need the keys \['nli_label'\]"):
        CurvedContrastiveModel(encoder).per_example_loss(batch, training=False)
    batch = _batch("ccl", nli=True)
    batch.update({k: v[:3] for k, v in batch.items() if k.startswith("nli")})
    with pytest.raises(tf.errors.InvalidArgumentError, match="NLI batch must have the size"):
        CurvedContrastiveModel(encoder).per_example_loss(batch, training=False)
