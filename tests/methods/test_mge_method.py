"""The MGE method on `mge` batches: context selection, row encoding, and the loss end to end."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.layers.matching_guided_embedding import MatchingGuidedEmbedding
from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent
from tfdialemb.methods.mge import MatchingGuidedEmbeddingModel, select_context


def _rows(counts, width=4, length=3, start=1):
    """[B, width, length] ids: row r of example b holds token 100*b + 10*r + start (then pads)."""
    ids = np.zeros([len(counts), width, length], np.int32)
    for b, count in enumerate(counts):
        for r in range(count):
            ids[b, r, :2] = 100 * b + 10 * r + start
    return ids, (ids > 0).astype(np.int32)


@pytest.mark.parametrize("split, turns, expected_before, expected_after", [
    # (before count, after count) per example: (3, 2), (0, 3), (1, 0), (4, 1)
    ("nearest", 3, [[1, 2], [], [0], [2, 3]], [[0], [0, 1, 2], [], [0]]),
    ("nearest", 1, [[2], [], [0], [3]], [[], [0], [], []]),
    ("per_side", 3, [[0, 1, 2], [], [0], [1, 2, 3]], [[0, 1], [0, 1, 2], [], [0]]),
])
def test_context_selection_hand_worked(split, turns, expected_before, expected_after):
    before, before_mask = _rows([3, 0, 1, 4], start=1)
    after, after_mask = _rows([2, 3, 0, 1], start=5)
    rows, mask, turn_mask = select_context(before, before_mask, after, after_mask, turns, split)
    rows, mask, turn_mask = rows.numpy(), mask.numpy(), turn_mask.numpy()
    assert rows.shape[1] == 2 * turns
    for b in range(4):
        picked_before = [int(rows[b, s, 0] - 100 * b - 1) // 10 for s in range(turns) if turn_mask[b, s]]
        picked_after = [int(rows[b, turns + s, 0] - 100 * b - 5) // 10 for s in range(turns) if turn_mask[b, turns + s]]
        assert picked_before == expected_before[b] and picked_after == expected_after[b]
        # Left-aligned chronological slots, as the released code lays out its rounds.
        used = np.flatnonzero(turn_mask[b, :turns])
        assert used.tolist() == list(range(used.size))
        assert not mask[b][turn_mask[b] == 0].any() and not rows[b][turn_mask[b] == 0].any()


def test_encode_rows_skips_empty_rows_and_matches_row_by_row():
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)
    encoder = Encoder(config).build_variables()
    ids = np.array([[[2, 20, 3], [0, 0, 0]], [[2, 21, 22], [2, 23, 3]]], np.int32)
    mask = (ids > 0).astype(np.int32)
    states = encoder.encode_rows(ids, mask, training=False).numpy()
    assert not states[0, 1].any()
    for b, r in [(0, 0), (1, 0), (1, 1)]:
        alone = encoder({"input_word_ids": ids[b, r][None], "input_mask": mask[b, r][None]})["sequence_output"]
        np.testing.assert_allclose(states[b, r], alone.numpy()[0], atol=1e-5)


def _batch(rng, batch=2, candidates=4, length=5, vocab=60):
    def seqs(rows, present):
        ids = rng.integers(5, vocab, [batch, rows, length]).astype(np.int32)
        lengths = rng.integers(2, length + 1, [batch, rows])
        mask = (np.arange(length) < lengths[..., None]).astype(np.int32) * present[..., None]
        return ids * mask, mask

    before, before_mask = seqs(3, np.array([[1, 1, 0], [1, 0, 0]]))
    after, after_mask = seqs(2, np.array([[1, 0], [1, 1]]))
    cands, cands_mask = seqs(candidates, np.ones([batch, candidates], np.int32))
    return {"context_before": before, "context_before_mask": before_mask, "context_after": after,
            "context_after_mask": after_mask, "candidates": cands, "candidates_mask": cands_mask}


def test_loss_is_nt_xent_of_the_mge_logits_recomputed_from_parts():
    rng = np.random.default_rng(0)
    batch = _batch(rng)
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    model = MatchingGuidedEmbeddingModel(encoder, turns=2, negatives=2, context_split="nearest")
    losses, metrics = model.per_example_loss(batch, training=False)
    # Second path: context chosen by hand (nearest 2 → one preceding, one following utterance).
    context = np.stack([np.stack([batch["context_before"][0, 1], batch["context_after"][0, 0]]),
                        np.stack([batch["context_before"][1, 0], batch["context_after"][1, 0]])])
    context_mask = (context > 0).astype(np.int32)
    cands, cands_mask = batch["candidates"][:, :3], batch["candidates_mask"][:, :3]
    states = lambda ids, m: encoder({"input_word_ids": ids.reshape(-1, ids.shape[-1]),  # noqa: E731
                                     "input_mask": m.reshape(-1, m.shape[-1])})["sequence_output"].numpy()
    context_states = states(context, context_mask).reshape(2, 2, 5, -1)
    cand_states = states(cands, cands_mask).reshape(2, 3, 5, -1)
    layer = MatchingGuidedEmbedding(aggregation="i2")
    # One preceding slot then one following slot: same turn set as the model's 2+2-slot layout.
    logits = layer(context_states, context_mask, np.ones([2, 2], np.int32), cand_states, cands_mask)
    np.testing.assert_allclose(losses.numpy(), candidate_nt_xent(logits).numpy(), atol=1e-4)
    assert set(np.unique(metrics["accuracy"].numpy())) <= {0.0, 1.0}


def test_released_variant_and_gradients_reach_the_encoder():
    rng = np.random.default_rng(1)
    batch = _batch(rng)
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    model = MatchingGuidedEmbeddingModel(encoder, turns=3, negatives=3, variant="released")
    with tf.GradientTape() as tape:
        losses, _ = model.per_example_loss(batch, training=True)
        loss = tf.reduce_mean(losses)
    grads = tape.gradient(loss, encoder.trainable_variables)
    assert np.isfinite(losses.numpy()).all()
    assert sum(g is not None for g in grads) > len(grads) // 2
    with pytest.raises(ValueError, match="unknown mge variant"):
        MatchingGuidedEmbeddingModel(encoder, variant="other")


def test_too_few_stored_negatives_is_an_error():
    batch = _batch(np.random.default_rng(2), candidates=3)
    model = MatchingGuidedEmbeddingModel(Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables(),
                                         negatives=9)
    with pytest.raises(tf.errors.InvalidArgumentError, match="fewer negatives"):
        model.per_example_loss(batch, training=False)


def test_released_variant_refuses_the_options_it_ignores():
    from tfdialemb.methods.spec import get_method

    spec = get_method("mge")
    assert spec.resolve({"mge_variant": "released", "turns": 3})["turns"] == 3
    with pytest.raises(ValueError, match=r"--aggregation, --temperature do\(es\) not apply to --mge_variant=released"):
        spec.resolve({"mge_variant": "released", "temperature": 0.05, "aggregation": "i1"})
    assert spec.resolve({"temperature": 0.05})["temperature"] == 0.05


def test_default_context_is_the_authors_three_turns_on_each_side():
    """DialogueCSE's code (config_bert.py: round_num=3, bidirectional=1) encodes 3 preceding and
    3 following turns; the paper's "3 context turns" with its default scoring reads the same."""
    from tfdialemb.methods.spec import get_method

    params = get_method("mge").resolve({})
    before, before_mask = _rows([4], start=1)
    after, after_mask = _rows([4], start=5)
    _, _, turn_mask = select_context(before, before_mask, after, after_mask, params["turns"],
                                     params["context_split"])
    assert params["mge_variant"] == "paper" and turn_mask.numpy().tolist() == [[1] * 6]
