"""BERT-DPT post-training's trainable model: BERT's MLM and next-sentence heads over the encoder (the
method is described in its spec module, `tfdialemb.methods.mlm_nsp`)."""
from typing import Dict

import tensorflow as tf
import tf_keras

from tfdialemb.data.masking import mask_tokens
from tfdialemb.data.stored_pieces import stored_pieces, stored_turns
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.methods.models.mlm import MaskedLanguageModel, masked_lm_losses
from tfdialemb.text.pair_packing import PairLayout


class PostTrainingModel(MaskedLanguageModel):
    """Model Garden's `MaskedLM` head plus BERT's next-sentence head over the encoder."""

    def __init__(self, encoder: Encoder, **kwargs):
        super().__init__(encoder, **kwargs)
        config = encoder.encoder_config
        self.next_sentence = tf_keras.layers.Dense(
            2, kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range),
            dtype="float32", name="next_sentence")
        self.next_sentence.build([None, config.hidden_size])

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        inputs = {key: batch[key] for key in ("input_word_ids", "input_mask", "input_type_ids")}
        outputs = self.encoder(inputs, training=training)
        masked_lm, masked_accuracy = masked_lm_losses(
            self.masked_lm(outputs["sequence_output"],
                           masked_positions=tf.convert_to_tensor(batch["masked_lm_positions"])), batch)
        logits = self.next_sentence(tf.cast(outputs["pooled_output"], tf.float32))
        labels = tf.cast(batch["next_sentence_labels"], tf.int32)
        next_sentence = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        correct = top_k_hits(logits, labels, 1)
        return masked_lm + next_sentence, {
            "masked_lm_loss": masked_lm, "masked_lm_accuracy": masked_accuracy,
            "next_sentence_loss": next_sentence, "next_sentence_accuracy": correct}


def next_sentence_variables(model: PostTrainingModel) -> Dict[str, tf.Variable]:
    """The next-sentence head's variables keyed by NSP_HEAD.tensors."""
    return {"kernel": model.next_sentence.kernel, "bias": model.next_sentence.bias}


def post_training_batch(batch: Dict[str, tf.Tensor], seed: tf.Tensor, layout: PairLayout, pad_id: int,
                        **mask_kwargs):
    """The masked pairs of a `mlm_nsp` batch: `mask_tokens`' outputs plus `input_type_ids` and
    `next_sentence_labels`."""
    packed = layout.pack(stored_turns(batch["context"], batch["context_mask"]),
                         stored_pieces(batch["next"], batch["next_mask"])).dense(pad_id)
    masked = mask_tokens(packed["input_word_ids"], packed["input_mask"], seed=seed, **mask_kwargs)
    return dict(masked, input_type_ids=packed["input_type_ids"],
                next_sentence_labels=batch["next_sentence_labels"])
