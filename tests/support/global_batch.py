"""Runs a per-example loss over one global batch under a strategy, for checks that N replicas
compute what one device computes on the same rows."""
import numpy as np
import tensorflow as tf


def loss_and_gradient(strategy, inputs, initial_weight, per_example_loss):
    """(mean loss over the global batch, its gradient) for `per_example_loss(local_inputs, w)`, `w`
    a variable starting at `initial_weight` and the rows of `inputs` (a tuple of arrays) split
    between the replicas."""
    rows = len(inputs[0])
    with strategy.scope():
        weight = tf.Variable(np.asarray(initial_weight, np.float32))
    data = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(inputs).batch(rows))

    def step(batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(per_example_loss(batch, weight)) / float(rows)
        return loss, tape.gradient(loss, weight)

    loss, grad = strategy.run(tf.function(step), args=(next(iter(data)),))
    total = lambda v: strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None).numpy()  # noqa: E731
    return total(loss), total(grad)
