"""What the shared training loop needs from a method."""
from typing import Dict, Tuple

import tensorflow as tf
import tf_keras

from tfdialemb.encoders.encoder import Encoder

MAIN_OBJECTIVE = "main"


class Method(tf_keras.Model):
    """An encoder plus a method's own layers, trained through `per_example_loss`.

    The training loop averages the per-example losses over the global batch (so N replicas at
    global batch B train exactly as one device at batch B), applies gradients to
    `trainable_variables`, and checkpoints the model with the encoder reachable as `encoder`.
    A method creates every variable in its constructor (heads built for the encoder's width), so
    the optimizer's slots exist before the first step and `load_method` restores every weight
    when it rebuilds the model.
    """

    objectives: Tuple[str, ...] = (MAIN_OBJECTIVE,)
    """The objectives the loop trains in turn within each step, each with its own optimizer (the
    released triple-encoders code alternates its dialogue and NLI objectives so); one objective,
    `per_example_loss`, by default."""

    def __init__(self, encoder: Encoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool) -> Tuple[tf.Tensor, Dict[str, tf.Tensor]]:
        """(losses [local batch], metrics {name: per-example values [local batch]}) for one batch."""
        raise TypeError(f"{type(self).__name__} must define per_example_loss()")

    def objective_loss(self, objective: str, batch: Dict[str, tf.Tensor],
                       training: bool) -> Tuple[tf.Tensor, Dict[str, tf.Tensor]]:
        """`per_example_loss` of one of `objectives` alone."""
        if objective != MAIN_OBJECTIVE:
            raise ValueError(f"{type(self).__name__} has no objective {objective!r}")
        return self.per_example_loss(batch, training)


def leading_candidates(batch: Dict[str, tf.Tensor], negatives: int) -> Tuple[tf.Tensor, tf.Tensor]:
    """The positive and the first `negatives` stored negatives, and their mask: a build may
    store more negatives than a run uses, never fewer."""
    tf.debugging.assert_greater_equal(
        tf.shape(batch["candidates"])[1], negatives + 1,
        message="the build stores fewer negatives than --negatives asks for; rebuild")
    return batch["candidates"][:, : negatives + 1], batch["candidates_mask"][:, : negatives + 1]
