"""The augmentation thesis' listwise utterance-sorting model (appendix 1.2, Fig. 3b): optional, not
used by the thesis' main experiments.

The thesis: "a transformer over utterance embeddings: 4 layers, 4 attention heads and a hidden
size half the sentence encoder's, i.e. 384; only the last 3 layers of the sentence encoder are
trained. The output ranks pass through a softmax, and the KL divergence between it and the target
probabilities, the softmax of the true ranks (-i for the i-th utterance), is minimised"
(`rank_kl`); quality is 1 - the normalised number of transpositions (`sorting_quality`; the thesis
reaches 0.96).

As released (voorhs/dialogue-augmentation train_listwise.py `listwise-utterance-transformer`,
mylib/modeling/dialogue/utterance_transformer.py `UtteranceTransformerDM`,
mylib/modeling/listwise/ranker.py `RankerListwise`): each utterance is embedded on its own by the
shared encoder with mean pooling, mapped by a `Projector` to the transformer width (L2-normalised),
and the pre-norm transformer blocks (mylib/utils/modeling/transformer.py: layer norm, attention,
residual; layer norm, GELU feed-forward of 4× the width, residual; dropout 0.02 on attention
probabilities and block outputs) see no position, so only the utterances' contents order them; the
padded utterances are masked as keys. The ranker head is x + GELU(W x + b), dropout, then a linear
score without bias. GELU is PyTorch's exact erf form (`tfdialemb.encoders.gelu`), as in the encoder.
The released model also concatenates an 8-wide speaker embedding (width 392 for a 768-wide
encoder); the thesis' width, 384, has none, and neither does this model. Inputs are each
dialogue's utterances in a fresh random order (`tfdialemb.data.utterance_shuffle`).
"""
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option, Switch

SORTING_HIDDEN = Option("sorting_hidden", None, "Width of the sorting transformer (default: half the "
                        "encoder's, the thesis' 384 for a 768-wide encoder).", lower_bound=1, kind=int)
SORTING_LAYERS = Option("sorting_layers", 4, "Transformer blocks over the utterance embeddings (thesis: 4).",
                        lower_bound=1)
SORTING_HEADS = Option("sorting_heads", 4, "Attention heads per block (thesis: 4).", lower_bound=1)
SORTING_DROPOUT = Option("sorting_dropout", 0.02, "Dropout of the projector, the blocks and the ranker head "
                         "(released train_listwise.py: 0.02; the thesis gives none).", lower_bound=0.0,
                         upper_bound=0.99)
SORTING_TARGETS = Switch("utterance_sorting_targets", "paper", "Target distribution of the sorting loss.",
                         paper="softmax(-i) over the true positions i (thesis appendix 1.2)",
                         released="mylib/modeling/listwise/ranker.py `_make_true_ranks`: linspace(1, 0, n) "
                                  "normalised to sum 1")


@register_method
class UtteranceSortingSpec(MethodSpec):
    """The listwise sorting model on `utterances` examples, shuffled afresh every pass."""

    name = "utterance_sorting"
    paper = "Dialogue augmentation thesis (seed 004), appendix 1.2: listwise utterance sorting"
    builder = "utterances"
    options = (SORTING_HIDDEN, SORTING_LAYERS, SORTING_HEADS, SORTING_DROPOUT, SORTING_TARGETS)
    defaults = {"batch_size": 128, "learning_rate": 3e-5, "freeze_layers": -3, "max_length": 512,
                "weight_decay": 0.01, "lr_schedule": "constant", "num_epochs": 5}
    """Only the last 3 encoder layers train (thesis appendix 1.2; -3: any depth); the thesis'
    width 384 is half its 12-layer, 768-wide encoder's. The thesis gives no optimiser; the released train_listwise.py:
    batch 128, AdamW lr 3e-5 (weight decay 0.01, mylib/learners/generic.py), constant after 200 linear
    warm-up steps (pass --warmup_fraction for a warm-up), 5 epochs (TrainerConfig); 512 tokens, the
    released tokenizer's truncation."""
    offers = ("sentence",)

    def batches(self, dataset, tokenizer, params, run):
        from tfdialemb.data.utterance_shuffle import shuffled_batches  # pylint: disable=import-outside-toplevel

        return shuffled_batches(dataset, run.seed)

    def make_model(self, encoder, params):
        # pylint: disable=import-outside-toplevel
        from tfdialemb.methods.models.utterance_sorting import UtteranceSortingModel

        return UtteranceSortingModel(encoder, hidden=params[SORTING_HIDDEN.name], layers=params[SORTING_LAYERS.name],
                                     heads=params[SORTING_HEADS.name], dropout=params[SORTING_DROPOUT.name],
                                     targets=params[SORTING_TARGETS.name])

    def inference_settings(self, params):
        return {"sentence": {"pooling": "mean"}}
