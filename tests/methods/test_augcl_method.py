"""AugclModel on tiny batches: the dropout-only ablation's loss (--augcl_views=dropout) against a
numpy derivation, and its positive drawn from a second dropout mask."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.methods.models.augcl import AugclModel
from tfdialemb.methods.spec import TrainingRun, get_method

CONFIG = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)


def _encoder(dropout):
    tf.keras.utils.set_random_seed(3)
    return Encoder(CONFIG.replace(hidden_dropout=dropout, attention_dropout=dropout)).build_variables()


def _identical_sides(seed=0, batch=4, length=6):
    """Each row's dialogue on both sides, as --augcl_views=dropout packs it."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, len(tiny_bert.WORDS), (batch, length)).astype(np.int32)
    ids[:, 0] = 2
    mask = (np.arange(length) < rng.integers(3, length + 1, batch)[:, None]).astype(np.int32)
    ids *= mask
    return {"dialogues": np.stack([ids, ids], axis=1), "dialogues_mask": np.stack([mask, mask], axis=1),
            "swap": np.array([1, 0, 0, 1], np.int32)}


def test_dropout_only_loss_without_dropout_equals_numpy():
    """Without dropout both sides embed alike, x = y, so S = x xᵀ / τ is symmetric and the released
    loss CE(S, I) + CE(Sᵀ, I) is twice -log softmax(S_i)[i] per row, the swap changing nothing;
    the thesis loss is -log softmax(x xᵀ)[i] (cosines, no temperature)."""
    encoder = _encoder(0.0)
    batch = _identical_sides()
    ids, mask = batch["dialogues"][:, 0], batch["dialogues_mask"][:, 0]
    cls = encoder({"input_word_ids": ids, "input_mask": mask})["sequence_output"].numpy()[:, 0].astype(np.float64)
    unit = cls / np.linalg.norm(cls, axis=1, keepdims=True)
    cosines = unit @ unit.T

    def rows(logits):
        return np.log(np.exp(logits).sum(axis=1)) - np.diag(logits)

    released = AugclModel(encoder, temperature=0.1, emb_dropout=0.0, gather_negatives=False)
    np.testing.assert_allclose(released.per_example_loss(batch, training=False)[0].numpy(),
                               2 * rows(cosines / 0.1), rtol=1e-4, atol=1e-5)
    thesis = AugclModel(encoder, loss_variant="thesis", emb_dropout=0.0, gather_negatives=False)
    np.testing.assert_allclose(thesis.per_example_loss(batch, training=False)[0].numpy(), rows(cosines),
                               rtol=1e-4, atol=1e-5)


def test_dropout_only_positive_differs_by_the_dropout_mask():
    """Training with dropout, the two encodings of one dialogue differ: the positive is not the
    anchor itself, and the loss stays finite."""
    encoder = _encoder(0.2)
    batch = _identical_sides(seed=1)
    model = AugclModel(encoder, emb_dropout=0.1, gather_negatives=False)
    ids = tf.reshape(batch["dialogues"], [-1, 6])
    mask = tf.reshape(batch["dialogues_mask"], [-1, 6])
    pooled = tf.reshape(model.embed(ids, mask, training=True), [4, 2, -1]).numpy()
    assert np.abs(pooled[:, 0] - pooled[:, 1]).max() > 1e-3
    assert np.all(np.isfinite(model.per_example_loss(batch, training=True)[0].numpy()))


def test_dropout_views_option_reaches_the_pipeline_and_refuses_an_augment_set():
    spec = get_method("augcl")
    run = TrainingRun(init_checkpoint="unused", batch_size=128, max_length=64, seed=0)
    dropout = spec.resolve({"augcl_views": "dropout", "on_the_fly": False})
    assert spec.builder_params(dropout)["min_views"] == 0  # no view needed
    assert {"on_the_fly", "pair"} <= set(spec.unused_options(dropout))
    assert spec.check(dropout, run) == []
    with pytest.raises(ValueError, match="would never be read"):
        spec.check(spec.resolve({"augcl_views": "dropout", "augment_set": "t-l"}), run)
