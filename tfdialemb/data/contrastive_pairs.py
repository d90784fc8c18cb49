"""augcl's positive pairs, drawn afresh in the input pipeline from the `augcl` build's turns.

Per example, one of the released code's four generators is drawn uniformly among those the
example allows (voorhs/dialogue-augmentation mylib/datasets/contrastive_dataset.py
`ContrastiveDataset.__getitem__`; n = the original's turns, randint inclusive as Python's):

  - precomputed: the original and a uniformly drawn view (`pair="orig_aug"`), or two distinct
    views (`pair="aug_aug"`; with a single view, the original and that view);
  - halves: split at s = 1 if n = 2, else randint(1, n - 2): turns [0, s) and [s, n);
  - response_selection: the same split: the (at most) 3 turns [max(0, s - 3), s) and turn s;
  - span_matching: halves if n <= 3, else start = randint(1, n - 2), end = randint(start + 1,
    n - 1): turns [start, end) and the rest, [0, start) + [end, n).

precomputed needs a view; the other three (the thesis' "on-the-fly" transforms, the "-m" sets)
need `on_the_fly` and n >= 2. `views="dropout"` replaces them all by the ablation without
augmentation: both sides the whole original, told apart only by the encoder's dropout (SimCSE's
positive; the thesis reports no such run). Both sides are packed like the dialogue embedder packs a dialogue
(`tfdialemb.text.dialogue_packing`), and every random choice comes from the batch's stateless
seed (`map_with_batch_seeds`): fresh pairs every epoch, replayed exactly on resume. The seed also
draws the released loss's swap of the two sides (`swap`, the code's `randn > 0`).
"""
from typing import Dict, NamedTuple

import tensorflow as tf

from tfdialemb.data.batch_seeds import map_with_batch_seeds
from tfdialemb.data.choices import PAIRS, VIEWS
from tfdialemb.text.dialogue_packing import (
    PackedDialogues, dense_dialogues, pack_dialogues, speaker_prefixed, speaker_prefixes)
from tfdialemb.text.tokenizer import BertTokenizer

GENERATORS = ("precomputed", "halves", "response_selection", "span_matching", "dropout")
"""The released code's four generators, drawn by `pair_ranges`, then the dropout ablation's."""
RESPONSE_CONTEXT = 3
"""Turns before the split that response_selection keeps (contrastive_dataset.py)."""
FEATURE = "dialogues"
"""The `augcl` builder's dialogue_turns feature."""


class Draws(NamedTuple):
    """Per example, uniform [0, 1) draws for each random choice of `pair_ranges`."""

    generator: tf.Tensor
    split: tf.Tensor
    start: tf.Tensor
    end: tf.Tensor
    view: tf.Tensor
    other_view: tf.Tensor


def draw(batch_size: tf.Tensor, seed: tf.Tensor) -> Draws:
    """Independent stateless uniform draws [batch_size] for each field of `Draws`."""
    seeds = tf.random.experimental.stateless_split(seed, len(Draws._fields))
    return Draws(*(tf.random.stateless_uniform([batch_size], seeds[i]) for i in range(len(Draws._fields))))


def _randint(u: tf.Tensor, low: tf.Tensor, high: tf.Tensor) -> tf.Tensor:
    """Python's randint(low, high), both ends included, from uniform u."""
    return low + tf.cast(tf.floor(u * tf.cast(high - low + 1, tf.float32)), tf.int32)


def pair_ranges(turn_counts: tf.Tensor, draws: Draws, on_the_fly: bool = True, pair: str = "orig_aug"):
    """(generator index [B], anchor ranges [B, 2, 2], positive ranges [B, 2, 2]).

    `turn_counts` [B, S]: the turns of the original then of each view (0 past the last); a
    side is the union of two half-open ranges [lo, hi) of the example's flat turn index (the
    original's turns first, then each view's), the second range empty where one suffices.
    """
    if pair not in PAIRS:
        raise ValueError(f"pair must be one of {PAIRS}, got {pair!r}")
    # A zero column: every example can name view 1, even in a batch without views.
    turn_counts = tf.pad(tf.cast(turn_counts, tf.int32), [[0, 0], [0, 1]])
    n = turn_counts[:, 0]
    views = tf.reduce_sum(tf.cast(turn_counts[:, 1:] > 0, tf.int32), axis=1)
    offsets = tf.cumsum(turn_counts, axis=1, exclusive=True)
    splittable = (n >= 2) & on_the_fly
    allowed = tf.stack([views >= 1, splittable, splittable, splittable], axis=1)
    count = tf.reduce_sum(tf.cast(allowed, tf.int32), axis=1)
    checks = [tf.debugging.assert_positive(count, message="an augcl example allows no pair generator")]
    with tf.control_dependencies(checks):
        chosen = tf.minimum(tf.cast(tf.floor(draws.generator * tf.cast(count, tf.float32)), tf.int32), count - 1)
    rank = tf.cumsum(tf.cast(allowed, tf.int32), axis=1, exclusive=True)
    generator = tf.argmax(tf.cast(allowed & tf.equal(rank, chosen[:, tf.newaxis]), tf.int32), axis=1,
                          output_type=tf.int32)

    def whole(view):
        """The flat range of dialogue `view` (0: the original)."""
        lo = tf.gather(offsets, view, batch_dims=1)
        return lo, lo + tf.gather(turn_counts, view, batch_dims=1)

    zero = tf.zeros_like(n)
    first = _randint(draws.view, zero, tf.maximum(views, 1) - 1) + 1
    other = (first + _randint(draws.other_view, zero, tf.maximum(views - 2, 0))) % tf.maximum(views, 1) + 1
    two_views = (views >= 2) & (pair == "aug_aug")
    pre_anchor = whole(tf.where(two_views, first, 0))
    pre_positive = whole(tf.where(two_views, other, first))

    split = tf.where(n == 2, 1, _randint(draws.split, tf.ones_like(n), tf.maximum(n - 2, 1)))
    start = _randint(draws.start, tf.ones_like(n), tf.maximum(n - 2, 1))
    end = _randint(draws.end, start + 1, tf.maximum(n - 1, start + 1))
    spans = n > 3

    def side(*ranges):
        return tf.stack([tf.stack(r, axis=-1) for r in ranges], axis=1)

    empty = (zero, zero)
    anchors = tf.stack([
        side(pre_anchor, empty),
        side((zero, split), empty),
        side((tf.maximum(split - RESPONSE_CONTEXT, 0), split), empty),
        side((tf.where(spans, start, 0), tf.where(spans, end, split)), empty),
    ], axis=1)
    positives = tf.stack([
        side(pre_positive, empty),
        side((split, n), empty),
        side((split, split + 1), empty),
        side((zero, tf.where(spans, start, 0)), (tf.where(spans, end, split), n)),
    ], axis=1)
    pick = lambda stacked: tf.gather(stacked, generator, batch_dims=1)  # noqa: E731
    return generator, pick(anchors), pick(positives)


def selected_turns(ranges: tf.Tensor, num_turns: tf.Tensor) -> tf.Tensor:
    """[B, num_turns] bool: the flat turn indices inside either range of `ranges` [B, 2, 2]."""
    index = tf.range(num_turns)[tf.newaxis, tf.newaxis, :]
    inside = (index >= ranges[:, :, :1]) & (index < ranges[:, :, 1:])
    return tf.reduce_any(inside, axis=1)


def pack_selected(turns: tf.Tensor, turns_mask: tf.Tensor, roles: tf.Tensor, selected: tf.Tensor,
                  tokenizer: BertTokenizer, max_length: int, prefixes: tf.RaggedTensor) -> PackedDialogues:
    """[B, S, (tokens)]: for each example and each of its S selections ([B, S, N] bool over its
    [B, N, T] turns with mask and [B, N] roles) the selected turns packed in order into one
    sequence, as the released code feeds them: each turn after its role's `prefixes`, [SEP]
    between turns and at the end."""
    batch, num_turns, sides = tf.shape(turns)[0], tf.shape(turns)[1], tf.shape(selected)[1]
    lengths = tf.reshape(tf.reduce_sum(tf.cast(turns_mask, tf.int32), axis=-1), [-1])
    rows = tf.RaggedTensor.from_uniform_row_length(
        tf.RaggedTensor.from_tensor(tf.reshape(turns, [batch * num_turns, -1]), lengths=lengths),
        tf.cast(num_turns, tf.int64))
    example = tf.repeat(tf.range(batch), sides)
    flat_selected = tf.reshape(selected, [-1, num_turns])
    pieces = tf.ragged.boolean_mask(tf.gather(rows, example), flat_selected)
    turn_roles = tf.ragged.boolean_mask(tf.gather(roles, example), flat_selected)
    packed = pack_dialogues(speaker_prefixed(pieces, turn_roles, prefixes), turn_roles, tokenizer.cls_id,
                            tokenizer.sep_id, max_length, final_separator=True)
    return PackedDialogues(*(tf.RaggedTensor.from_uniform_row_length(channel, tf.cast(sides, tf.int64))
                             for channel in packed))


def whole_original(turn_counts: tf.Tensor) -> tf.Tensor:
    """[B, 2, 2]: the original's flat range [0, n) of each example, the second range empty."""
    n = tf.cast(turn_counts[:, 0], tf.int32)
    zero = tf.zeros_like(n)
    return tf.stack([tf.stack([zero, n], axis=-1), tf.stack([zero, zero], axis=-1)], axis=1)


def contrastive_pairs(batch: Dict[str, tf.Tensor], seed: tf.Tensor, tokenizer: BertTokenizer, max_length: int,
                      prefixes: tf.RaggedTensor, on_the_fly: bool = True, pair: str = "orig_aug",
                      views: str = "augmented") -> Dict[str, tf.Tensor]:
    """An `augcl` batch → `dialogues` and `dialogues_mask` [B, 2, T] (side 0 the anchor x, side 1
    the positive y, padded to the longer), `swap` [B] int32 and `generator` [B] (index into
    GENERATORS); `prefixes` the `speaker_prefixes` of the build's roles."""
    if views not in VIEWS:
        raise ValueError(f"views must be one of {VIEWS}, got {views!r}")
    turns, mask = batch[FEATURE], batch[f"{FEATURE}_mask"]
    roles, counts = batch[f"{FEATURE}_roles"], batch[f"{FEATURE}_turn_counts"]
    size = tf.shape(turns)[0]
    pair_seed, swap_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
    if views == "dropout":
        anchors = positives = whole_original(counts)
        generator = tf.fill([size], GENERATORS.index("dropout"))
    else:
        generator, anchors, positives = pair_ranges(counts, draw(size, pair_seed), on_the_fly, pair)
    selected = tf.stack([selected_turns(ranges, tf.shape(turns)[1]) for ranges in (anchors, positives)], axis=1)
    inputs = dense_dialogues(pack_selected(turns, mask, roles, selected, tokenizer, max_length, prefixes),
                             tokenizer.pad_id)
    swap = tf.random.stateless_normal([size], swap_seed) > 0
    return {"dialogues": inputs.ids, "dialogues_mask": inputs.mask, "swap": tf.cast(swap, tf.int32),
            "generator": generator}


def add_contrastive_pairs(dataset: tf.data.Dataset, seed: int, tokenizer: BertTokenizer, max_length: int,
                          num_roles: int = 2, on_the_fly: bool = True, pair: str = "orig_aug",
                          views: str = "augmented") -> tf.data.Dataset:
    """`contrastive_pairs` over `make_dataset` batches of an `augcl` build (roles below
    `num_roles`), seeded per batch."""
    if pair not in PAIRS:
        raise ValueError(f"pair must be one of {PAIRS}, got {pair!r}")
    prefixes = speaker_prefixes(tokenizer, num_roles)

    @tf.autograph.experimental.do_not_convert
    def pairs(batch, batch_seed):
        return contrastive_pairs(batch, batch_seed, tokenizer, max_length, prefixes, on_the_fly, pair, views)

    return map_with_batch_seeds(dataset, seed, pairs)
