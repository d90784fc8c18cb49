"""FGC: fine-grained contrastive learning for multi-turn response selection (Li et al., 2022).

A cross-encoder reads a context and a response together (`tfdialemb.text.pair_packing`); its
selection head scores the pair, ŷ = σ(W s_[CLS] + b) on the last layer's [CLS] state, trained
with binary cross-entropy (Eq. 1). For each context the `fgc` builder stores a positive r+ and a
negative r−; the input pipeline augments both (`tfdialemb.data.response_augmentation`, EDA with
strength p = 0.2) and packs the four passes (c, r+), (c, r̄+), (c, r−), (c, r̄−). A projection
z = MLP(s_[CLS]) feeds the two contrasts, with τ = 0.5 shared:
  - IVC (Eq. 2-3, `intra_view_contrast`): each pair against its own augmentation among the
    context's four views;
  - CVC (Eq. 4-5, `cross_view_contrast`): supervised contrast over the global batch, positive
    pairs and their augmentations against negative pairs and theirs.
L = L_sel + λ(L_ivc + L_cvc), λ = 1.

Two defaults read Eq. 3 and 5 as the losses they copy are implemented, not as their notation is
written, because the literal reading destroys response selection (docs/methods/fgc.md):
  - `fgc_reduction=mean`: each contrast is averaged over its anchors, as NT-Xent is over its 2N
    anchors and SupCon's code takes `.mean()` (HobbitLong/SupContrast losses.py); summed, as the
    equations are written (`sum`), the contrasts' gradients swamp the selection loss's (a mean);
  - `cvc_similarity=cosine`: z is L2-normalised before CVC's dot product, as SupCon normalises
    the projection (`F.normalize(self.head(feat))`, networks/resnet_big.py); with the raw dot
    product (`dot`, as Eq. 5 is written) z·z/τ spans tens, and the quickest way down is to merge
    every z and every [CLS] state, after which selection is at chance.
`ivc_anchors=all` makes every view an IVC anchor (NT-Xent's reading; Eq. 2 constrains all
four views), where Eq. 3 anchors only z+ and z−. Training logs the mean within-batch cosine of
the [CLS] states and of z, and the mean |z| (`cls_cosine`, `z_cosine`, `z_norm`), so a collapse
shows as it happens.

Choices where the paper is silent (docs/methods/fgc.md): the projection's hidden layer is 256
wide with ReLU (Appendix A) and its output 256 wide too; a dropout of 0.2 precedes the selection
head, as in taesunwhang/UMS-ResSel models/bert_cls.py:BertCls (dropout_keep_prob 0.8) whose
BERT baselines FGC extends; L_sel sees the original pairs only unless `select_on_augmented`.
Table 2's BERT baseline is `--ivc_weight=0 --cvc_weight=0`, which encodes only the two
original pairs of each context; Table 8's "augmentation only" adds `--select_on_augmented`;
Table 6's SimCSE-style views are `--aug_strength=0` (identical texts, two dropout masks).
"""
import dataclasses
import functools
import os

from tfdialemb.data.choices import WORD_UNITS
from tfdialemb.inference_settings import PAIR_LAYOUT
from tfdialemb.losses.choices import ANCHORS, SIMILARITIES
from tfdialemb.methods.shared_options import TEMPERATURE
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option

REDUCTIONS = ("sum", "mean")


FGC_NEGATIVES = Option("fgc_negatives", 1, "Negatives per positive when cutting pairs from dialogues, "
                       "or per positive of a response-selection context (Ubuntu train: 1).", lower_bound=1)
AUG_STRENGTH = Option("aug_strength", 0.2, "EDA strength p of the response augmentation (FGC Table 5: "
                      "0.2; 0 gives SimCSE-style dropout views).", lower_bound=0.0, upper_bound=1.0)
AUG_AT_LEAST_ONE = Option("aug_at_least_one", True, "Each augmented response differs from its original "
                          "in at least one word (EDA's n = max(1, αl)); false: the per-word draws alone, "
                          "which at p = 0.2 leave a third of the demo corpus's responses unchanged.")
WORDS = Option("fgc_words", "wordpiece", "Words of the response augmentation: wordpiece (a piece and its "
               "## pieces, for English) or jieba (Chinese; needs `pip install jieba`).",
               choices=WORD_UNITS)
SYNONYMS = Option("synonyms", "embedding", "Synonym source: `embedding` (nearest whole words in the "
                  "encoder's input embeddings, opposites left out) or a file of `word<TAB>syn,syn` lines "
                  "(e.g. WordNet's, docs/methods/fgc.md).")
FGC_TEMPERATURE = dataclasses.replace(TEMPERATURE, default=0.5)
CONTRAST_WEIGHT = Option("contrast_weight", 1.0, "λ of L = L_sel + λ(L_ivc + L_cvc) (FGC: 1).", lower_bound=0.0)
IVC_WEIGHT = Option("ivc_weight", 1.0, "Weight of IVC inside λ(...) (0 removes it, Table 3 -IVC).",
                    lower_bound=0.0)
CVC_WEIGHT = Option("cvc_weight", 1.0, "Weight of CVC inside λ(...) (0 removes it, Table 3 -CVC).",
                    lower_bound=0.0)
REDUCTION = Option("fgc_reduction", "mean", "IVC and CVC averaged over their anchors, as NT-Xent and "
                   "SupCon's code do, or summed over the batch as Eq. 3 and 5 are written (sum: the "
                   "contrasts then swamp the selection loss; docs/methods/fgc.md).", choices=REDUCTIONS)
CVC_SIMILARITY = Option("cvc_similarity", "cosine", "CVC similarity: cosine (z L2-normalised, as SupCon "
                        "normalises its projection), or the raw dot product as Eq. 5 is written (dot: the "
                        "representations collapse; docs/methods/fgc.md).", choices=SIMILARITIES)
IVC_ANCHORS = Option("ivc_anchors", "original", "IVC anchors: the original pairs z+ and z−, as Eq. 3 is "
                     "written, or all four views, as NT-Xent makes every view an anchor.", choices=tuple(ANCHORS))
SELECT_ON_AUGMENTED = Option("select_on_augmented", False, "L_sel also on the augmented pairs "
                             "(with the contrasts off: Table 8's augmentation only).")


def augmented_views_used(ivc_weight: float, cvc_weight: float, select_on_augmented: bool) -> bool:
    """Whether training reads the augmented pairs: through a contrast or the selection loss."""
    return bool(ivc_weight or cvc_weight or select_on_augmented)


@register_method
class FgcSpec(MethodSpec):
    """FGC's cross-encoder trained on `fgc` examples, four views per context (two without contrasts)."""

    name = "fgc"
    paper = "FGC (Li et al., 2022), fine-grained contrastive learning for response selection"
    builder = "fgc"
    options = (PAIR_LAYOUT, FGC_NEGATIVES, AUG_STRENGTH, AUG_AT_LEAST_ONE, WORDS, SYNONYMS, FGC_TEMPERATURE,
               CONTRAST_WEIGHT, IVC_WEIGHT, CVC_WEIGHT, REDUCTION, CVC_SIMILARITY, IVC_ANCHORS, SELECT_ON_AUGMENTED)
    defaults = {"batch_size": 32, "learning_rate": 3e-5, "freeze_layers": 0, "max_length": 512,
                "num_epochs": 5, "lr_schedule": "linear", "warmup_fraction": 0.0, "weight_decay": 0.0}
    """FGC Appendix A: AdamW, 3e-5 decayed linearly to 0, 5 epochs, 512 tokens; the batch size is not
    given: 32, the virtual batch of taesunwhang/UMS-ResSel config/hparams.py."""
    offers = ("selection",)
    bench_defaults = {"batch": 8, "dialogues": 200, "max_length": 128, "steps": 5, "warmup": 1}

    def builder_params(self, params):
        return {"negatives": params.fgc_negatives, "words": params.fgc_words}

    def check(self, params, run):
        if params.synonyms != "embedding" and not os.path.isfile(params.synonyms):
            raise ValueError(f"--synonyms={params.synonyms}: no such file (or use `embedding`)")
        return []

    def make_model(self, encoder, params):
        from tfdialemb.methods.models.fgc import FineGrainedContrastModel  # pylint: disable=import-outside-toplevel

        return FineGrainedContrastModel(
            encoder, temperature=params.temperature, contrast_weight=params.contrast_weight,
            ivc_weight=params.ivc_weight, cvc_weight=params.cvc_weight,
            reduction=params.fgc_reduction, cvc_similarity=params.cvc_similarity,
            ivc_anchors=params.ivc_anchors, select_on_augmented=params.select_on_augmented)

    def unused_options(self, params):
        ivc, cvc = (params.contrast_weight * params[name] for name in ("ivc_weight", "cvc_weight"))
        unused = [] if ivc else [IVC_ANCHORS.name]
        unused += [] if cvc else [CVC_SIMILARITY.name]
        unused += [] if ivc or cvc else [FGC_TEMPERATURE.name, REDUCTION.name]
        if not augmented_views_used(ivc, cvc, params.select_on_augmented):
            unused += [AUG_STRENGTH.name, AUG_AT_LEAST_ONE.name, SYNONYMS.name]
        return tuple(unused)

    def inference_settings(self, params):
        return {"selection": {"pair_layout": params.pair_layout}}

    def batches(self, dataset, tokenizer, params, run):
        import tensorflow as tf  # pylint: disable=import-outside-toplevel

        from tfdialemb.data import response_augmentation as augmentation  # pylint: disable=import-outside-toplevel
        from tfdialemb.data.batch_seeds import map_with_batch_seeds  # pylint: disable=import-outside-toplevel
        from tfdialemb.methods.models.fgc import pair_views, synonym_table  # pylint: disable=import-outside-toplevel
        from tfdialemb.text.pair_packing import PairLayout  # pylint: disable=import-outside-toplevel

        layout = PairLayout.of(tokenizer, run.max_length, params.pair_layout)
        augment = None
        if augmented_views_used(params.contrast_weight * params.ivc_weight,
                                params.contrast_weight * params.cvc_weight, params.select_on_augmented):
            augment = functools.partial(
                augmentation.augment_responses,
                continuation=tf.constant(augmentation.continuation_pieces(tokenizer.vocab)),
                synonyms=tf.constant(synonym_table(run.init_checkpoint, params.synonyms)),
                strength=params.aug_strength, at_least_one=params.aug_at_least_one)

        def views(batch, seed):
            return pair_views(batch, seed, layout, tokenizer.pad_id, augment)

        return map_with_batch_seeds(dataset, run.seed, views)

    def bench_sequences(self, batch, params):
        import tensorflow as tf  # pylint: disable=import-outside-toplevel

        length = tf.shape(batch["pair_ids"])[-1]
        return [(tf.reshape(batch["pair_ids"], [-1, length]), tf.reshape(batch["pair_mask"], [-1, length]))]
