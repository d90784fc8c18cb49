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

from tfdialemb.inference_settings import CONTEXT as CONTEXT_OPTION
from tfdialemb.methods.shared_options import TEMPERATURE, THESIS_RELEASED_ADAMW
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option

REPORTED_K = (1, 5)
"""In-batch accuracy@k reported while training (the thesis reports @5)."""

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
        # pylint: disable=import-outside-toplevel
        from tfdialemb.data.context_response_pairs import context_response_batches

        return context_response_batches(dataset, run.seed, params[CONTEXT_OPTION.name])

    def make_model(self, encoder, params):
        # pylint: disable=import-outside-toplevel
        from tfdialemb.methods.models.context_response import ContextResponseModel

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
