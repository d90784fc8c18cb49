"""dial2vec self- and cross-representations (dial2vec paper Sec. 3.2.2, Eq. 1-3) and sim(Ê, Ẽ) of Eq. 5.

Shapes: N sequences (each dialogue's positive and negatives, flattened), T tokens, H hidden,
R interlocutors (role ids 0..R-1).

Two interlocutors p1, p2 (role ids 0, 1): C^{p1} = Ê^{p2} Ê^{p1ᵀ}, Ẽ^{p1} = C^{p1} Ê^{p1}, so
row i of Ẽ^{p1} is Σ_{j ∈ p1} <h_i, h_j> h_j for i ∈ p2 and 0 elsewhere: each cross-
representation lives on the other interlocutor's tokens. More than two interlocutors: one
against the rest, Ê^{p2} replaced by the tokens of every other interlocutor (the paper writes
Eq. 2 for two; with two, "the rest" is the other one). Padding is in no mask, so padded tokens
neither enter C nor appear as rows of Ẽ.

The released code (network.py `Dial2vec.forward`) computes the same Ẽ for two interlocutors
(Qx = Wfᵀ Q is Ẽ^{p1}, Rx = Wf R is Ẽ^{p2}, W masked by 1[|T(i) - T(j)| ≤ w]) and pools with
count + 1e-6, which the cosine ignores; its defaults are w = 1000 and τ = 1.0 (its training
script and the paper: 10 and 0.2). It knows only role ids 0 and 1 and drops tokens with other
ids, whereas here such a token (id outside 0..R-1) is in every interlocutor's rest; to drop
them, leave them out of `token_mask`. Its loss differs (÷ number of samples): see
`interlocutor_nt_xent`.
"""
from typing import Optional

import tensorflow as tf

from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.layers.choices import DEFAULT_WINDOW
from tfdialemb.layers.interlocutor_pooling import role_masks
from tfdialemb.core.similarity import paired_cosine


def self_representations(states: tf.Tensor, role_mask: tf.Tensor) -> tf.Tensor:
    """Eq. 1, Ê^p = E ⊙ m^p: `states` [..., T, H] with the rows outside `role_mask` [..., T]
    zeroed."""
    return states * tf.cast(role_mask, states.dtype)[..., tf.newaxis]


def turn_window(turns: tf.Tensor, window: Optional[int]) -> tf.Tensor:
    """[N, T, T] float32: 1 where |T(i) - T(j)| ≤ w, 0 where C[i, j] is masked; all ones when
    `window` is None (no restriction). `turns` [N, T] ints."""
    if window is None:
        return tf.ones(tf.concat([tf.shape(turns), tf.shape(turns)[-1:]], 0), tf.float32)
    if window < 0:
        raise ValueError(f"window must be non-negative or None, got {window}")
    distance = tf.abs(turns[:, :, tf.newaxis] - turns[:, tf.newaxis, :])
    return tf.cast(distance <= window, tf.float32)


def _own_and_rest(roles: tf.Tensor, token_mask: tf.Tensor, num_roles: int):
    """m^{p_r} and the one-vs-rest mask (valid tokens not of r), both [N, R, T] float32."""
    own = role_masks(roles, token_mask, num_roles)
    valid = tf.cast(tf.cast(token_mask, tf.bool), tf.float32)[:, tf.newaxis, :]
    return own, valid - own


def cross_representations(states: tf.Tensor, roles: tf.Tensor, turns: tf.Tensor,
                          token_mask: tf.Tensor, window: Optional[int] = DEFAULT_WINDOW,
                          num_roles: int = 2) -> tf.Tensor:
    """Eq. 2-3 with the turn window → Ẽ^{p_r} [N, R, T, H] from `states` E [N, T, H].

    C^{p_r} = Ê^{rest} Ê^{p_rᵀ} with C[i, j] = 0 where |T(i) - T(j)| > w, then
    Ẽ^{p_r} = C^{p_r} Ê^{p_r}. `roles`, `turns` [N, T] ints, `token_mask` [N, T]. Computed in
    float32: C Ê sums T products of dot products of encoder states and overflows float16.
    """
    states = tf.cast(states, tf.float32)[:, tf.newaxis]
    own_mask, rest_mask = _own_and_rest(roles, token_mask, num_roles)
    own = self_representations(states, own_mask)
    rest = self_representations(states, rest_mask)
    correlation = tf.einsum("nrih,nrjh->nrij", rest, own)
    correlation *= turn_window(turns, window)[:, tf.newaxis]
    return tf.einsum("nrij,nrjh->nrih", correlation, own)


def self_cross_similarity(states: tf.Tensor, roles: tf.Tensor, turns: tf.Tensor,
                          token_mask: tf.Tensor, window: Optional[int] = DEFAULT_WINDOW,
                          num_roles: int = 2) -> tf.Tensor:
    """sim(Ê^{p_r}, Ẽ^{p_r}) of Eq. 5 → [N, R]: cosine of the average-pooled self- and
    cross-representations.

    Ê^{p_r} is averaged over r's tokens and Ẽ^{p_r} over the other valid tokens (where it is
    non-zero), as the released code does; averaging over all T tokens only rescales both
    vectors and gives the same cosine. An interlocutor without tokens, or with no other token
    within the window, gets a zero vector and cosine 0 (so does the released code).
    """
    own_mask, rest_mask = _own_and_rest(roles, token_mask, num_roles)
    own = masked_mean(tf.cast(states, tf.float32)[:, tf.newaxis], own_mask)
    cross = masked_mean(
        cross_representations(states, roles, turns, token_mask, window, num_roles), rest_mask)
    return paired_cosine(own, cross)
