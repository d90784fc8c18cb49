"""Reads a Google TF1 BERT or ELECTRA checkpoint through Model Garden's TF1 → V2 name converter."""
import logging
import os
import tempfile
from typing import Dict

import numpy as np
import tensorflow as tf
from official.nlp.tools import tf1_bert_checkpoint_converter_lib as converter

from tfdialemb.encoders.config import EncoderConfig

# Optimizer slots, the pre-training heads and ELECTRA's generator are not part of the encoder.
_EXCLUDED = ["adam", "Adam", "cls/", "global_step", "good_steps", "loss_scale", "generator",
             "discriminator_predictions"]
# google-research/electra names its discriminator `electra/...` and the projection of its narrower
# embeddings `electra/embeddings_project`; read as BERT's names, the rest converts as BERT's.
_NAME_REPLACEMENTS = (("electra/", "bert/"), ("bert/embeddings_project", "embedding_projection"),
                      *converter.BERT_V2_NAME_REPLACEMENTS)


def read_google_checkpoint(prefix: str, config: EncoderConfig) -> Dict[str, np.ndarray]:
    """BertEncoderV2-named tensors of the TF1 checkpoint at `prefix` (e.g. `.../bert_model.ckpt`).

    Model Garden's converter renames `bert/encoder/layer_N/attention/self/query/kernel` and friends
    and reshapes the attention projections per head; the converted copy lives in a temporary
    directory only while it is read.
    """
    with tempfile.TemporaryDirectory(prefix="tfdialemb-tf1-") as tmp:
        converted = os.path.join(tmp, "converted")
        tf_logger = tf.get_logger()
        level = tf_logger.level
        tf_logger.setLevel(logging.WARNING)  # the converter logs every tensor it renames
        try:
            converter.convert(
                checkpoint_from_path=prefix,
                checkpoint_to_path=converted,
                num_heads=config.num_attention_heads,
                name_replacements=_NAME_REPLACEMENTS,
                permutations=converter.BERT_V2_PERMUTATIONS,
                exclude_patterns=_EXCLUDED,
            )
        finally:
            tf_logger.setLevel(level)
        reader = tf.train.load_checkpoint(converted)
        return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}
