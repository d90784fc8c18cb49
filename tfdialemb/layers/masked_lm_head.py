"""BERT's masked-LM head over an encoder, as continued pre-training trains it (methods/models/mlm.py) and
the fill-mask augmentations predict with it (augment/fill_mask.py).

Model Garden's `MaskedLM`: dense transform, the encoder's activation, layer norm, then logits
against the encoder's word-embedding table (tied, as in BERT) plus an output bias. The activation
is the encoder's own GELU kind (exact for Hugging Face "gelu", the tanh approximation for Google
checkpoints), the initializer its truncated normal.
"""
from typing import Dict

import tensorflow as tf
from official.nlp.modeling.layers import MaskedLM

from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.encoder import ACTIVATIONS, random_initializer
from tfdialemb.encoders.pretraining_heads import HEAD_TENSORS, MLM_HEAD, load_head


def masked_lm_head(encoder: Encoder, name: str = "masked_lm") -> MaskedLM:
    """A new head tied to `encoder`'s word-embedding table; `head(sequence_output,
    masked_positions=[B, P])` gives logits [B, P, vocab]."""
    encoder.build_variables()  # the head needs the embedding table to exist
    config = encoder.encoder_config
    head = MaskedLM(embedding_table=encoder.bert.get_embedding_table(),
                    activation=ACTIVATIONS[config.hidden_act], initializer=random_initializer(config),
                    name=name)
    # Its variables are made on the first call, so that they can be assigned or restored now.
    head(tf.zeros([1, 1, config.hidden_size]), masked_positions=tf.zeros([1, 1], tf.int32))
    return head


def masked_lm_variables(head: MaskedLM) -> Dict[str, tf.Variable]:
    """The head's own variables keyed by HEAD_TENSORS; the tied embedding table is the encoder's."""
    return dict(zip(HEAD_TENSORS, (head.dense.kernel, head.dense.bias, head.layer_norm.gamma,
                                   head.layer_norm.beta, head.bias)))


def load_masked_lm_head(head: MaskedLM, directory: str, required: bool = False) -> bool:
    """`load_head` of the checkpoint's masked-LM head into `head`."""
    return load_head(masked_lm_variables(head), MLM_HEAD, directory, required=required)
