"""FGC's trainable model: the cross-encoder with its selection head and projection, and the
input views it reads (the method is described in its spec module, `tfdialemb.methods.fgc`)."""
import functools
from typing import Callable, Dict, Optional

import numpy as np
import tensorflow as tf
import tf_keras

from tfdialemb.data import response_augmentation as augmentation
from tfdialemb.data.stored_pieces import stored_pieces, stored_turns
from tfdialemb.encoders.checkpoint import load_pretrained
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.pooling import first_token
from tfdialemb.losses.choices import ANCHORS, SIMILARITIES
from tfdialemb.losses.cross_view_contrast import cross_view_contrast
from tfdialemb.losses.intra_view_contrast import VIEWS, intra_view_contrast
from tfdialemb.methods.fgc import REDUCTIONS, augmented_views_used
from tfdialemb.methods.models.base import Method
from tfdialemb.text.pair_packing import PairLayout
from tfdialemb.text.stop_words import sklearn_english_stop_words

VIEW_LABELS = (1.0, 1.0, 0.0, 0.0)
"""The selection label of each of the four views (VIEWS order)."""
ORIGINAL_VIEWS = (0, 2)
"""The views (c, r+) and (c, r−): all a model without contrasts or augmented selection encodes."""
PROJECTION_SIZE = 256
HEAD_DROPOUT = 0.2


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
