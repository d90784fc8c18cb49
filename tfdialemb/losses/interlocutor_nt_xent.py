"""Per-interlocutor NT-Xent of dial2vec (paper Eq. 5-6)."""
from typing import Optional

import tensorflow as tf

from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent
from tfdialemb.losses.choices import DEFAULT_TEMPERATURE


def interlocutor_nt_xent(similarities: tf.Tensor, temperature: float = DEFAULT_TEMPERATURE,
                         interlocutor_mask: Optional[tf.Tensor] = None,
                         variant: str = "paper") -> tf.Tensor:
    """Eq. 5, l = -Σ_r log softmax_j(sim_j^{p_r} / τ)[positive] → per-example loss [B].

    `similarities` [B, S, R]: for each of B dialogues, its S samples (index 0 the dialogue
    itself, the positive; 1..S-1 its negatives) and R interlocutors, sim(Ê_j^{p_r}, Ẽ_j^{p_r})
    (`self_cross_similarity` of the B·S flattened sequences, reshaped to [B, S, R]). The
    caller's mean over dialogues is Eq. 6. `interlocutor_mask` [B, R] (optional) leaves out
    interlocutors absent from a dialogue. "released" (network.py `calc_loss`, -mean over B×S of
    log_softmax · labels, per role, summed): each interlocutor's term divided by S. Float32.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    similarities = tf.cast(similarities, tf.float32)
    logits = tf.transpose(similarities, [0, 2, 1]) / temperature
    shape = tf.shape(logits)
    per_role = candidate_nt_xent(tf.reshape(logits, [-1, shape[2]]), variant=variant)
    per_role = tf.reshape(per_role, shape[:2])
    if interlocutor_mask is not None:
        per_role *= tf.cast(interlocutor_mask, tf.float32)
    return tf.reduce_sum(per_role, axis=-1)
