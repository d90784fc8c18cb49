"""The context-response model's (context, response) pairs, drawn from whole dialogues in tf.data.

One pair per dialogue per pass, as the released `ContextResponseDataset.__getitem__` draws it
(voorhs/dialogue-augmentation mylib/datasets/pairs_dataset.py; the thesis, appendix 1.1, says
only that a pair's negatives come from other dialogues): the response is utterance k, uniform in
[1, n - 2] (the last utterance is never a response there), or k = 1 in a two-utterance dialogue;
its context the at most `context` utterances before it, oldest first. A shorter context keeps its
utterances in the first slots and leaves the last ones empty: the released `ContextEncoderConcat`
pads the concatenated embeddings with zeros at the end (mylib/modeling/pairwise/context_encoders.py
`pad_missing_utterances`). Draws are stateless per batch (`map_with_batch_seeds`), fresh on every
pass and replayed exactly by a resumed run.
"""
from typing import Dict

import tensorflow as tf

from tfdialemb.data.batch_seeds import map_with_batch_seeds
from tfdialemb.data.examples.utterances import FEATURE

CONTEXT, RESPONSE = "context", "response"


def response_positions(turns: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
    """[B] int32: the drawn response position k of each dialogue of `turns` [B] utterances."""
    turns = tf.cast(turns, tf.int32)
    choices = tf.maximum(turns - 2, 1)
    draw = tf.random.stateless_uniform(tf.shape(turns), seed)
    return 1 + tf.minimum(tf.cast(draw * tf.cast(choices, tf.float32), tf.int32), choices - 1)


def context_slots(positions: tf.Tensor, context: int) -> Dict[str, tf.Tensor]:
    """For responses at `positions` [B]: `turns` [B, context], the utterance each context slot holds
    (oldest first, left-aligned), and `filled` [B, context], whether the slot holds one."""
    start = tf.maximum(positions - context, 0)
    turns = start[:, tf.newaxis] + tf.range(context, dtype=positions.dtype)[tf.newaxis, :]
    return {"turns": turns, "filled": turns < positions[:, tf.newaxis]}


def draw_pairs(batch: Dict[str, tf.Tensor], seed: tf.Tensor, context: int) -> Dict[str, tf.Tensor]:
    """`context` [B, C, T] / `context_mask` and `response` [B, T] / `response_mask` from an
    `utterances` batch [B, N, T]; T trimmed to the longest text drawn."""
    if context < 1:
        raise ValueError(f"context must be at least 1 utterance, got {context}")
    ids, mask = batch[FEATURE], batch[f"{FEATURE}_mask"]
    turns = tf.reduce_sum(tf.cast(tf.reduce_any(mask > 0, axis=-1), tf.int32), axis=1)
    with tf.control_dependencies([tf.debugging.assert_greater_equal(
            turns, 2, message="a context-response pair needs dialogues of at least 2 utterances")]):
        positions = response_positions(turns, seed)
    slots = context_slots(positions, context)
    kept = tf.cast(slots["filled"], ids.dtype)[:, :, tf.newaxis]
    index = tf.minimum(slots["turns"], tf.shape(ids)[1] - 1)
    context_ids = tf.gather(ids, index, batch_dims=1) * kept
    context_mask = tf.gather(mask, index, batch_dims=1) * tf.cast(kept, mask.dtype)
    response_ids = tf.gather(ids, positions, batch_dims=1)
    response_mask = tf.gather(mask, positions, batch_dims=1)
    length = tf.maximum(tf.reduce_max(tf.reduce_sum(context_mask, axis=-1)),
                        tf.reduce_max(tf.reduce_sum(response_mask, axis=-1)))
    return {CONTEXT: context_ids[..., :length], f"{CONTEXT}_mask": context_mask[..., :length],
            RESPONSE: response_ids[..., :length], f"{RESPONSE}_mask": response_mask[..., :length]}


def context_response_batches(dataset: tf.data.Dataset, seed: int, context: int) -> tf.data.Dataset:
    """`draw_pairs` over every batch of an `utterances` dataset, fresh on every pass."""
    return map_with_batch_seeds(dataset, seed, lambda batch, batch_seed: draw_pairs(batch, batch_seed, context))
