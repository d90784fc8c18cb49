"""The dialogue embeddings of a packed dialogue's encoder states (dial2vec paper, Sec. 3.3 and
Table 4), shared by dial2vec training, `DialogueEmbedder` and the dialogue export.

Encoder inputs (AlibabaResearch/DAMO-ConvAI dial2vec/network.py:Dial2vec.forward): with a BERT backbone the
released code feeds only the token ids and mask; turn and role ids drive the masks alone.
`role_turn_embeddings=True` also feeds them to the encoder's PLATO-style role and turn tables
(the paper's Sec. 3.1 input); ids beyond a table share its last row.
"""
from typing import Dict, List

import tensorflow as tf

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.pooling import first_token, masked_mean
from tfdialemb.inference_settings import DIALOGUE_POOLING
from tfdialemb.layers.interlocutor_pooling import interlocutor_pooling, role_masks

POOLINGS = DIALOGUE_POOLING.choices
"""The whole-dialogue embeddings, in the order of `embedding_names`; one of them is the one a
model serves (the `dialogue_pooling` setting)."""
HIDDEN_STATE_POOLINGS = ("cls", "mean")
"""The poolings of a lower layer's states: the thesis probes hidden states with its pooled views."""


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


def _encoder_inputs(encoder: Encoder, ids: tf.Tensor, mask: tf.Tensor, turn_ids: tf.Tensor,
                    role_ids: tf.Tensor, role_turn_embeddings: bool) -> Dict[str, tf.Tensor]:
    """The encoder's inputs; turn and role ids only with `role_turn_embeddings`, clipped into
    its tables."""
    inputs = {"input_word_ids": ids, "input_mask": mask}
    if role_turn_embeddings:
        config = encoder.encoder_config
        inputs["role_ids"] = tf.clip_by_value(role_ids, 0, config.role_vocab_size - 1)
        inputs["turn_ids"] = tf.clip_by_value(turn_ids, 0, config.turn_vocab_size - 1)
    return inputs


def encode_dialogues(encoder: Encoder, ids: tf.Tensor, mask: tf.Tensor, turn_ids: tf.Tensor,
                     role_ids: tf.Tensor, role_turn_embeddings: bool, training=None) -> tf.Tensor:
    """Last-layer states [N, T, H] of packed dialogues [N, T], zero at padding
    (`Encoder.encode_by_length`); turn and role ids reach the encoder only with
    `role_turn_embeddings`, clipped into its tables."""
    inputs = _encoder_inputs(encoder, ids, mask, turn_ids, role_ids, role_turn_embeddings)
    return encoder.encode_by_length(inputs, training=training)


def encode_dialogue_layers(encoder: Encoder, ids: tf.Tensor, mask: tf.Tensor, turn_ids: tf.Tensor,
                           role_ids: tf.Tensor, role_turn_embeddings: bool, training=None) -> List[tf.Tensor]:
    """Every layer's states [N, T, H] of packed dialogues [N, T], bottom to top (the last is
    `encode_dialogues`'), for probing hidden states (thesis Sec. 5.5, Table 5)."""
    inputs = _encoder_inputs(encoder, ids, mask, turn_ids, role_ids, role_turn_embeddings)
    return encoder.all_layer_states(inputs, training=training)


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


def hidden_state_name(pooling: str, layer: int) -> str:
    """The key of `pooling` over layer `layer` (negative, from the top), e.g. "cls[-2]"."""
    return f"{pooling}[{layer}]"


def hidden_state_embeddings(states: tf.Tensor, mask: tf.Tensor, layer: int) -> Dict[str, tf.Tensor]:
    """float32 [N, H] [CLS] state and masked mean of one layer's states, keyed by
    `hidden_state_name`."""
    states = tf.cast(states, tf.float32)
    return {hidden_state_name("cls", layer): first_token(states),
            hidden_state_name("mean", layer): masked_mean(states, mask)}
