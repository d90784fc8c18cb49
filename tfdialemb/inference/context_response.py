"""Context and response embeddings of a trained context-response model: strings in, unit vectors out.

The cosine of `embed_contexts(...)[i]` and `embed_responses(...)[j]` is the model's similarity of
context i and response j (augmentation thesis, appendix 1.1); the stage clustering of the crop and
shuffle augmentations builds a dialogue's similarity matrix from it. Texts are tokenized as the
build tokenizes them (`[CLS] pieces [SEP]`, at most the recorded max_length tokens) and the last
`context` utterances of a context fill its slots oldest first, empty slots left at the end, as
`tfdialemb.data.context_response_pairs` lays out training contexts; tokenizer, slot layout,
encoder and projectors run in one traced graph per input kind, once a run has enough batches for
tracing to pay (`TraceWhenWorthIt`; a few batches run eagerly).
"""
from typing import Callable, Optional, Sequence

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.config import usable_max_length
from tfdialemb.inference.embedder import embed_by_length
from tfdialemb.inference.kinds import register_runtime
from tfdialemb.inference.trace_policy import TraceWhenWorthIt
from tfdialemb.model_dir import ModelSource
from tfdialemb.text.tokenizer import BertTokenizer
from tfdialemb.text.tokenizer import require_tokens

CONTEXT_SIGNATURE = [tf.TensorSpec([None], tf.string, name="turns"),
                     tf.TensorSpec([None], tf.int32, name="turn_counts")]
"""One batch of contexts: their utterances in order, oldest first, and each context's number of
utterances (1 to `context`). Every utterance, like every response, needs a token
(`require_tokens`)."""
RESPONSE_SIGNATURE = [tf.TensorSpec([None], tf.string, name="responses")]


@register_runtime("context_response")
class ContextResponseEncoder(tf.Module):
    """`model.embed_contexts(ids [B, context, T], mask)` and `model.embed_responses(ids [B, T], mask)`
    of a trained context-response model (`--method=context_response`) over raw texts.

    The model embeds each utterance on its own, so contexts and responses can also be made from
    utterance vectors embedded once (`per_utterance`, for `augment.similarity_sources.UtteranceSimilarity`):
    `embed_utterances`, then `contexts_from_utterances` and `responses_from_utterances`."""

    per_utterance = True

    def __init__(self, model, tokenizer: BertTokenizer, context: int, max_length: int = 512):
        super().__init__()
        if context < 1:
            raise ValueError(f"context must be at least 1 utterance, got {context}")
        self.model = model
        self.tokenizer = tokenizer
        self.context = context
        self.max_length = usable_max_length(model.encoder.encoder_config, max_length)
        self.width = model.projection_size
        self._context_function = TraceWhenWorthIt(self.context_batch)
        self._response_function = TraceWhenWorthIt(self.response_batch)
        self._utterance_function = TraceWhenWorthIt(self.utterance_batch)

    @classmethod
    def from_settings(cls, model, tokenizer: BertTokenizer, settings) -> "ContextResponseEncoder":
        """From the `context_response` settings of `tfdialemb.kind_registry`."""
        return cls(model, tokenizer, context=settings["context"], max_length=settings["max_length"])

    @classmethod
    def from_model_dir(cls, directory: str) -> "ContextResponseEncoder":
        """The model trained in `directory` by `python -m tfdialemb.train --method=context_response`,
        with the context size and max length recorded there."""
        source = ModelSource(directory)
        settings = source.settings("context_response", {})
        return cls.from_settings(*source.serving_parts("context_response"), settings)

    def _inputs(self, texts: tf.Tensor, name: str):
        """Ids and mask of `texts`, the signature input `name`; a text without a token is refused."""
        pieces = require_tokens(self.tokenizer.tokenize(texts, self.max_length), name)
        inputs = self.tokenizer.pack([pieces], max_length=self.max_length)
        return inputs["input_word_ids"], inputs["input_mask"]

    @tf.function(autograph=False, input_signature=CONTEXT_SIGNATURE, reduce_retracing=True)
    def context_batch(self, turns, turn_counts):
        """Unit context vectors [B, width] (see CONTEXT_SIGNATURE)."""
        counts = tf.cast(turn_counts, tf.int64)
        checks = [
            tf.debugging.assert_equal(tf.reduce_sum(counts), tf.size(turns, tf.int64),
                                      message="turn_counts must add up to the number of turns"),
            tf.debugging.assert_positive(counts, message="every context needs at least one utterance"),
            tf.debugging.assert_less_equal(counts, tf.cast(self.context, tf.int64),
                                           message="a context holds at most `context` utterances"),
        ]
        with tf.control_dependencies(checks):
            ids, mask = self._inputs(turns, "turns")
        # Utterance j of context b goes to slot b·context + j: the first slots, oldest first.
        places = tf.ragged.range(counts)
        slot = places.value_rowids() * self.context + places.values
        rows = tf.size(counts, tf.int64) * self.context
        length = tf.shape(ids, tf.int64)[1]
        shape = tf.stack([rows, length])
        dense_ids = tf.reshape(tf.scatter_nd(slot[:, tf.newaxis], ids, shape), [-1, self.context, length])
        dense_mask = tf.reshape(tf.scatter_nd(slot[:, tf.newaxis], mask, shape), [-1, self.context, length])
        return self.model.embed_contexts(dense_ids, dense_mask, training=False)

    @tf.function(autograph=False, input_signature=RESPONSE_SIGNATURE, reduce_retracing=True)
    def response_batch(self, responses):
        """Unit response vectors [B, width]."""
        ids, mask = self._inputs(responses, "responses")
        return self.model.embed_responses(ids, mask, training=False)

    @tf.function(autograph=False, input_signature=RESPONSE_SIGNATURE, reduce_retracing=True)
    def utterance_batch(self, utterances):
        """Utterance vectors [B, hidden], before either projector."""
        ids, mask = self._inputs(utterances, "utterances")
        return self.model.embed_utterances(ids, mask, training=False)

    def embed_contexts(self, contexts: Sequence[Sequence[str]], batch_size: int = 64,
                       on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
        """[len(contexts), width] float32, L2-normalised; each context is its utterances oldest
        first, of which the last `context` are used. Batches group contexts of similar length."""
        kept = [list(c)[-self.context:] for c in contexts]
        empty = [i for i, c in enumerate(kept) if not c]
        if empty:
            raise ValueError(f"contexts {empty[:5]} have no utterance; a context-response model embeds a "
                             "context of at least one")
        context_batch = self._context_function.for_batches(len(kept), batch_size)
        order = np.argsort([sum(len(t) for t in c) for c in kept], kind="stable")
        output = np.zeros([len(kept), self.width], np.float32)
        for start in range(0, len(kept), batch_size):
            index = order[start:start + batch_size]
            turns = [turn for i in index for turn in kept[i]]
            output[index] = context_batch(tf.constant(turns, tf.string, shape=[len(turns)]),
                                          tf.constant([len(kept[i]) for i in index], tf.int32)).numpy()
            if on_batch is not None:
                on_batch(len(index))
        return output

    def embed_responses(self, texts: Sequence[str], batch_size: int = 64,
                        on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
        """[len(texts), width] float32, L2-normalised."""
        response_batch = self._response_function.for_batches(len(texts), batch_size)
        return embed_by_length(list(texts), response_batch, self.width, batch_size, on_batch)

    def embed_utterances(self, texts: Sequence[str], batch_size: int = 64,
                         on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
        """[len(texts), hidden] float32: each text's vector as a context slot or a response reads it."""
        utterance_batch = self._utterance_function.for_batches(len(texts), batch_size)
        return embed_by_length(list(texts), utterance_batch, self.model.encoder.encoder_config.hidden_size,
                               batch_size, on_batch)

    def contexts_from_utterances(self, slots: np.ndarray) -> np.ndarray:
        """Unit context vectors [N, width] of `embed_utterances` vectors in context slots
        [N, context, hidden], oldest first, empty slots zero (as `embed_contexts` lays them out)."""
        return self.model.project_contexts(tf.constant(slots, tf.float32), training=False).numpy()

    def responses_from_utterances(self, vectors: np.ndarray) -> np.ndarray:
        """Unit response vectors [N, width] of `embed_utterances` vectors [N, hidden]."""
        return self.model.response_projector(tf.constant(vectors, tf.float32), training=False).numpy()
