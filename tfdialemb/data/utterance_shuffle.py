"""The listwise sorting model's inputs: each dialogue's utterances in a fresh random order, in tf.data.

The released model sees dialogues in their true order and has no positional input
(voorhs/dialogue-augmentation train_listwise.py: `embed_turn_ids=False`), so only its argsort's
tie-break could profit from that order; shuffling here, with each utterance's true position kept
beside it, makes the inputs what the thesis describes (appendix 1.2: the model "sorts" utterances)
and the metric independent of the stored order. Draws are stateless per batch
(`map_with_batch_seeds`), fresh on every pass.
"""
from typing import Dict

import tensorflow as tf

from tfdialemb.data.batch_seeds import map_with_batch_seeds
from tfdialemb.data.examples.utterances import FEATURE

POSITIONS = "positions"


def shuffle_utterances(batch: Dict[str, tf.Tensor], seed: tf.Tensor) -> Dict[str, tf.Tensor]:
    """`utterances` [B, N, T] and `utterances_mask` with each dialogue's utterances permuted
    uniformly (empty rows stay last), and `positions` [B, N] int32, each row's place in its
    dialogue (padding rows keep their own index)."""
    ids, mask = batch[FEATURE], batch[f"{FEATURE}_mask"]
    present = tf.reduce_any(mask > 0, axis=-1)
    keys = tf.where(present, tf.random.stateless_uniform(tf.shape(present), seed), 2.0)
    order = tf.argsort(keys, axis=1, stable=True)
    return {FEATURE: tf.gather(ids, order, batch_dims=1),
            f"{FEATURE}_mask": tf.gather(mask, order, batch_dims=1),
            POSITIONS: order}


def shuffled_batches(dataset: tf.data.Dataset, seed: int) -> tf.data.Dataset:
    """`shuffle_utterances` over every batch of an `utterances` dataset, fresh on every pass."""
    return map_with_batch_seeds(dataset, seed, shuffle_utterances)
