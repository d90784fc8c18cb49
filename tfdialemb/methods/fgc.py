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
from typing import Callable, Dict, Optional

import numpy as np
import tensorflow as tf
import tf_keras

from tfdialemb.data import response_augmentation as augmentation
from tfdialemb.data.batch_seeds import map_with_batch_seeds
from tfdialemb.data.stored_pieces import stored_pieces, stored_turns
from tfdialemb.encoders import Encoder, load_pretrained
from tfdialemb.encoders.pooling import first_token
from tfdialemb.inference_settings import PAIR_LAYOUT
from tfdialemb.losses.cross_view_contrast import SIMILARITIES, cross_view_contrast
from tfdialemb.losses.intra_view_contrast import ANCHORS, VIEWS, intra_view_contrast
from tfdialemb.methods.models.base import Method
from tfdialemb.methods.shared_options import TEMPERATURE
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option
from tfdialemb.text.pair_packing import PairLayout
from tfdialemb.text.stop_words import sklearn_english_stop_words

VIEW_LABELS = (1.0, 1.0, 0.0, 0.0)
"""The selection label of each of the four views (VIEWS order)."""
ORIGINAL_VIEWS = (0, 2)
"""The views (c, r+) and (c, r−): all a model without contrasts or augmented selection encodes."""
PROJECTION_SIZE = 256
HEAD_DROPOUT = 0.2
REDUCTIONS = ("sum", "mean")


class FineGrainedContrastModel(Method):
    """The cross-encoder, its selection head and projection; `per_example_loss` on FGC batches
    (`pair_ids`, `pair_mask`, `pair_segments`, each [B, V, T]: the four views in VIEWS order, or
    the two ORIGINAL_VIEWS when `uses_augmented_views` is false)."""

    def __init__(self, encoder: Encoder, temperature: float = 0.5, contrast_weight: float = 1.0,
                 ivc_weight: float = 1.0, cvc_weight: float = 1.0, reduction: str = "mean",
                 cvc_similarity: str = "cosine", ivc_anchors: str = "original", select_on_augmented: bool = False,
                 **kwargs):
        super().__init__(encoder, **kwargs)
        if reduction not in REDUCTIONS or cvc_similarity not in SIMILARITIES or ivc_anchors not in ANCHORS:
            raise ValueError(f"reduction must be one of {REDUCTIONS}, cvc_similarity one of {SIMILARITIES} and "
                             f"ivc_anchors one of {tuple(ANCHORS)}, got {reduction!r}, {cvc_similarity!r} and "
                             f"{ivc_anchors!r}")
        if temperature <= 0 or min(contrast_weight, ivc_weight, cvc_weight) < 0:
            raise ValueError("temperature must be positive and the weights non-negative")
        self.temperature = temperature
        self.ivc_weight = contrast_weight * ivc_weight
        self.cvc_weight = contrast_weight * cvc_weight
        self.reduction = reduction
        self.cvc_similarity = cvc_similarity
        self.ivc_anchors = ivc_anchors
        self.select_on_augmented = select_on_augmented
        width = encoder.encoder_config.hidden_size
        self.head_dropout = tf_keras.layers.Dropout(HEAD_DROPOUT)
        self.selection = tf_keras.layers.Dense(1, dtype="float32", name="selection")
        self.selection.build([None, width])
        self.projection = tf_keras.Sequential([
            tf_keras.layers.Dense(PROJECTION_SIZE, activation="relu", dtype="float32", name="hidden"),
            tf_keras.layers.Dense(PROJECTION_SIZE, dtype="float32", name="output"),
        ], name="projection")
        self.projection.build([None, width])

    @property
    def uses_augmented_views(self) -> bool:
        return augmented_views_used(self.ivc_weight, self.cvc_weight, self.select_on_augmented)

    def cls_states(self, ids: tf.Tensor, mask: tf.Tensor, segments: tf.Tensor, training: bool) -> tf.Tensor:
        """s_[CLS] [N, H] float32 of packed pairs [N, T]."""
        states = self.encoder({"input_word_ids": ids, "input_mask": mask, "input_type_ids": segments},
                              training=training)["sequence_output"]
        return tf.cast(first_token(states), tf.float32)

    def selection_logits(self, cls: tf.Tensor, training: bool = False) -> tf.Tensor:
        """W s_[CLS] + b [N] (Eq. 1 before the sigmoid)."""
        return self.selection(self.head_dropout(cls, training=training))[:, 0]

    def scores(self, ids: tf.Tensor, mask: tf.Tensor, segments: tf.Tensor) -> tf.Tensor:
        """ŷ = σ(W s_[CLS] + b) [N] of packed pairs, for ranking candidates."""
        return tf.sigmoid(self.selection_logits(self.cls_states(ids, mask, segments, False)))

    def representations(self, ids: tf.Tensor, mask: tf.Tensor, segments: tf.Tensor) -> Dict[str, tf.Tensor]:
        """{"cls": s_[CLS], "projection": z} [N, ·] of packed pairs (FGC Table 7's analysis)."""
        cls = self.cls_states(ids, mask, segments, False)
        return {"cls": cls, "projection": self.projection(cls)}

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        missing = [k for k in ("pair_ids", "pair_mask", "pair_segments") if k not in batch]
        if missing:
            raise ValueError(f"fgc batches need {missing}; build the examples with the `fgc` builder "
                             "and pack them with FgcSpec.batches")
        views = len(VIEWS) if self.uses_augmented_views else len(ORIGINAL_VIEWS)
        if batch["pair_ids"].shape[1] not in (None, views):
            raise ValueError(f"this model reads {views} views per context, the batch holds "
                             f"{batch['pair_ids'].shape[1]}; pack it with FgcSpec.batches for the same options")
        shape = tf.shape(batch["pair_ids"])
        contexts, length = shape[0], shape[2]

        def flat(name):
            return tf.reshape(batch[name], [-1, length])

        cls = self.cls_states(flat("pair_ids"), flat("pair_mask"), flat("pair_segments"), training)
        logits = tf.reshape(self.selection_logits(cls, training), [contexts, views])
        labels = [VIEW_LABELS[v] for v in (range(views) if views == len(VIEWS) else ORIGINAL_VIEWS)]
        cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.broadcast_to(tf.constant(labels), tf.shape(logits)), logits=logits)
        originals = ORIGINAL_VIEWS if views == len(VIEWS) else (0, 1)
        selected = cross_entropy if self.select_on_augmented else tf.gather(cross_entropy, originals, axis=1)
        losses = tf.reduce_mean(selected, axis=1)
        original_logits = tf.gather(logits, originals, axis=1)
        metrics = {"selection_loss": losses,
                   "accuracy": tf.reduce_mean(tf.cast(tf.equal(original_logits > 0, [True, False]),
                                                      tf.float32), axis=1),
                   "cls_cosine": _broadcast(mean_pairwise_cosine(cls), contexts)}
        if not (self.ivc_weight or self.cvc_weight):
            return losses, metrics
        z = self.projection(cls)
        metrics.update(z_cosine=_broadcast(mean_pairwise_cosine(z), contexts),
                       z_norm=_broadcast(tf.reduce_mean(tf.norm(z, axis=-1)), contexts))
        z = tf.reshape(z, [contexts, len(VIEWS), -1])
        scale = self._contrast_scale(contexts)
        if self.ivc_weight:
            ivc = intra_view_contrast(z, self.temperature, self.ivc_anchors) * scale["ivc"]
            losses += self.ivc_weight * ivc
            metrics["ivc"] = ivc
        if self.cvc_weight:
            classes = tf.cast(tf.broadcast_to(tf.constant(VIEW_LABELS), tf.shape(logits)), tf.int32)
            per_vector = cross_view_contrast(tf.reshape(z, [contexts * len(VIEWS), -1]),
                                             tf.reshape(classes, [-1]), self.temperature, self.cvc_similarity)
            cvc = tf.reduce_sum(tf.reshape(per_vector, [contexts, len(VIEWS)]), axis=1) * scale["cvc"]
            losses += self.cvc_weight * cvc
            metrics["cvc"] = cvc
        return losses, metrics

    def _contrast_scale(self, local_contexts: tf.Tensor) -> Dict[str, tf.Tensor]:
        """Factors that make the loop's mean over the global batch of N contexts give Eq. 3 and 5:
        their sums (×N) or means over their anchors (IVC 2N, or 4N with every view an anchor; CVC 4N)."""
        if self.reduction == "mean":
            return {"ivc": tf.constant(1.0 / len(ANCHORS[self.ivc_anchors])), "cvc": tf.constant(1.0 / len(VIEWS))}
        context = tf.distribute.get_replica_context()
        replicas = context.num_replicas_in_sync if context is not None else 1
        total = tf.cast(local_contexts * replicas, tf.float32)
        return {"ivc": total, "cvc": total}


def mean_pairwise_cosine(vectors: tf.Tensor) -> tf.Tensor:
    """The mean cosine over all pairs of distinct rows of `vectors` [n, d] (0 for n < 2): near 1
    when the representations have collapsed onto one direction."""
    unit = tf.math.l2_normalize(tf.cast(vectors, tf.float32), axis=-1)
    n = tf.cast(tf.shape(unit)[0], tf.float32)
    total = tf.reduce_sum(unit, axis=0)
    self_terms = tf.reduce_sum(unit * unit)
    return tf.math.divide_no_nan(tf.reduce_sum(total * total) - self_terms, n * (n - 1))


def _broadcast(value: tf.Tensor, contexts: tf.Tensor) -> tf.Tensor:
    """A batch-level figure as a per-context metric [B], which the training loop averages back."""
    return tf.fill([contexts], value)


@functools.lru_cache(maxsize=4)
def synonym_table(init_checkpoint: str, source: str) -> np.ndarray:
    """[V, K] synonyms for the vocabulary of `init_checkpoint`: its input embeddings' nearest
    whole words (`source="embedding"`), or the table in the file `source`."""
    pretrained = load_pretrained(init_checkpoint)
    vocab = pretrained.tokenizer.vocab
    stop_words = sklearn_english_stop_words()
    if source == "embedding":
        embeddings = pretrained.encoder.bert.get_embedding_layer().embeddings.numpy()
        return augmentation.embedding_synonyms(vocab, embeddings, stop_words)
    return augmentation.file_synonyms(source, vocab, stop_words)


def pair_views(batch: Dict[str, tf.Tensor], seed: tf.Tensor, layout: PairLayout, pad_id: int = 0,
               augment: Optional[Callable[..., tf.RaggedTensor]] = None) -> Dict[str, tf.Tensor]:
    """The packed passes (c, r+), (c, r̄+), (c, r−), (c, r̄−) [B, 4, T] of a `fgc` batch, the
    responses augmented by `augment(responses, seed=, word_starts=)`; without `augment` only
    (c, r+), (c, r−) [B, 2, T]."""
    context = stored_turns(batch["context"], batch["context_mask"])
    word_starts = None
    if batch["positive"].shape.rank == 3:  # responses stored as word rows (jieba)
        responses, word_starts = augmentation.words_of_rows(tf.concat([
            stored_turns(batch["positive"], batch["positive_mask"]),
            stored_turns(batch["negative"], batch["negative_mask"])], axis=0))
    else:
        responses = tf.concat([stored_pieces(batch["positive"], batch["positive_mask"]),
                               stored_pieces(batch["negative"], batch["negative_mask"])], axis=0)
    contexts = tf.shape(batch["positive"])[0]
    if augment is not None:
        changed = augment(responses, seed=seed, word_starts=word_starts)
        views = tf.concat([responses[:contexts], changed[:contexts], responses[contexts:], changed[contexts:]],
                          axis=0)  # view-major: [4 · B] in VIEWS order
    else:
        views = responses  # [2 · B]: positives, then negatives
    count = 2 if augment is None else 4
    order = tf.reshape(tf.transpose(tf.reshape(tf.range(count * contexts), [count, contexts])), [-1])
    packed = layout.pack(tf.gather(context, tf.repeat(tf.range(contexts), count)), tf.gather(views, order))
    inputs = {name: tf.reshape(value, [contexts, count, -1]) for name, value in packed.dense(pad_id).items()}
    return {"pair_ids": inputs["input_word_ids"], "pair_mask": inputs["input_mask"],
            "pair_segments": inputs["input_type_ids"]}


FGC_NEGATIVES = Option("fgc_negatives", 1, "Negatives per positive when cutting pairs from dialogues, "
                       "or per positive of a response-selection context (Ubuntu train: 1).", lower_bound=1)
AUG_STRENGTH = Option("aug_strength", 0.2, "EDA strength p of the response augmentation (FGC Table 5: "
                      "0.2; 0 gives SimCSE-style dropout views).", lower_bound=0.0, upper_bound=1.0)
AUG_AT_LEAST_ONE = Option("aug_at_least_one", True, "Each augmented response differs from its original "
                          "in at least one word (EDA's n = max(1, αl)); false: the per-word draws alone, "
                          "which at p = 0.2 leave a third of the demo corpus's responses unchanged.")
WORDS = Option("fgc_words", "wordpiece", "Words of the response augmentation: wordpiece (a piece and its "
               "## pieces, for English) or jieba (Chinese; needs `pip install jieba`).",
               choices=augmentation.WORD_UNITS)
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
        length = tf.shape(batch["pair_ids"])[-1]
        return [(tf.reshape(batch["pair_ids"], [-1, length]), tf.reshape(batch["pair_mask"], [-1, length]))]
