"""The MGE method on `mge` batches: context selection, row encoding, and the loss end to end."""
import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.encoders import Encoder, EncoderConfig
from tfdialemb.layers.matching_guided_embedding import MatchingGuidedEmbedding
from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent
from tfdialemb.methods.models.mge import MatchingGuidedEmbeddingModel, select_context


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


@pytest.mark.parametrize("batch,rows,length", [(3, 7, 9), (1, 2, 4), (2, 1, 6)])
def test_encode_rows_in_length_groups_gives_each_row_its_states_alone(batch, rows, length):
    """Rows of many lengths (more than ROW_GROUPS rows, and fewer), each encoded cut to its own
    length on its own: the same states at its tokens, zeros past them and in empty rows."""
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)
    encoder = Encoder(config).build_variables()
    rng = np.random.default_rng(batch * rows)
    lengths = rng.integers(0, length + 1, [batch, rows])
    mask = (np.arange(length) < lengths[..., None]).astype(np.int32)
    ids = rng.integers(5, 60, [batch, rows, length]).astype(np.int32) * mask
    step = tf.function(encoder.encode_rows, input_signature=[tf.TensorSpec([None] * 3, tf.int32)] * 2)
    states = step(ids, mask).numpy()
    for b in range(batch):
        for r in range(rows):
            size = lengths[b, r]
            assert not states[b, r, size:].any()
            if size:
                alone = encoder({"input_word_ids": ids[b, r, :size][None],
                                 "input_mask": mask[b, r, :size][None]})["sequence_output"]
                np.testing.assert_allclose(states[b, r, :size], alone.numpy()[0], atol=1e-5)


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


def _released_forward_np(encoder, model, before, after, candidates):
    """dialogue-cse model/dse_cl_bert.py CLBERT.forward and calculate_loss ported literally, on
    turns laid out as the TF1 code takes them: R rounds per direction left-aligned, padded rounds
    an empty utterance [CLS] [SEP], every sequence padded to max_seq_len = 100."""
    def states(token_lists):
        # Encoded at 8 positions (the tiny BERT has 64), then zero-padded to 100 as the TF1 code
        # pads: masked positions are zeroed there and never attended to.
        ids = np.zeros([len(token_lists), 8], np.int32)
        for row, tokens in enumerate(token_lists):
            ids[row, :len(tokens)] = tokens
        out = encoder({"input_word_ids": ids, "input_mask": (ids > 0).astype(np.int32)})["sequence_output"].numpy()
        mask = np.pad((ids > 0).astype(np.float64), [(0, 0), (0, 92)])
        return np.pad(out.astype(np.float64), [(0, 0), (0, 92), (0, 0)]) * mask[..., None], mask

    rounds = model.turns
    empty = [candidates[0][0], candidates[0][-1]]
    w, bias, u = (v.numpy().astype(np.float64) for v in model.mge.weights)
    rb, rb_mask = states(candidates)
    r_free = rb.sum(1) / (rb_mask.sum(1)[:, None] + 1e-6)

    def direction(turns):
        u_dir, mask = states(turns + [empty] * (rounds - len(turns)))
        vu = np.tanh(u_dir.mean(axis=1) @ w + bias) @ u[:, 0]
        vu = np.where(np.arange(rounds) < len(turns), vu, -2.0**32 + 1)
        alpha = np.exp(vu - vu.max()) / np.exp(vu - vu.max()).sum()
        pooled = np.stack([(0.1 * u_dir[i] @ rb.transpose(0, 2, 1) @ rb).sum(1) / mask[i].sum()
                           for i in range(rounds)], 1)  # [A, R, H]
        return (pooled * (1.0 + alpha[None, :, None])).sum(1)

    r_aware = direction(before) + direction(after)
    estimation = (r_free * r_aware).sum(-1) / (np.linalg.norm(r_free, axis=-1) * np.linalg.norm(r_aware, axis=-1)) / 0.1
    log_softmax = estimation - estimation.max() - np.log(np.exp(estimation - estimation.max()).sum())
    return -log_softmax[0] / len(candidates)  # -reduce_mean(log_softmax * labels) over A


def test_released_variant_is_the_tf1_forward_at_any_batch_padding():
    """The released scoring depends neither on how far a batch pads its turns (the TF1 code
    averages the round attention over max_seq_len = 100 positions) nor loses its padded rounds
    (they count with weight 1 + 0, as empty utterances)."""
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    model = MatchingGuidedEmbeddingModel(encoder, turns=3, negatives=2, variant="released")
    before = [[2, 20, 21, 3]]
    after = [[2, 22, 3], [2, 23, 24, 25, 3]]
    candidates = [[2, 26, 27, 3], [2, 28, 3], [2, 29, 30, 31, 32, 3]]

    def batch(length):
        def rows(token_lists, count):
            ids = np.zeros([1, count, length], np.int32)
            for row, tokens in enumerate(token_lists):
                ids[0, row, :len(tokens)] = tokens
            return ids, (ids > 0).astype(np.int32)
        parts = {"context_before": rows(before, 4), "context_after": rows(after, 4), "candidates": rows(candidates, 3)}
        return {key: value for name, (ids, mask) in parts.items() for key, value in ((name, ids), (f"{name}_mask", mask))}

    model.per_example_loss(batch(6), training=False)
    rng = np.random.default_rng(3)  # attention weights for which c_i's scale matters, unsaturated
    model.mge.set_weights([rng.normal(scale=1.0, size=w.shape).astype(np.float32) for w in model.mge.get_weights()])
    short = model.per_example_loss(batch(6), training=False)[0].numpy()
    long = model.per_example_loss(batch(25), training=False)[0].numpy()
    np.testing.assert_allclose(short, long, rtol=1e-6, atol=1e-7)
    expected = _released_forward_np(encoder, model, before, after, candidates)
    np.testing.assert_allclose(short[0], expected, rtol=1e-4, atol=1e-5)


def test_one_row_group_is_one_call_that_xla_compiles_to_the_grouped_states():
    """row_groups=1 (what a --jit_compile run sets) encodes the rows as given: XLA compiles it,
    and it gives the states of four length groups, zero at padding."""
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)
    encoder = Encoder(config).build_variables()
    rng = np.random.default_rng(3)
    mask = (np.arange(7) < rng.integers(1, 8, [6])[:, None]).astype(np.int32)
    inputs = {"input_word_ids": rng.integers(5, 60, [6, 7]).astype(np.int32) * mask, "input_mask": mask}
    grouped = encoder.encode_by_length(inputs, training=False).numpy()
    encoder.row_groups = 1
    compiled = tf.function(lambda x: encoder.encode_by_length(x, training=False), jit_compile=True)(inputs).numpy()
    np.testing.assert_allclose(compiled, grouped, atol=1e-5)
    assert not compiled[mask == 0].any()


def test_fixed_shapes_encode_every_stacked_row_and_compile_with_dropout():
    """encode_rows with fixed shapes (a --jit_compile run) encodes empty rows too, since XLA
    cannot gather the non-empty ones by a count the data decides: the states equal the grouped
    path's, the empty rows stay zero, and a training call (dropout on) compiles."""
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)
    encoder = Encoder(config).build_variables()
    rng = np.random.default_rng(4)
    mask = (np.arange(7) < rng.integers(0, 8, [2, 4])[..., None]).astype(np.int32)  # some rows empty
    mask[0, 0], mask[1, 3] = 0, 0
    ids = rng.integers(5, 60, [2, 4, 7]).astype(np.int32) * mask
    grouped = encoder.encode_rows(ids, mask, training=False).numpy()
    encoder.use_fixed_shapes()
    compiled = tf.function(lambda i, m: encoder.encode_rows(i, m, training=False), jit_compile=True)(ids, mask)
    np.testing.assert_allclose(compiled.numpy(), grouped, atol=1e-5)
    assert not compiled.numpy()[mask == 0].any() and not grouped[0, 0].any()
    trained = tf.function(lambda i, m: encoder.encode_rows(i, m, training=True), jit_compile=True)(ids, mask)
    assert trained.shape == (2, 4, 7, config.hidden_size) and np.isfinite(trained.numpy()).all()
    assert not trained.numpy()[mask == 0].any()
