"""dial2vec: dialogue embeddings by self-guided contrast between interlocutors (paper 002 Sec. 3).

Each sample (the dialogue, then its negatives from the `dial2vec` builder) is one packed
sequence `[CLS] t_0 SEP t_1 ...`; the encoder's last layer E gives the self-representations
(Eq. 1) and the turn-windowed cross-representations (Eq. 2-3) of every interlocutor, whose
pooled cosine (Eq. 5) is contrasted across the samples per interlocutor with NT-Xent (Eq. 5-6).
Only interlocutors present in the positive count; an interlocutor without tokens would get
cosine 0 in every sample and add a constant.

Encoder inputs (REFERENCE_CODE_NOTES 1.2): with a BERT backbone the released code feeds only the
token ids and mask; turn and role ids drive the masks alone (`role_turn_embeddings=False`, the
default). `role_turn_embeddings=True` also feeds them to the encoder's PLATO-style role and turn
tables (the paper's Sec. 3.1 input; needs an encoder loaded with role_vocab_size and
turn_vocab_size). Ids beyond a table share its last row: turn ids are clipped to
turn_vocab_size - 1 (a long dialogue's late turns share one embedding) and role ids to
role_vocab_size - 1, mirroring how the builder folds extra speakers into the last role.

Embeddings (Sec. 3.3, Table 4): interlocutor pooling e = Σ_r mean(h over r's tokens) (Eq. 4),
plain mean pooling, the [CLS] state, and each interlocutor's mean p1, p2, ... alone.
"""
from typing import Dict, List, Optional

import tensorflow as tf

from tfdialemb.encoders import Encoder
from tfdialemb.encoders.pooling import first_token, masked_mean
from tfdialemb.layers.interlocutor_matching import DEFAULT_WINDOW, self_cross_similarity
from tfdialemb.layers.interlocutor_pooling import interlocutor_pooling, role_masks
from tfdialemb.losses.interlocutor_nt_xent import DEFAULT_TEMPERATURE, interlocutor_nt_xent
from tfdialemb.methods.base import Method

LOSS_VARIANTS = ("paper", "released")
POOLINGS = ("interlocutor", "mean", "cls")


def embedding_names(num_roles: int) -> List[str]:
    """The dialogue embeddings `dialogue_embeddings` returns: POOLINGS, then p1 .. p{num_roles}."""
    return list(POOLINGS) + [f"p{r + 1}" for r in range(num_roles)]


def has_role_turn_tables(encoder: Encoder) -> bool:
    """Whether the encoder has both PLATO-style tables, so dialogues are embedded with them."""
    config = encoder.encoder_config
    return bool(config.role_vocab_size and config.turn_vocab_size)


def check_role_turn_tables(encoder: Encoder) -> None:
    """ValueError unless the encoder has both role and turn embedding tables."""
    config = encoder.encoder_config
    if not has_role_turn_tables(encoder):
        raise ValueError(
            "role_turn_embeddings needs an encoder with role and turn embedding tables; load it with "
            f"role_vocab_size and turn_vocab_size (it has {config.role_vocab_size} and {config.turn_vocab_size})")


def encode_dialogues(encoder: Encoder, ids: tf.Tensor, mask: tf.Tensor, turn_ids: tf.Tensor,
                     role_ids: tf.Tensor, role_turn_embeddings: bool, training=None) -> tf.Tensor:
    """Last-layer states [N, T, H] of packed dialogues [N, T]; turn and role ids reach the
    encoder only with `role_turn_embeddings`, clipped into its tables."""
    inputs = {"input_word_ids": ids, "input_mask": mask}
    if role_turn_embeddings:
        config = encoder.encoder_config
        inputs["role_ids"] = tf.clip_by_value(role_ids, 0, config.role_vocab_size - 1)
        inputs["turn_ids"] = tf.clip_by_value(turn_ids, 0, config.turn_vocab_size - 1)
    return encoder(inputs, training=training)["sequence_output"]


def dialogue_embeddings(states: tf.Tensor, mask: tf.Tensor, role_ids: tf.Tensor,
                        num_roles: int) -> Dict[str, tf.Tensor]:
    """float32 [N, H] embeddings named by `embedding_names`: Eq. 4 ("interlocutor"), the masked
    mean ("mean"), the [CLS] state ("cls") and each interlocutor's mean ("p1", "p2", ...; zero
    for an interlocutor without tokens)."""
    states = tf.cast(states, tf.float32)
    per_role = masked_mean(states[:, tf.newaxis], role_masks(role_ids, mask, num_roles))
    embeddings = {
        "interlocutor": interlocutor_pooling(states, role_ids, mask, num_roles),
        "mean": masked_mean(states, mask),
        "cls": first_token(states),
    }
    embeddings.update({f"p{r + 1}": per_role[:, r] for r in range(num_roles)})
    return embeddings


class Dial2vecModel(Method):
    """`per_example_loss` on `dial2vec` batches (`samples` [B, S, T] with mask, turn and role
    ids): the dialogue and its first `negatives` negatives.

    `window` w zeroes C[i, j] for |T(i) - T(j)| > w (None: no window); `loss_variant`
    "released" divides each interlocutor's term by the number of samples
    (`interlocutor_nt_xent`).
    """

    def __init__(self, encoder: Encoder, negatives: int = 9, temperature: float = DEFAULT_TEMPERATURE,
                 window: Optional[int] = DEFAULT_WINDOW, num_roles: int = 2,
                 role_turn_embeddings: bool = False, loss_variant: str = "paper", **kwargs):
        super().__init__(encoder, **kwargs)
        if loss_variant not in LOSS_VARIANTS:
            raise ValueError(f"unknown dial2vec loss_variant {loss_variant!r}; expected one of {LOSS_VARIANTS}")
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
        similarities = tf.reshape(
            self_cross_similarity(states, roles, turns, mask, self.window, self.num_roles),
            [-1, samples, self.num_roles])
        present = tf.reduce_any(
            role_masks(batch["samples_role_ids"][:, 0], batch["samples_mask"][:, 0], self.num_roles) > 0,
            axis=-1)
        losses = interlocutor_nt_xent(similarities, self.temperature, present, self.loss_variant)
        positive_first = tf.equal(tf.argmax(similarities, axis=1), 0)
        accuracy = tf.cast(tf.reduce_all(positive_first | ~present, axis=-1), tf.float32)
        return losses, {"accuracy": accuracy}

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
