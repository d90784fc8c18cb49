"""Triple-encoder and CCL inference scores (triple-encoders paper Sec. 4, Eq. 3-4, Appendix B) on plain tensors.

Shapes: a history of h utterances encoded in the before spaces, b1 [h, D] (E([B1] u_i)) and
b2 [h, D] (E([B2] u_j)); C candidates encoded in the after space, after [C, D] (E([A] u_f)).
Row j of the triangle of triple-encoders Table 1 holds the mixes of [B2] u_j with every earlier [B1] u_i.

All functions are TensorFlow ops with dynamic shapes and keep the dtype they are given, so a
SavedModel can run them on state held by its client; nothing is normalised at encoding time
(the released code normalises only mixes and candidates, UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForSequenceModeling.py:_contextualize_sequence).
"""
import numbers
from typing import Optional

import tensorflow as tf


def mix(b1: tf.Tensor, b2: tf.Tensor) -> tf.Tensor:
    """[..., D]: normalize((b1 + b2) / 2), the contextualised state of Eq. 3 (cosine ignores the
    length, the released code normalises, UKPLab/acl2024-triple-encoders
    triple_encoders/TripleEncodersForSequenceModeling.py:_contextualize_sequence)."""
    return tf.math.l2_normalize((b1 + b2) / 2, axis=-1)


def pairwise_mixes(b1: tf.Tensor, b2: tf.Tensor) -> tf.Tensor:
    """[n, m, D]: the mix of every row i of b1 [n, D] with every row j of b2 [m, D]."""
    return mix(b1[:, tf.newaxis, :], b2[tf.newaxis, :, :])


def pair_mixes(b1: tf.Tensor, b2: tf.Tensor, pairs: tf.Tensor) -> tf.Tensor:
    """[P, D]: the mix of b1[i] with b2[j] for each utterance pair (i, j) of `pairs` [P, 2]."""
    return mix(tf.gather(b1, pairs[:, 0]), tf.gather(b2, pairs[:, 1]))


def latest_row_sum(b1_history: tf.Tensor, b2_latest: tf.Tensor) -> tf.Tensor:
    """[D]: S_j = Σ_{i<j} normalize((b1[i] + b2[j]) / 2), the new row of Table 1 when utterance j
    joins a history whose earlier utterances are `b1_history` [j, D]; zeros when j = 0."""
    return tf.reduce_sum(mix(b1_history, b2_latest), axis=0)


def row_sums(b1: tf.Tensor, b2: tf.Tensor) -> tf.Tensor:
    """[h, D]: the row sums S_j = Σ_{i<j} mix_ij of every row j of the history's triangle."""
    h = tf.shape(b1)[0]
    earlier = tf.range(h)[:, tf.newaxis] < tf.range(h)[tf.newaxis, :]
    return tf.reduce_sum(pairwise_mixes(b1, b2) * tf.cast(earlier, b1.dtype)[..., tf.newaxis],
                         axis=0)


def check_k_last_rows(k_last_rows: Optional[int]) -> Optional[int]:
    """`k_last_rows` itself when it is None or a positive int; a ValueError otherwise."""
    if k_last_rows is not None and (isinstance(k_last_rows, bool) or not isinstance(
            k_last_rows, numbers.Integral) or k_last_rows < 1):
        raise ValueError(f"k_last_rows must be a positive int or None, got {k_last_rows!r}")
    return None if k_last_rows is None else int(k_last_rows)


def last_rows(rows: tf.Tensor, k_last_rows: Optional[int]) -> tf.Tensor:
    """The last `k_last_rows` rows of `rows` [h, ...] (all when None): the k-last-rows variant
    of triple-encoders Sec. 4.1.2, [B2] u_j only for j >= h - k."""
    k_last_rows = check_k_last_rows(k_last_rows)
    if k_last_rows is None:
        return rows
    return rows[tf.maximum(tf.shape(rows)[0] - k_last_rows, 0):]


def scores_from_row_sums(sums: tf.Tensor, after: tf.Tensor,
                         k_last_rows: Optional[int] = None) -> tf.Tensor:
    """[C]: Eq. 3 from row sums [h, D], (Σ_{rows} S_j) · normalize(after_c): one vector per
    history, so a turn costs one [C, D] product whatever h is."""
    total = tf.reduce_sum(last_rows(sums, k_last_rows), axis=0)
    return tf.linalg.matvec(tf.math.l2_normalize(after, axis=-1), total)


def c3l_scores(b1: tf.Tensor, b2: tf.Tensor, after: tf.Tensor,
               k_last_rows: Optional[int] = None) -> tf.Tensor:
    """[C]: Eq. 3, Σ_{i<j} cos((b1[i] + b2[j]) / 2, after_c), j >= h - k with `k_last_rows`."""
    return scores_from_row_sums(row_sums(b1, b2), after, k_last_rows)


def triangle_pairs(h: tf.Tensor, k_last_rows: Optional[int] = None) -> tf.Tensor:
    """[P, 2] int32: the (i, j) of the mixes of a history of length h, i < j, row by row
    (j ascending, then i), rows j >= h - k only with `k_last_rows`."""
    i, j = tf.meshgrid(tf.range(h), tf.range(h))
    keep = i < j
    k_last_rows = check_k_last_rows(k_last_rows)
    if k_last_rows is not None:
        keep &= j >= h - k_last_rows
    return tf.stack([tf.boolean_mask(i, keep), tf.boolean_mask(j, keep)], axis=-1)


@tf.function(reduce_retracing=True)
def maxsim_scores_from_mixes(mixes: tf.Tensor, pairs: tf.Tensor, after: tf.Tensor) -> tf.Tensor:
    """[C]: MaxSim (triple-encoders Appendix B, Algorithm 1) over mixes [P, D] of utterance pairs [P, 2].

    Per candidate, the mixes are taken in descending cosine (ties in input order); a mix's cosine
    is added when at least one of its two utterances is not yet in an added mix, then both are
    marked; the score is the mean of the added cosines (0 without mixes). Algorithm 1 indexes
    the sorted tuples with the unsorted position; this follows its description in the text.
    A tf.function: the greedy pass is a sequential loop over the P mixes.
    """
    cosines = tf.linalg.matmul(tf.math.l2_normalize(after, axis=-1),
                               tf.math.l2_normalize(mixes, axis=-1), transpose_b=True)  # [C, P]
    order = tf.argsort(cosines, axis=-1, direction="DESCENDING", stable=True)
    ranked_cosines = tf.transpose(tf.gather(cosines, order, batch_dims=1))  # [P, C]
    ranked_pairs = tf.transpose(tf.gather(pairs, order), [1, 0, 2])  # [P, C, 2]
    utterances = tf.reduce_max(tf.concat([tf.reshape(pairs, [-1]), [0]], axis=0)) + 1
    candidates = tf.shape(after)[0]

    def take(state, step):
        used, total, count = state
        cosine, pair = step
        seen = tf.gather(used, pair, batch_dims=1)  # [C, 2]
        new = tf.logical_not(tf.reduce_all(seen, axis=-1))
        marked = tf.reduce_any(pair[:, :, tf.newaxis] == tf.range(utterances), axis=1)  # [C, U]
        used = tf.logical_or(used, tf.logical_and(marked, new[:, tf.newaxis]))
        return (used, total + tf.where(new, cosine, tf.zeros_like(cosine)),
                count + tf.cast(new, cosine.dtype))

    initial = (tf.zeros(tf.stack([candidates, utterances]), tf.bool),
               tf.zeros([candidates], cosines.dtype), tf.zeros([candidates], cosines.dtype))
    _, total, count = tf.foldl(take, (ranked_cosines, ranked_pairs), initializer=initial)
    return tf.math.divide_no_nan(total, count)


def maxsim_scores(b1: tf.Tensor, b2: tf.Tensor, after: tf.Tensor,
                  k_last_rows: Optional[int] = None) -> tf.Tensor:
    """[C]: MaxSim (triple-encoders Appendix B) over the mixes of Eq. 3, k last rows as in `c3l_scores`."""
    pairs = triangle_pairs(tf.shape(b1)[0], k_last_rows)
    return maxsim_scores_from_mixes(pair_mixes(b1, b2, pairs), pairs, after)


def bi_encoder_scores(before: tf.Tensor, after: tf.Tensor) -> tf.Tensor:
    """[C]: Σ_i cos(before_i, after_c) over before [h, D] (triple-encoders Sec. 4.1.1; Justus-Jonas/imaginaryNLP
    imaginaryNLP/ImaginaryEmbeddingsForSequenceModeling.py): E([S] [B] u_i) for CCL, E([B2] [S] [B] u_i)
    for the triple-encoder as bi-encoder."""
    total = tf.reduce_sum(tf.math.l2_normalize(before, axis=-1), axis=0)
    return tf.linalg.matvec(tf.math.l2_normalize(after, axis=-1), total)


def _mixed_goal_cosines(b1_history: tf.Tensor, b2_candidates: tf.Tensor,
                        direction: tf.Tensor) -> tf.Tensor:
    """[n, C]: cos((b1_j + b2_c) / 2, g) for every history utterance j and candidate c."""
    return tf.linalg.matvec(pairwise_mixes(b1_history, b2_candidates), direction)


def planning_scores(b1_history: tf.Tensor, b2_candidates: tf.Tensor, goal: tf.Tensor) -> tf.Tensor:
    """[C]: Eq. 4, cos(b2_c, g) + (1/n) Σ_j cos((b1_j + b2_c) / 2, g), for a history b1 [n, D],
    candidates b2 [C, D] and the goal g [D] in the after space.

    The released `compute_stp_scores` normalises the candidates along dim 0 (across candidates,
    not per vector) and weights the first term by n (UKPLab/acl2024-triple-encoders
    triple_encoders/TripleEncodersForSTP.py:compute_stp_scores); here both terms
    are the paper's cosines (`released_planning_scores` computes the released ones).
    """
    direction = tf.math.l2_normalize(goal, axis=-1)
    single = tf.linalg.matvec(tf.math.l2_normalize(b2_candidates, axis=-1), direction)
    return single + tf.reduce_mean(_mixed_goal_cosines(b1_history, b2_candidates, direction), axis=0)


def released_planning_scores(b1_history: tf.Tensor, b2_candidates: tf.Tensor,
                             goal: tf.Tensor) -> tf.Tensor:
    """[C]: the released STP scores (UKPLab/acl2024-triple-encoders
    triple_encoders/TripleEncodersForSTP.py:compute_stp_scores), n · normalize(g) ·
    normalize(B2, axis=0)_c + Σ_j cos((b1_j + b2_c) / 2, g). The candidate matrix B2 [C, D] is
    normalised along axis 0, each feature across the candidates, so a candidate's first term is
    no cosine and depends on the other candidates; the factor n alone would not change a ranking.
    Kept to reproduce the published STP numbers (`--c3l_stp_scorer=released`).
    """
    direction = tf.math.l2_normalize(goal, axis=-1)
    single = tf.linalg.matvec(tf.math.l2_normalize(b2_candidates, axis=0), direction)
    n = tf.cast(tf.shape(b1_history)[0], single.dtype)
    return n * single + tf.reduce_sum(_mixed_goal_cosines(b1_history, b2_candidates, direction),
                                      axis=0)
