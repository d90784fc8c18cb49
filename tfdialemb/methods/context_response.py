"""The augmentation thesis' context-response similarity model (appendix 1.1, Fig. 3a).

The thesis: "1) the embeddings of all context utterances c = [u_1, ..., u_k] and of the response r
are obtained with a pre-trained encoder; 2) the context embeddings are concatenated and passed to
a projector that outputs a vector representing the context; 3) the response embedding goes
through a second projector; 4) the cosine of the two is the context-response similarity",
trained with an in-batch contrastive loss (batch 128, temperature 0.05, context 3, projection 256,
only the last 3 encoder layers trained; in-batch accuracy@5 of 0.955). Its similarities within a
dialogue drive the stage clustering of the crop and shuffle augmentations.

As released (voorhs/dialogue-augmentation mylib/modeling/pairwise/pairwise.py `Pairwise` with
`symmetric=False`, mylib/trainers/pairwise/model.py): each utterance is embedded on its own by the
shared encoder with mean pooling (mylib/utils/modeling/generic.py `mySentenceTransformer`); the
context's `context` slots are concatenated oldest first, slots without an utterance left as zeros
at the end (`ContextEncoderConcat`); `Projector` 1 maps the context·hidden vector, `Projector` 2 the
response's; the loss is `two_sided_info_nce` (the released `contrastive_cross`). Negatives are the
other pairs of the (global) batch, one pair per dialogue (`tfdialemb.data.context_response_pairs`).
The released `ContextEncoderConcat` also prefixes every context utterance with the speaker index of
the context's last utterance; the thesis does not, and the embedding protocol of
`tfdialemb.inference.context_response` carries no speakers, so the texts here are plain.
"""
import dataclasses
from typing import Dict

import tensorflow as tf

from tfdialemb.data.context_response_pairs import (
    CONTEXT,
    RESPONSE,
    context_response_batches,
)
from tfdialemb.distribute import gather_across_replicas, replica_offset
from tfdialemb.encoders import Encoder
from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.inference_settings import CONTEXT as CONTEXT_OPTION
from tfdialemb.layers.projector import Projector
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.losses.two_sided_info_nce import two_sided_info_nce
from tfdialemb.methods.models.base import Method
from tfdialemb.methods.shared_options import TEMPERATURE, THESIS_RELEASED_ADAMW
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option

REPORTED_K = (1, 5)
"""In-batch accuracy@k reported while training (the thesis reports @5)."""


class ContextResponseModel(Method):
    """`per_example_loss` on pairs drawn by `tfdialemb.data.context_response_pairs`."""

    def __init__(self, encoder: Encoder, context: int = 3, projection_size: int = 256,
                 projector_dropout: float = 0.1, temperature: float = 0.05, **kwargs):
        super().__init__(encoder, **kwargs)
        if context < 1 or temperature <= 0:
            raise ValueError(f"context and temperature must be positive, got {context} and {temperature}")
        self.context = context
        # Training keeps the k below its global batch (`ContextResponseSpec.after_build`): a batch of
        # k pairs or fewer has every candidate in the top k, and the traced step leaves its size open.
        self.reported_k = REPORTED_K
        self.projection_size = projection_size
        self.temperature = temperature
        width = encoder.encoder_config.hidden_size
        self.context_projector = Projector(projection_size, projector_dropout, name="context_projector")
        self.context_projector.build([None, context * width])
        self.response_projector = Projector(projection_size, projector_dropout, name="response_projector")
        self.response_projector.build([None, width])

    def embed_contexts(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Unit context vectors [B, projection] of `context` utterance slots `ids` [B, context, T]
        (empty slots all-zero)."""
        if ids.shape[1] is not None and ids.shape[1] != self.context:
            raise ValueError(f"contexts have {ids.shape[1]} utterance slots; this model takes {self.context}")
        utterances = masked_mean(tf.cast(self.encoder.encode_rows(ids, mask, training), tf.float32),
                                 mask)
        return self.project_contexts(utterances, training=training)

    def project_contexts(self, utterances: tf.Tensor, training=None) -> tf.Tensor:
        """Unit context vectors [B, projection] of the utterance vectors [B, context, hidden] of
        `embed_utterances` in the context's slots (empty slots zero)."""
        width = self.encoder.encoder_config.hidden_size
        return self.context_projector(tf.reshape(utterances, [-1, self.context * width]), training=training)

    def embed_utterances(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Mean-pooled vectors [B, hidden] of utterances `ids` [B, T]: what fills a context slot and
        what the response projector reads."""
        return self.encoder.embed({"input_word_ids": ids, "input_mask": mask}, training=training)

    def embed_responses(self, ids: tf.Tensor, mask: tf.Tensor, training=None) -> tf.Tensor:
        """Unit response vectors [B, projection] of `ids` [B, T]."""
        return self.response_projector(self.embed_utterances(ids, mask, training), training=training)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        contexts = self.embed_contexts(batch[CONTEXT], batch[f"{CONTEXT}_mask"], training)
        responses = self.embed_responses(batch[RESPONSE], batch[f"{RESPONSE}_mask"], training)
        losses = two_sided_info_nce(contexts, responses, self.temperature)
        local = tf.shape(contexts)[0]
        scores = tf.matmul(contexts, gather_across_replicas(responses), transpose_b=True)
        labels = replica_offset(local) + tf.range(local)
        candidates = scores.shape[1]  # the global batch, when the trace knows it
        return losses, {f"accuracy@{k}": top_k_hits(scores, labels, k) for k in self.reported_k
                        if candidates is None or k < candidates}


PROJECTION_SIZE = Option("projection_size", 256, "Width of both projections (thesis appendix 1.1: 256).",
                         lower_bound=1)
PROJECTOR_DROPOUT = Option("projector_dropout", 0.1, "Dropout between a projector's two maps (released "
                           "mylib/modeling/pairwise/config.py: 0.1; the thesis gives none).",
                           lower_bound=0.0, upper_bound=0.99)
CONTEXT_RESPONSE_TEMPERATURE = dataclasses.replace(TEMPERATURE, default=0.05)
"""τ of the context-response loss (thesis appendix 1.1: 0.05)."""
OPTIMIZER = Option("context_response_optimizer", "released", "The optimiser (the thesis gives none): released, "
                   "the released pairwise trainer's (mylib/learners/generic.py): AdamW with AMSGrad, weight decay "
                   "on all but biases, one-cycle: a 10% cosine warm-up from --learning_rate/10 to --learning_rate, "
                   "then cosine back to --learning_rate/10; linear: AdamW (no decay on biases and layer norms), "
                   "--warmup_fraction linear warm-up, then linear decay to 0.", choices=("released", "linear"))


@register_method
class ContextResponseSpec(MethodSpec):
    """The context-response similarity model on `utterances` examples, pairs drawn per pass."""

    name = "context_response"
    paper = "Dialogue augmentation thesis (seed 004), appendix 1.1: context-response similarity model"
    builder = "utterances"
    options = (CONTEXT_OPTION, PROJECTION_SIZE, PROJECTOR_DROPOUT, CONTEXT_RESPONSE_TEMPERATURE, OPTIMIZER)
    defaults = {"batch_size": 128, "learning_rate": 1e-5, "freeze_layers": -3,
                "max_length": 512, "weight_decay": 0.01, "warmup_fraction": 0.1, "lr_schedule": "linear",
                "num_epochs": 5}
    """Thesis appendix 1.1: batch 128, only the last 3 encoder layers train (-3: any depth;
    dse-bert-large, the encoder it names, has 24). The thesis gives no optimiser; the released
    trainer's (mylib/learners/generic.py `BaseLearnerConfig`, mylib/utils/training/generic.py
    `TrainerConfig`): peak lr 1e-5, weight decay 0.01, 5 epochs, and with
    --context_response_optimizer=released (the default) its AdamW with AMSGrad and one-cycle
    schedule; the 10 % warm-up and linear decay serve --context_response_optimizer=linear. 512
    tokens: the released tokenizer truncates at the encoder's limit."""
    offers = ("context_response", "sentence")

    def batches(self, dataset, tokenizer, params, run):
        return context_response_batches(dataset, run.seed, params[CONTEXT_OPTION.name])

    def make_model(self, encoder, params):
        return ContextResponseModel(encoder, context=params[CONTEXT_OPTION.name],
                                    projection_size=params[PROJECTION_SIZE.name],
                                    projector_dropout=params[PROJECTOR_DROPOUT.name],
                                    temperature=params[CONTEXT_RESPONSE_TEMPERATURE.name])

    def optimizer_settings(self, params):
        return dict(THESIS_RELEASED_ADAMW) if params[OPTIMIZER.name] == "released" else {}

    def after_build(self, model, params, run):
        model.reported_k = tuple(k for k in REPORTED_K if k < run.batch_size)

    def inference_settings(self, params):
        return {"context_response": {"context": params[CONTEXT_OPTION.name]}, "sentence": {"pooling": "mean"}}
