"""The augmentation thesis' projector (appendix 1.1, Fig. 3a): a vector to an L2-normalised projection.

As released (voorhs/dialogue-augmentation mylib/utils/modeling/projector.py, "taken from linking
prediction paper code"): a square linear map, dropout, a linear map to the projection width, both
without bias and orthogonally initialised, then L2 normalisation; no activation between them.
Kept in float32 under mixed precision, as the method heads are.
"""
import tensorflow as tf
import tf_keras


class Projector(tf_keras.layers.Layer):
    """[..., d] → [..., width], unit length; `dropout` between the two maps while training."""

    def __init__(self, width: int, dropout: float = 0.1, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        if width < 1 or not 0.0 <= dropout < 1.0:
            raise ValueError(f"a projector needs a positive width and dropout in [0, 1), got {width} and {dropout}")
        self.width = width
        self.dropout = dropout
        self.dropout_layer = tf_keras.layers.Dropout(dropout, dtype="float32")

    def build(self, input_shape):
        size = int(input_shape[-1])
        self.linear = self.add_weight("linear", shape=[size, size], initializer=tf_keras.initializers.Orthogonal())
        self.projection = self.add_weight("projection", shape=[size, self.width],
                                          initializer=tf_keras.initializers.Orthogonal())
        super().build(input_shape)

    def call(self, inputs, training=None):
        hidden = tf.einsum("...i,ij->...j", tf.cast(inputs, tf.float32), self.linear)
        hidden = self.dropout_layer(hidden, training=training)
        return tf.math.l2_normalize(tf.einsum("...i,ij->...j", hidden, self.projection), axis=-1)

    def get_config(self):
        return {**super().get_config(), "width": self.width, "dropout": self.dropout}
