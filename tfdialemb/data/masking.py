"""Masked-LM masking inside tf.data, by google-research/bert's `create_masked_lm_predictions` rules.

Masks are drawn per batch in the input pipeline rather than once at build time, so every pass over
the corpus sees fresh masks (RoBERTa's dynamic masking; DialogueCSE stage 1 uses BERT's
mask prob 0.15 with at most 10 predictions per sequence). All randomness is stateless: a batch's
masks depend only on its seed.
"""
from typing import Dict, Sequence

import tensorflow as tf

from tfdialemb.data.batch_seeds import map_with_batch_seeds
from tfdialemb.data.choices import MASK_PROB, MAX_PREDICTIONS

# Of the chosen positions: 80% become [MASK], 10% a random token, 10% keep their token.
MASK_TOKEN_FRACTION = 0.8
RANDOM_TOKEN_FRACTION = 0.1


def mask_tokens(
    word_ids: tf.Tensor,
    token_mask: tf.Tensor,
    *,
    vocab_size: int,
    mask_id: int,
    special_ids: Sequence[int],
    mask_prob: float = MASK_PROB,
    max_predictions: int = MAX_PREDICTIONS,
    seed: tf.Tensor,
) -> Dict[str, tf.Tensor]:
    """Masks a batch `word_ids` [B, T] whose real tokens are where `token_mask` [B, T] is non-zero.

    Per row, as google-research/bert: n = min(max_predictions, max(1, round(len · mask_prob)))
    with len the row's real tokens, specials included, and round half to even like Python's;
    n positions drawn uniformly among the real tokens that are not in `special_ids` (fewer when
    the row has fewer). The random replacement is uniform over the whole vocabulary, as there.

    Returns the encoder inputs `input_word_ids` (masked), `input_mask`, and the targets
    `masked_lm_positions` / `masked_lm_ids` [B, max_predictions] int32 (ascending, then
    zero-padded) with `masked_lm_weights` float32 (1 for a real prediction, 0 for padding).
    """
    if not 0 < mask_prob <= 1 or max_predictions < 1:
        raise ValueError(f"need 0 < mask_prob <= 1 and max_predictions >= 1, got {mask_prob} and "
                         f"{max_predictions}")
    word_ids = tf.convert_to_tensor(word_ids, tf.int32)
    is_token = tf.cast(token_mask, tf.bool)
    candidates = tf.logical_and(is_token, tf.logical_not(_isin(word_ids, special_ids)))
    select_seed, action_seed, random_token_seed = tf.unstack(
        tf.random.experimental.stateless_split(seed, 3))

    lengths = tf.reduce_sum(tf.cast(is_token, tf.float64), axis=1)
    wanted = tf.clip_by_value(tf.round(lengths * mask_prob), 1.0, float(max_predictions))
    num_candidates = tf.reduce_sum(tf.cast(candidates, tf.int32), axis=1)
    counts = tf.minimum(tf.cast(wanted, tf.int32), num_candidates)  # [B]

    # A uniform subset: the candidates with the highest random scores. Non-candidates score -1,
    # and extra columns let top_k take max_predictions even from rows shorter than that.
    batch, length = tf.shape(word_ids)[0], tf.shape(word_ids)[1]
    scores = tf.where(candidates, tf.random.stateless_uniform([batch, length], select_seed), -1.0)
    scores = tf.pad(scores, [[0, 0], [0, tf.maximum(max_predictions - length, 0)]],
                    constant_values=-1.0)
    _, chosen = tf.math.top_k(scores, k=max_predictions)
    is_prediction = tf.range(max_predictions)[tf.newaxis, :] < counts[:, tf.newaxis]
    beyond = tf.shape(scores)[1]  # sorts after every real position
    positions = tf.sort(tf.where(is_prediction, chosen, beyond), axis=1)
    positions = tf.where(is_prediction, positions, 0)
    original = tf.gather(word_ids, positions, batch_dims=1)

    action = tf.random.stateless_uniform([batch, max_predictions], action_seed)
    random_tokens = tf.random.stateless_uniform(
        [batch, max_predictions], random_token_seed, minval=0, maxval=vocab_size, dtype=tf.int32)
    replacement = tf.where(
        action < MASK_TOKEN_FRACTION,
        tf.fill(tf.shape(original), tf.constant(mask_id, tf.int32)),
        tf.where(action < MASK_TOKEN_FRACTION + RANDOM_TOKEN_FRACTION, random_tokens, original),
    )

    slots = tf.where(is_prediction)  # [N, 2]: (row, slot) of every real prediction
    columns = tf.cast(tf.gather_nd(positions, slots), tf.int64)
    masked_ids = tf.tensor_scatter_nd_update(
        word_ids, tf.stack([slots[:, 0], columns], axis=1), tf.gather_nd(replacement, slots))
    return {
        "input_word_ids": masked_ids,
        "input_mask": tf.cast(is_token, tf.int32),
        "masked_lm_positions": positions,
        "masked_lm_ids": tf.where(is_prediction, original, 0),
        "masked_lm_weights": tf.cast(is_prediction, tf.float32),
    }


def add_masks(dataset: tf.data.Dataset, seed: int, **mask_kwargs) -> tf.data.Dataset:
    """Turns `make_dataset` batches of the `mlm` build (`input_word_ids`, `input_word_ids_mask`)
    into masked-LM batches (see `mask_tokens`, which takes `mask_kwargs`), with fresh masks every
    pass and an exactly replayable stream (`map_with_batch_seeds`)."""

    def mask(batch, batch_seed):
        return mask_tokens(batch["input_word_ids"], batch["input_word_ids_mask"],
                           seed=batch_seed, **mask_kwargs)

    return map_with_batch_seeds(dataset, seed, mask)


def _isin(ids: tf.Tensor, values: Sequence[int]) -> tf.Tensor:
    values = tf.constant(list(values), tf.int32)
    return tf.reduce_any(tf.equal(ids[..., tf.newaxis], values), axis=-1)
