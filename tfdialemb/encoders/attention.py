"""BERT's self-attention with its two products as head-major batched matmuls.

Keras' `MultiHeadAttention` takes the scores as `einsum("aecd,abcd->acbe", key, query)`. TensorFlow's
einsum contracts key first, so it writes the [B, N, S, T] product and then transposes the whole
score matrix into [B, N, T, S], a pass that on a CPU costs more than the product itself
(docs/benchmark.md). Here query and key are transposed to [B, N, T, H] (a fraction of the scores'
size) and multiplied in the scores' own order; the values likewise. Same weights, same dropout
draws, same masked softmax.
"""
import math

import tensorflow as tf
import tf_keras

from tfdialemb.encoders.layer_adoption import adopt_class

HEAD_MAJOR = [0, 2, 1, 3]
"""[B, T, N, H] ↔ [B, N, T, H]."""


@tf_keras.saving.register_keras_serializable(package="tfdialemb")
class HeadMajorAttention(tf_keras.layers.MultiHeadAttention):
    """`tf_keras.layers.MultiHeadAttention` whose attention over one sequence axis (BERT's) runs as
    `tf.matmul` on head-major operands; any other attention axes keep Keras' einsum."""

    def _compute_attention(self, query, key, value, attention_mask=None, training=None):
        if query.shape.rank != 4 or tuple(self._attention_axes) != (1,):
            return super()._compute_attention(query, key, value, attention_mask, training)
        query = tf.multiply(query, 1.0 / math.sqrt(float(self._key_dim)))
        scores = tf.matmul(tf.transpose(query, HEAD_MAJOR), tf.transpose(key, HEAD_MAJOR), transpose_b=True)
        scores = self._masked_softmax(scores, attention_mask)
        dropped = self._dropout_layer(scores, training=training)
        output = tf.transpose(tf.matmul(dropped, tf.transpose(value, HEAD_MAJOR)), HEAD_MAJOR)
        return output, scores


def adopt_head_major_attention(layer: tf_keras.layers.Layer) -> int:
    """Turns every plain `tf_keras.layers.MultiHeadAttention` inside the built `layer` into a
    `HeadMajorAttention`; returns how many."""
    return adopt_class(layer, tf_keras.layers.MultiHeadAttention, HeadMajorAttention)
