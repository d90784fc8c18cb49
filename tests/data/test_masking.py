"""Masked-LM masking follows google-research/bert's rules and draws fresh, reproducible masks."""
import numpy as np
import pytest
import tensorflow as tf

from tiny_corpus import TOKENIZER, corpus
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.masking import add_masks, mask_tokens
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import write_dialogues

PAD, CLS, SEP, MASK = 0, 101, 102, 103
VOCAB = 30522
SPECIALS = (PAD, CLS, SEP, MASK)
MASKING = {"vocab_size": VOCAB, "mask_id": MASK, "special_ids": SPECIALS}


def _batch(rows, length, seed=0):
    """Rows of [CLS] words [SEP] with random lengths (some with an inner [SEP]), zero-padded."""
    rng = np.random.default_rng(seed)
    ids = np.zeros([rows, length], np.int32)
    lengths = rng.integers(2, length + 1, size=rows)
    for row, n in enumerate(lengths):
        ids[row, :n] = rng.integers(1000, VOCAB, size=n)
        ids[row, 0], ids[row, n - 1] = CLS, SEP
        if n > 6:
            ids[row, n // 2] = SEP
    mask = (np.arange(length) < lengths[:, None]).astype(np.int32)
    return ids, mask


def _mask(ids, mask, seed=(1, 2), **kwargs):
    out = mask_tokens(ids, mask, seed=tf.constant(seed, tf.int64), **{**MASKING, **kwargs})
    return {name: value.numpy() for name, value in out.items()}


@pytest.fixture(scope="module")
def large():
    ids, mask = _batch(4000, 64)
    return ids, mask, _mask(ids, mask)


def test_prediction_counts_follow_bert_rounding(large):
    ids, mask, out = large
    lengths = mask.sum(1)
    candidates = (mask.astype(bool) & ~np.isin(ids, SPECIALS)).sum(1)
    expected = [min(10, max(1, round(n * 0.15)), c) for n, c in zip(lengths, candidates)]
    np.testing.assert_array_equal(out["masked_lm_weights"].sum(1), expected)
    assert out["masked_lm_positions"].shape == (4000, 10)
    assert out["masked_lm_weights"].dtype == np.float32
    predicted = out["masked_lm_weights"].sum() / mask.sum()
    assert 0.12 < predicted < 0.16


def test_positions_are_sorted_unique_real_tokens(large):
    ids, mask, out = large
    for row in range(len(ids)):
        real = out["masked_lm_weights"][row] == 1
        positions = out["masked_lm_positions"][row]
        assert (positions[~real] == 0).all() and (out["masked_lm_ids"][row][~real] == 0).all()
        chosen = positions[real]
        assert (np.diff(chosen) > 0).all()
        assert mask[row, chosen].all()
        assert not np.isin(ids[row, chosen], SPECIALS).any()
        np.testing.assert_array_equal(out["masked_lm_ids"][row][real], ids[row, chosen])
    np.testing.assert_array_equal(out["input_mask"], mask)


def test_only_predicted_positions_change(large):
    ids, _, out = large
    changed = out["input_word_ids"] != ids
    predicted = np.zeros_like(changed)
    rows, slots = np.nonzero(out["masked_lm_weights"])
    predicted[rows, out["masked_lm_positions"][rows, slots]] = True
    assert not (changed & ~predicted).any()


def test_eighty_ten_ten_split(large):
    _, _, out = large
    rows, slots = np.nonzero(out["masked_lm_weights"])
    now = out["input_word_ids"][rows, out["masked_lm_positions"][rows, slots]]
    before = out["masked_lm_ids"][rows, slots]
    is_mask, kept = now == MASK, now == before
    assert len(now) > 20_000
    assert abs(is_mask.mean() - 0.8) < 0.015
    assert abs(kept.mean() - 0.1) < 0.01
    assert abs((~is_mask & ~kept).mean() - 0.1) < 0.01


def test_positions_are_uniform_over_candidates():
    ids = np.tile(np.array([[CLS] + list(range(1000, 1018)) + [SEP]], np.int32), [5000, 1])
    out = _mask(ids, np.ones_like(ids))
    assert (out["masked_lm_weights"].sum(1) == 3).all()  # round(20 * 0.15)
    hits = np.bincount(out["masked_lm_positions"][:, :3].ravel(), minlength=20)
    assert hits[0] == hits[19] == 0
    np.testing.assert_allclose(hits[1:19] / 5000, 3 / 18, atol=0.02)


def test_rows_shorter_than_max_predictions_and_without_candidates():
    ids = np.array([[CLS, 2000, SEP], [CLS, SEP, PAD]], np.int32)
    out = _mask(ids, (ids != PAD).astype(np.int32))
    np.testing.assert_array_equal(out["masked_lm_weights"].sum(1), [1, 0])
    assert out["masked_lm_positions"][0, 0] == 1 and out["masked_lm_ids"][0, 0] == 2000
    np.testing.assert_array_equal(out["input_word_ids"][1], ids[1])


def test_max_predictions_caps_long_rows():
    ids, mask = _batch(200, 256)
    out = _mask(ids, mask, max_predictions=4, mask_prob=0.5)
    assert out["masked_lm_positions"].shape == (200, 4)
    long_rows = mask.sum(1) >= 8  # at least 5 candidates and round(8 * 0.5) = 4
    assert (out["masked_lm_weights"][long_rows].sum(1) == 4).all()


@pytest.mark.parametrize("settings", [{"mask_prob": 0.0}, {"max_predictions": 0}])
def test_rejects_settings_that_predict_nothing(settings):
    ids, mask = _batch(2, 8)
    with pytest.raises(ValueError, match="mask_prob"):
        _mask(ids, mask, **settings)


def test_same_seed_same_masks_other_seed_other_masks():
    ids, mask = _batch(64, 32)
    a, b, c = _mask(ids, mask, (5, 6)), _mask(ids, mask, (5, 6)), _mask(ids, mask, (5, 7))
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert (a["masked_lm_positions"] != c["masked_lm_positions"]).any()


def test_runs_inside_a_dataset_map_with_unknown_shapes():
    ids, mask = _batch(8, 16)
    dataset = tf.data.Dataset.from_tensor_slices(
        {"input_word_ids": ids, "input_word_ids_mask": mask})
    out = next(iter(add_masks(dataset.batch(4), seed=3, **MASKING)))
    assert out["masked_lm_positions"].shape == (4, 10)
    assert set(out) == {"input_word_ids", "input_mask", "masked_lm_positions", "masked_lm_ids",
                        "masked_lm_weights"}


def _single(repeats):
    """One sequence in every batch, so only the seeds make the masks differ."""
    ids, mask = _batch(1, 40)
    single = tf.data.Dataset.from_tensors({"input_word_ids": ids, "input_word_ids_mask": mask})
    return single.repeat(repeats)


def _positions(masked):
    return [batch["masked_lm_positions"].numpy() for batch in masked]


def test_add_masks_fresh_per_batch_and_reproducible():
    stream = _positions(add_masks(_single(6), seed=7, **MASKING))
    assert len({positions.tobytes() for positions in stream}) == 6
    np.testing.assert_array_equal(stream, _positions(add_masks(_single(6), seed=7, **MASKING)))
    assert not np.array_equal(stream, _positions(add_masks(_single(6), seed=8, **MASKING)))


def test_add_masks_fresh_each_epoch_when_repeated_after():
    stream = _positions(add_masks(_single(3), seed=7, **MASKING).repeat(2))
    assert len({positions.tobytes() for positions in stream}) == 6


def test_add_masks_fresh_when_iterated_again_and_resumable_with_skip():
    masked = add_masks(_single(3), seed=7, **MASKING)
    first, second = _positions(masked), _positions(masked)
    assert not np.array_equal(first, second)
    # skip(n) on a fresh pipeline continues the stream exactly, as the training loop's resume needs.
    resumed = _positions(add_masks(_single(3), seed=7, **MASKING).skip(1))
    np.testing.assert_array_equal(first[1:], resumed)


def test_masks_batches_of_an_mlm_build(tmp_path):
    path = str(tmp_path / "train.jsonl")
    write_dialogues(corpus(n=20, seed=1), path)
    options = BuildOptions(max_length=24, num_shards=2, merge_consecutive_turns=False, min_turns=1)
    build(path, str(tmp_path / "mlm"), make_builder("mlm"), TOKENIZER, options)
    specials = (TOKENIZER.pad_id, TOKENIZER.cls_id, TOKENIZER.sep_id, TOKENIZER.mask_id)

    def stream():
        batches = make_dataset(str(tmp_path / "mlm"), 8, training=True, seed=3, repeat=True)
        masked = add_masks(batches, seed=3, vocab_size=TOKENIZER.vocab_size,
                           mask_id=TOKENIZER.mask_id, special_ids=specials)
        return list(masked.take(30))  # several passes over the ~70 utterances

    first, again = stream(), stream()
    for a, b in zip(first, again):
        for name in a:
            np.testing.assert_array_equal(a[name].numpy(), b[name].numpy())
    for batch in first:
        real = batch["masked_lm_weights"].numpy() == 1
        assert real.any(axis=1).all()
        assert not np.isin(batch["masked_lm_ids"].numpy()[real], specials).any()
