"""dial2vec's trainable model; the method's description is in `tfdialemb.methods.dial2vec`."""
from typing import Dict, Optional

import tensorflow as tf

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.layers.dialogue_views import (
    check_role_turn_tables,
    dialogue_embeddings,
    embedding_names,
    encode_dialogues,
)
from tfdialemb.layers.interlocutor_matching import DEFAULT_WINDOW, self_cross_similarity
from tfdialemb.layers.interlocutor_pooling import role_masks
from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent
from tfdialemb.losses.choices import DEFAULT_TEMPERATURE
from tfdialemb.losses.interlocutor_nt_xent import interlocutor_nt_xent
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.methods.dial2vec import CONTRASTS, LOSS_VARIANTS
from tfdialemb.methods.models.base import Method
from tfdialemb.core.similarity import l2_normalized


class Dial2vecModel(Method):
    """`per_example_loss` on `dial2vec` batches (`samples` [B, S, T] with mask, turn and role
    ids): the dialogue and its first `negatives` negatives.

    `window` w zeroes C[i, j] for |T(i) - T(j)| > w (None: no window); `loss_variant`
    "released" divides each interlocutor's term by the number of samples
    (`interlocutor_nt_xent`).

    `contrast="dialogue"`, the ablation without the interlocutor-guided views (the paper reports
    none; its claim, Sec. 5.1, is that the interlocutor-level interactions make the gain): no
    self- or cross-representations; each sample is the mean of all its tokens (Sec. 3.2.3's
    average pooling), scored by its cosine with the dialogue encoded once more (another dropout
    mask, as SimCSE makes a positive), and the NT-Xent of Eq. 5 runs over those S cosines / τ,
    once per dialogue; "released" divides it by S.
    """

    def __init__(self, encoder: Encoder, negatives: int = 9, temperature: float = DEFAULT_TEMPERATURE,
                 window: Optional[int] = DEFAULT_WINDOW, num_roles: int = 2,
                 role_turn_embeddings: bool = False, loss_variant: str = "paper",
                 contrast: str = "interlocutor", **kwargs):
        super().__init__(encoder, **kwargs)
        if loss_variant not in LOSS_VARIANTS:
            raise ValueError(f"unknown dial2vec loss_variant {loss_variant!r}; expected one of {LOSS_VARIANTS}")
        if contrast not in CONTRASTS:
            raise ValueError(f"unknown dial2vec contrast {contrast!r}; expected one of {CONTRASTS}")
        if negatives < 1 or num_roles < 2:
            raise ValueError(f"negatives must be >= 1 and num_roles >= 2, got {negatives} and {num_roles}")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if window is not None and window < 0:
            raise ValueError(f"window must be non-negative or None, got {window}")
        if role_turn_embeddings:
            check_role_turn_tables(encoder)
        self.negatives = negatives
        self.temperature = temperature
        self.window = window
        self.num_roles = num_roles
        self.role_turn_embeddings = role_turn_embeddings
        self.loss_variant = loss_variant
        self.contrast = contrast

    def encode(self, ids, mask, turn_ids, role_ids, training=None) -> tf.Tensor:
        """Last-layer states [N, T, H] of packed dialogues [N, T]."""
        return encode_dialogues(self.encoder, ids, mask, turn_ids, role_ids, self.role_turn_embeddings, training)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        samples = self.negatives + 1
        tf.debugging.assert_greater_equal(
            tf.shape(batch["samples"])[1], samples,
            message="the build stores fewer negatives than --negatives asks for; rebuild")

        def flat(key):
            value = batch[key][:, :samples]
            return tf.reshape(value, [-1, tf.shape(value)[2]])

        ids, mask, turns, roles = (flat(f"samples{suffix}") for suffix in ("", "_mask", "_turn_ids", "_role_ids"))
        tf.debugging.assert_less(
            roles * mask, self.num_roles,
            message="role ids reach num_roles; build with max_roles <= num_roles or raise num_roles")
        states = self.encode(ids, mask, turns, roles, training)
        if self.contrast == "dialogue":
            return self._dialogue_contrast(batch, states, mask, samples, training)
        similarities = tf.reshape(
            self_cross_similarity(states, roles, turns, mask, self.window, self.num_roles),
            [-1, samples, self.num_roles])
        speaks = tf.reduce_any(
            role_masks(batch["samples_role_ids"][:, 0], batch["samples_mask"][:, 0], self.num_roles) > 0,
            axis=-1)
        others_speak = tf.reduce_sum(tf.cast(speaks, tf.int32), axis=-1, keepdims=True) - tf.cast(speaks, tf.int32) > 0
        present = speaks & others_speak
        losses = interlocutor_nt_xent(similarities, self.temperature, present, self.loss_variant)
        # The positive ranked first among the samples (ties and NaN count against it), per
        # interlocutor present: for every one of them (a harsh measure: a dialogue counts only when
        # all its interlocutors get it), and as the share of them; a dialogue with none present
        # (it adds no loss) scores 0 on both.
        per_role_scores = tf.reshape(tf.transpose(similarities, [0, 2, 1]), [-1, samples])
        positive_first = tf.reshape(
            top_k_hits(per_role_scores, tf.zeros(tf.shape(per_role_scores)[:1], tf.int32), 1) > 0,
            [-1, self.num_roles])
        every_role = tf.cast(tf.reduce_all(positive_first | ~present, axis=-1) & tf.reduce_any(present, axis=-1),
                             tf.float32)
        per_role = (tf.reduce_sum(tf.cast(positive_first & present, tf.float32), axis=-1)
                    / tf.maximum(tf.reduce_sum(tf.cast(present, tf.float32), axis=-1), 1.0))
        return losses, {"positive_first_every_role": every_role, "positive_first_per_role": per_role}

    def _dialogue_contrast(self, batch, states, mask, samples, training):
        """The dialogue-level ablation's loss [B] and metrics: NT-Xent of cos(anchor, sample_j) / τ
        over the S samples, the anchor the dialogue's own tokens encoded a second time."""
        dialogue = [batch[f"samples{suffix}"][:, 0] for suffix in ("", "_mask", "_turn_ids", "_role_ids")]
        anchor = masked_mean(self.encode(*dialogue, training), dialogue[1])
        pooled = tf.reshape(masked_mean(states, mask), [-1, samples, tf.shape(states)[-1]])
        cosines = tf.einsum("bh,bsh->bs", l2_normalized(anchor), l2_normalized(pooled))
        losses = candidate_nt_xent(cosines / self.temperature, variant=self.loss_variant)
        positive_first = top_k_hits(cosines, tf.zeros(tf.shape(cosines)[:1], tf.int32), 1)
        return losses, {"positive_first": tf.cast(positive_first > 0, tf.float32), "positive_cosine": cosines[:, 0]}

    def embed_all(self, ids, mask, turn_ids, role_ids, training=None) -> Dict[str, tf.Tensor]:
        """Every embedding of `dialogue_embeddings` for packed dialogues [N, T]."""
        states = self.encode(ids, mask, turn_ids, role_ids, training)
        return dialogue_embeddings(states, mask, role_ids, self.num_roles)

    def embed(self, ids, mask, turn_ids, role_ids, pooling: str = "interlocutor", training=None) -> tf.Tensor:
        """Dialogue embeddings [N, H]: `pooling` one of `embedding_names(num_roles)`."""
        names = embedding_names(self.num_roles)
        if pooling not in names:
            raise ValueError(f"unknown dial2vec pooling {pooling!r}; expected one of {names}")
        return self.embed_all(ids, mask, turn_ids, role_ids, training)[pooling]
