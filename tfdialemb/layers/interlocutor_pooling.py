"""dial2vec interlocutor masks m^{p_r} (dial2vec paper Sec. 3.2.2) and interlocutor pooling (Eq. 4).

Shapes: N sequences, T tokens, H hidden, R interlocutors (role ids 0..R-1).
"""
import tensorflow as tf

from tfdialemb.encoders.pooling import masked_mean


def role_masks(roles: tf.Tensor, token_mask: tf.Tensor, num_roles: int,
               dtype: tf.DType = tf.float32) -> tf.Tensor:
    """m^{p_r} for r = 0..R-1 → [N, R, T]: 1 where the token is valid and spoken by role r.

    `roles` [N, T] ints, `token_mask` [N, T]. Padding (token_mask 0) is 0 in every mask, whatever
    role id it carries; tokens whose role id is outside 0..R-1 are in none of the masks.
    """
    if num_roles < 1:
        raise ValueError(f"num_roles must be positive, got {num_roles}")
    valid = tf.cast(token_mask, tf.bool)[:, tf.newaxis, :]
    ids = tf.range(num_roles, dtype=roles.dtype)[tf.newaxis, :, tf.newaxis]
    return tf.cast(tf.logical_and(roles[:, tf.newaxis, :] == ids, valid), dtype)


def interlocutor_pooling(states: tf.Tensor, roles: tf.Tensor, token_mask: tf.Tensor,
                         num_roles: int = 2) -> tf.Tensor:
    """Eq. 4, e = Σ_r Σ_i m_i^{p_r} h_i / Σ_i m_i^{p_r} → [N, H] from `states` [N, T, H].

    Each interlocutor's mean counts only its valid tokens, so padding is excluded; an interlocutor
    without tokens adds 0 (Eq. 4 would divide by 0). The released code's `mean_by_role` divides
    by count + 1e-6, a relative difference below 1e-6. Plain average pooling, the paper's other
    strategy, is `masked_mean(states, token_mask)`.
    """
    masks = role_masks(roles, token_mask, num_roles, dtype=states.dtype)
    return tf.reduce_sum(masked_mean(states[:, tf.newaxis], masks), axis=1)
