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
L = L_sel + λ(L_ivc + L_cvc), λ = 1. Eq. 3 and 5 sum over the batch (`fgc_reduction=sum`, the
default, as written) while L_sel is a mean; `fgc_reduction=mean` averages them over their anchors
instead. Choices where the paper is silent (README, "FGC"): the projection's hidden layer is 256
wide with ReLU (Appendix A) and its output 256 wide too; a dropout of 0.2 precedes the selection
head, as in taesunwhang/UMS-ResSel models/bert_cls.py:BertCls (dropout_keep_prob 0.8) whose
BERT baselines FGC extends; L_sel sees the original pairs only unless `select_on_augmented`.
Table 2's BERT baseline is `--ivc_weight=0 --cvc_weight=0`; Table 8's "augmentation only" adds
`--select_on_augmented`; Table 6's SimCSE-style views are `--aug_strength=0` (identical texts,
two dropout masks).
"""
import dataclasses
import functools
import os
from typing import Dict

import numpy as np
import tensorflow as tf
import tf_keras

from tfdialemb.data import response_augmentation as augmentation
from tfdialemb.data.batch_seeds import map_with_batch_seeds
from tfdialemb.data.stored_pieces import stored_pieces, stored_turns
from tfdialemb.encoders import Encoder
from tfdialemb.encoders.pooling import first_token
from tfdialemb.inference.settings import FGC_INPUT
from tfdialemb.losses.cross_view_contrast import SIMILARITIES, cross_view_contrast
from tfdialemb.losses.intra_view_contrast import VIEWS, intra_view_contrast
from tfdialemb.methods.base import Method
from tfdialemb.methods.mge import TEMPERATURE
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.options import Option
from tfdialemb.text.pair_packing import PairLayout

VIEW_LABELS = (1.0, 1.0, 0.0, 0.0)
"""The selection label of each of the four views (VIEWS order)."""
PROJECTION_SIZE = 256
HEAD_DROPOUT = 0.2
REDUCTIONS = ("sum", "mean")


class FineGrainedContrastModel(Method):
    """The cross-encoder, its selection head and projection; `per_example_loss` on FGC batches
    (`pair_ids`, `pair_mask`, `pair_segments`, each [B, 4, T] in VIEWS order)."""

    def __init__(self, encoder: Encoder, temperature: float = 0.5, contrast_weight: float = 1.0,
                 ivc_weight: float = 1.0, cvc_weight: float = 1.0, reduction: str = "sum",
                 cvc_similarity: str = "dot", select_on_augmented: bool = False, **kwargs):
        super().__init__(encoder, **kwargs)
        if reduction not in REDUCTIONS or cvc_similarity not in SIMILARITIES:
            raise ValueError(f"reduction must be one of {REDUCTIONS} and cvc_similarity one of "
                             f"{SIMILARITIES}, got {reduction!r} and {cvc_similarity!r}")
        if temperature <= 0 or min(contrast_weight, ivc_weight, cvc_weight) < 0:
            raise ValueError("temperature must be positive and the weights non-negative")
        self.temperature = temperature
        self.ivc_weight = contrast_weight * ivc_weight
        self.cvc_weight = contrast_weight * cvc_weight
        self.reduction = reduction
        self.cvc_similarity = cvc_similarity
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
        shape = tf.shape(batch["pair_ids"])
        contexts, length = shape[0], shape[2]

        def flat(name):
            return tf.reshape(batch[name], [-1, length])

        cls = self.cls_states(flat("pair_ids"), flat("pair_mask"), flat("pair_segments"), training)
        logits = tf.reshape(self.selection_logits(cls, training), [contexts, len(VIEWS)])
        labels = tf.broadcast_to(tf.constant(VIEW_LABELS), tf.shape(logits))
        cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        selected = cross_entropy if self.select_on_augmented else tf.gather(cross_entropy, [0, 2], axis=1)
        losses = tf.reduce_mean(selected, axis=1)
        metrics = {"selection_loss": losses,
                   "accuracy": tf.reduce_mean(tf.cast(tf.equal(logits[:, 0::2] > 0, [True, False]),
                                                      tf.float32), axis=1)}
        z = tf.reshape(self.projection(cls), [contexts, len(VIEWS), -1])
        scale = self._contrast_scale(contexts)
        if self.ivc_weight:
            ivc = intra_view_contrast(z, self.temperature) * scale["ivc"]
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
        their sums (×N) or means over their anchors (IVC 2N, CVC 4N)."""
        if self.reduction == "mean":
            return {"ivc": tf.constant(0.5), "cvc": tf.constant(1.0 / len(VIEWS))}
        context = tf.distribute.get_replica_context()
        replicas = context.num_replicas_in_sync if context is not None else 1
        total = tf.cast(local_contexts * replicas, tf.float32)
        return {"ivc": total, "cvc": total}


@functools.lru_cache(maxsize=4)
def synonym_table(init_checkpoint: str, source: str) -> np.ndarray:
    """[V, K] synonyms for the vocabulary of `init_checkpoint`: its input embeddings' nearest
    whole words (`source="embedding"`), or the table in the file `source`."""
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel

    pretrained = load_pretrained(init_checkpoint)
    vocab = pretrained.tokenizer.vocab
    stop_words = augmentation.english_stop_words()
    if source == "embedding":
        embeddings = pretrained.encoder.bert.get_embedding_layer().embeddings.numpy()
        return augmentation.embedding_synonyms(vocab, embeddings, stop_words)
    return augmentation.file_synonyms(source, vocab, stop_words)


def four_views(batch: Dict[str, tf.Tensor], seed: tf.Tensor, layout: PairLayout, continuation: tf.Tensor,
               synonyms: tf.Tensor, strength: float, pad_id: int = 0) -> Dict[str, tf.Tensor]:
    """The packed passes (c, r+), (c, r̄+), (c, r−), (c, r̄−) [B, 4, T] of a `fgc` batch."""
    context = stored_turns(batch["context"], batch["context_mask"])
    word_starts = None
    if batch["positive"].shape.rank == 3:  # responses stored as word rows (jieba)
        responses, word_starts = augmentation.words_of_rows(tf.concat([
            stored_turns(batch["positive"], batch["positive_mask"]),
            stored_turns(batch["negative"], batch["negative_mask"])], axis=0))
    else:
        responses = tf.concat([stored_pieces(batch["positive"], batch["positive_mask"]),
                               stored_pieces(batch["negative"], batch["negative_mask"])], axis=0)
    augmented = augmentation.augment_responses(responses, continuation=continuation, synonyms=synonyms,
                                               strength=strength, seed=seed, word_starts=word_starts)
    contexts = tf.shape(batch["positive"])[0]
    views = tf.concat([responses[:contexts], augmented[:contexts], responses[contexts:], augmented[contexts:]],
                      axis=0)  # view-major: [4 · B] in VIEWS order
    order = tf.reshape(tf.transpose(tf.reshape(tf.range(4 * contexts), [4, contexts])), [-1])
    packed = layout.pack(tf.gather(context, tf.repeat(tf.range(contexts), 4)), tf.gather(views, order))
    inputs = {name: tf.reshape(value, [contexts, 4, -1]) for name, value in packed.dense(pad_id).items()}
    return {"pair_ids": inputs["input_word_ids"], "pair_mask": inputs["input_mask"],
            "pair_segments": inputs["input_type_ids"]}


FGC_NEGATIVES = Option("fgc_negatives", 1, "Negatives per positive when cutting pairs from dialogues, "
                       "or per positive of a response-selection context (Ubuntu train: 1).", lower_bound=1)
AUG_STRENGTH = Option("aug_strength", 0.2, "EDA strength p of the response augmentation (FGC Table 5: "
                      "0.2; 0 gives SimCSE-style dropout views).", lower_bound=0.0, upper_bound=1.0)
WORDS = Option("fgc_words", "wordpiece", "Words of the response augmentation: wordpiece (a piece and its "
               "## pieces, for English) or jieba (Chinese; needs `pip install jieba`).",
               choices=augmentation.WORD_UNITS)
SYNONYMS = Option("synonyms", "embedding", "Synonym source: `embedding` (nearest whole words in the "
                  "encoder's input embeddings) or a file of `word<TAB>syn,syn` lines.")
FGC_TEMPERATURE = dataclasses.replace(TEMPERATURE, default=0.5)
CONTRAST_WEIGHT = Option("contrast_weight", 1.0, "λ of L = L_sel + λ(L_ivc + L_cvc) (FGC: 1).", lower_bound=0.0)
IVC_WEIGHT = Option("ivc_weight", 1.0, "Weight of IVC inside λ(...) (0 removes it, Table 3 -IVC).",
                    lower_bound=0.0)
CVC_WEIGHT = Option("cvc_weight", 1.0, "Weight of CVC inside λ(...) (0 removes it, Table 3 -CVC).",
                    lower_bound=0.0)
REDUCTION = Option("fgc_reduction", "sum", "IVC and CVC summed over the batch as Eq. 3 and 5 are "
                   "written, or averaged over their anchors.", choices=REDUCTIONS)
CVC_SIMILARITY = Option("cvc_similarity", "dot", "CVC similarity: the dot product as Eq. 5 is written, "
                        "or cosine.", choices=SIMILARITIES)
SELECT_ON_AUGMENTED = Option("select_on_augmented", False, "L_sel also on the augmented pairs "
                             "(with the contrasts off: Table 8's augmentation only).")


@register_method
class FgcSpec(MethodSpec):
    """FGC's cross-encoder trained on `fgc` examples, four views per context."""

    name = "fgc"
    paper = "FGC (Li et al., 2022), fine-grained contrastive learning for response selection"
    builder = "fgc"
    options = (FGC_INPUT, FGC_NEGATIVES, AUG_STRENGTH, WORDS, SYNONYMS, FGC_TEMPERATURE, CONTRAST_WEIGHT,
               IVC_WEIGHT, CVC_WEIGHT, REDUCTION, CVC_SIMILARITY, SELECT_ON_AUGMENTED)
    defaults = {"batch_size": 32, "learning_rate": 3e-5, "freeze_layers": 0, "max_length": 512,
                "num_epochs": 5, "lr_schedule": "linear", "warmup_fraction": 0.0, "weight_decay": 0.0}
    """FGC Appendix A: AdamW, 3e-5 decayed linearly to 0, 5 epochs, 512 tokens; the batch size is not
    given: 32, the virtual batch of taesunwhang/UMS-ResSel config/hparams.py."""
    offers = ("selection",)
    bench_defaults = {"batch": 8, "dialogues": 200, "max_length": 128, "steps": 5, "warmup": 1}

    def builder_params(self, params):
        return {"negatives": params["fgc_negatives"], "words": params["fgc_words"]}

    def check(self, params, run):
        if params["synonyms"] != "embedding" and not os.path.isfile(params["synonyms"]):
            raise ValueError(f"--synonyms={params['synonyms']}: no such file (or use `embedding`)")
        return []

    def make_model(self, encoder, params):
        return FineGrainedContrastModel(
            encoder, temperature=params["temperature"], contrast_weight=params["contrast_weight"],
            ivc_weight=params["ivc_weight"], cvc_weight=params["cvc_weight"],
            reduction=params["fgc_reduction"], cvc_similarity=params["cvc_similarity"],
            select_on_augmented=params["select_on_augmented"])

    def inference_settings(self, params):
        return {"selection": {"fgc_input": params["fgc_input"]}}

    def batches(self, dataset, tokenizer, params, run):
        layout = PairLayout.of(tokenizer, run.max_length, params["fgc_input"])
        continuation = tf.constant(augmentation.continuation_pieces(tokenizer.vocab))
        synonyms = tf.constant(synonym_table(run.init_checkpoint, params["synonyms"]))
        strength = params["aug_strength"]

        def views(batch, seed):
            return four_views(batch, seed, layout, continuation, synonyms, strength, tokenizer.pad_id)

        return map_with_batch_seeds(dataset, run.seed, views)

    def bench_sequences(self, batch, params):
        length = tf.shape(batch["pair_ids"])[-1]
        return [(tf.reshape(batch["pair_ids"], [-1, length]), tf.reshape(batch["pair_mask"], [-1, length]))]
