"""Dropout from 16-bit random integers: about half the cost of `tf.nn.dropout` on CPU, and closer
to the asked rate under bfloat16.

`tf.nn.dropout` draws one float per element in the input's dtype and selects. On one CPU core
that was 12 % of a MiniLM training step (bench `--what=training`): Philox yields 32 random bits
per element and `SelectV2` on bfloat16 costs five multiplies. Here each 32-bit draw serves two
elements, and the kept/dropped mask is multiplied in. Under `mixed_bfloat16` `tf.nn.dropout` also
draws 7-bit uniforms, so rate 0.1 dropped 13/128 = 10.16 % of the elements; here the drop
probability is the rate rounded to a multiple of 2^-16 (0.1 → 0.100006). As in `tf.nn.dropout`
the kept elements are scaled by 1 / (1 - rate) rounded to the input's dtype (1.109375 for rate
0.1 in bfloat16), and a multiply, unlike a select, keeps a dropped NaN.

Model Garden builds its Dropout layers inside `BertEncoderV2` (inside each transformer block and
its attention) with no way to pass a class, so `adopt_mask_dropout` converts the built layers in
place (`tfdialemb.encoders.layer_adoption`); they keep their rate and seed and have no variables.

Keras draws a Dropout's random numbers from stateful kernels whose position no checkpoint holds,
so a training run resumed from a checkpoint would drop other elements than the uninterrupted run.
`draw_seeds_from` gives every dropout layer of a model one `tf.random.Generator` instead, whose
state the training loop checkpoints: resumed, the run draws the masks it would have drawn.
"""
import numbers

import tensorflow as tf
import tf_keras

from tfdialemb.encoders.layer_adoption import adopt_class

MASK_LEVELS = 2 ** 16


@tf_keras.saving.register_keras_serializable(package="tfdialemb")
class MaskDropout(tf_keras.layers.Dropout):
    """While training, zeroes each element with probability `drop_probability(rate)` and scales
    the rest by 1 / (1 - rate); the identity otherwise. Each call draws its seed from the
    generator `draw_seeds_from` gave it, else the way Keras' Dropout draws its random numbers
    (`self._random_generator`: the global seed, or the layer's own), so masks change at every
    call and repeat under the same seeds."""

    seed_generator = None
    """The `tf.random.Generator` each call draws its seed from (None: Keras' own draw)."""

    @tf.__internal__.tracking.no_automatic_dependency_tracking
    def draw_from(self, generator: tf.random.Generator) -> None:
        """Draws every later call's seed from `generator`, which stays out of the layer's
        checkpoint (its owner saves it)."""
        self.seed_generator = generator

    def call(self, inputs, training=None):
        if self.rate == 0:
            return tf.identity(inputs)
        if self.noise_shape is not None:
            raise ValueError("MaskDropout draws one mask value per element; noise_shape is not supported")
        if training is None:
            training = tf_keras.backend.learning_phase()
        return tf.__internal__.smart_cond.smart_cond(training, lambda: self._drop(inputs),
                                                     lambda: tf.identity(inputs))

    def _drop(self, inputs):
        threshold = round(drop_probability(self.rate) * MASK_LEVELS)
        if self.seed_generator is not None:
            call_seed = self.seed_generator.make_seeds(1)[:, 0]
        else:
            call_seed = self._random_generator.random_uniform([2], minval=0, maxval=tf.int32.max, dtype=tf.int32)
        count = tf.size(inputs)
        words = tf.random.stateless_uniform([(count + 1) // 2], call_seed, minval=None, maxval=None,
                                            dtype=tf.uint32)
        draws = tf.reshape(tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:count], tf.shape(inputs))
        keep = tf.cast(draws >= tf.constant(threshold, tf.uint16), inputs.dtype)
        return inputs * (keep * tf.cast(1.0 / (1.0 - self.rate), inputs.dtype))


def drop_probability(rate: float) -> float:
    """`rate` rounded to a multiple of 2^-16 within [2^-16, 1 - 2^-16]: what MaskDropout drops."""
    if not 0 < rate < 1:
        raise ValueError(f"a dropout rate must be in (0, 1), got {rate}")
    return min(max(round(rate * MASK_LEVELS), 1), MASK_LEVELS - 1) / MASK_LEVELS


def adopt_mask_dropout(layer: tf_keras.layers.Layer) -> int:
    """Turns every plain `tf_keras.layers.Dropout` with a fixed rate inside the built `layer` into
    a `MaskDropout`; returns how many."""
    return adopt_class(layer, tf_keras.layers.Dropout, MaskDropout,
                       lambda module: module.noise_shape is None and isinstance(module.rate, numbers.Real))


def draw_seeds_from(model: tf_keras.layers.Layer, generator: tf.random.Generator) -> int:
    """Makes every Dropout of the built `model` a `MaskDropout` drawing its seeds from
    `generator`; returns how many there are. A layer that draws random numbers some other way
    is refused: its draws would not resume from a checkpoint."""
    adopt_mask_dropout(model)
    dropouts = 0
    for module in model._flatten_layers(include_self=False):  # pylint: disable=protected-access
        if isinstance(module, MaskDropout):
            module.draw_from(generator)
            dropouts += 1
        elif isinstance(module, tf_keras.__internal__.layers.BaseRandomLayer):
            raise ValueError(f"{module.name} ({type(module).__name__}) draws random numbers that a checkpoint "
                             "cannot hold, so a resumed run would differ from an uninterrupted one")
    return dropouts
