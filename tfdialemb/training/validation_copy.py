"""Validation in another precision than training's: a copy of the method built in the
validation's policy, given the trained weights before each validation.

Training may compute in bfloat16 (`--mixed_precision=auto` on a capable CPU) while validation,
like every inference command, computes in float32 (`tfdialemb.core.precision.INFERENCE_POLICY`), so a
validated figure is the one `evaluate` gives for the saved checkpoint. Keras fixes a layer's
compute type when the layer is made, so the copy is a second model. Its weights come through a
checkpoint of the trained method, matched by object graph (layers the copy builds only when
first called are restored as they are built), written to a hidden `.tmp-` directory of the model
directory and deleted after; an interrupted run's leftover is removed by the next run.
"""
import os
import shutil
import tempfile
from typing import Callable, Dict

import tensorflow as tf

from tfdialemb.methods.models.base import Method
from tfdialemb.core.precision import policy_scope


class ValidationCopy:
    """`validate(method, step)` run on a copy of `method` built by `build_method` in `policy`.

    Built before the training loop builds its own method: `build_method` seeds the global random
    generators, which the loop's build seeds again after it.
    """

    def __init__(self, build_method: Callable[[], Method], policy: str, model_dir: str,
                 validate: Callable[[Method, int], Dict[str, float]]):
        with policy_scope(policy):
            self.copy = build_method()
        self.policy = policy
        self.model_dir = model_dir
        self.validate = validate
        self._checkpoint = tf.train.Checkpoint(model=self.copy)

    def __call__(self, method: Method, step: int) -> Dict[str, float]:
        self.sync(method)
        return self.validate(self.copy, step)

    def sync(self, method: Method) -> None:
        """Gives the copy `method`'s current weights."""
        staging = tempfile.mkdtemp(prefix=".tmp-validation-", dir=self.model_dir)
        try:
            path = tf.train.Checkpoint(model=method).write(os.path.join(staging, "weights"))
            status = self._checkpoint.read(path)
            status.assert_existing_objects_matched()
            status.expect_partial()  # values of layers the copy has not built yet wait for them
        finally:
            shutil.rmtree(staging, ignore_errors=True)
