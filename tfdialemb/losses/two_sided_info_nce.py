"""Two-sided in-batch InfoNCE: the context-response model's contrastive loss, gathered across replicas.

The augmentation thesis (appendix 1.1) trains its context-response model "with a contrastive loss
with in-batch negatives", temperature 0.05, and gives no formula; the released default
(voorhs/dialogue-augmentation mylib/learners/loss.py `contrastive_cross`, the `loss` default of
mylib/learners/pairwise.py) contrasts each pair with both its row and its column of the score
matrix S = C Rᵀ / τ:

    loss_i = -log exp(S_ii) / (Σ_j exp(S_ij) + Σ_j exp(S_ji) - exp(S_ii))

every other response of the batch a negative of context i, and every other context a negative of
response i; the true pair counts once. The released code sums over its batch; the training loop
here averages, which rescales the gradient by the batch size only. j runs over the *global* batch
(the released code kept it per GPU).
"""
import tensorflow as tf

from tfdialemb.losses.cross_replica import gather_across_replicas, replica_offset


def two_sided_info_nce(contexts: tf.Tensor, responses: tf.Tensor, temperature: float) -> tf.Tensor:
    """Per-example loss [local B] from contexts and responses [local B, d], both L2-normalised by
    the caller (cosine scores); under a strategy, local pair i is row offset + i of the gathered
    [replica 0's rows, replica 1's rows, ...]."""
    contexts = tf.cast(contexts, tf.float32)
    responses = tf.cast(responses, tf.float32)
    local = tf.shape(contexts)[0]
    labels = replica_offset(local) + tf.range(local)
    rows = tf.matmul(contexts, gather_across_replicas(responses), transpose_b=True) / temperature
    columns = tf.matmul(responses, gather_across_replicas(contexts), transpose_b=True) / temperature
    # The column's own entry is the positive, already counted in the row: drop it there.
    columns += tf.one_hot(labels, tf.shape(columns)[1], on_value=float("-inf"), off_value=0.0)
    positive = tf.gather(rows, labels, batch_dims=1)
    return tf.reduce_logsumexp(tf.concat([rows, columns], axis=1), axis=1) - positive
