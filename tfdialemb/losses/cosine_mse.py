"""Curved contrastive learning's regression of cosines onto target scores (triple-encoders paper,
Sec. 2 and Eq. 1-2).

CCL enforces cos(E([B] u_i), E([A] u_k)) = 1 - (k-i)/l and C3L enforces Eq. 1 (and 0 for the
hard negatives of Eq. 2) "through an MSE loss"; the released code uses sentence-transformers'
CosineSimilarityLoss, MSE(cos(u, v), label) averaged over the batch (sentence-transformers 2.2.2 `losses/CosineSimilarityLoss.py`,
5.2). The mean over the batch is the training loop's.
"""
import tensorflow as tf

from tfdialemb.core.similarity import paired_cosine


def cosine_mse(anchor: tf.Tensor, other: tf.Tensor, target: tf.Tensor) -> tf.Tensor:
    """Per-example (cos(anchor, other) - target)^2 [B] in float32.

    CCL: anchor = E([S] [B] u_i), other = E([A] u_k). C3L (Eq. 1): anchor is the unnormalised
    mean (E([B1] u_i) + E([B2] u_j)) / 2 of the two before-space embeddings, as in the paper
    and the released CosineSimilarityTripleEncoderLoss (UKPLab/acl2024-triple-encoders
    triple_encoders/losses/CosineSimilarityTripleEncoderLoss.py).
    """
    return tf.square(paired_cosine(anchor, other) - tf.cast(target, tf.float32))
