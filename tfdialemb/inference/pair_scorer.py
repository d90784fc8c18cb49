"""Scores (context, response) pairs with a trained cross-encoder: strings in, probabilities out.

Tokenization, [EOT] insertion and truncation are the training pipeline's (`PairLayout.pack` on
turns and responses bounded like the build's), inside one traced graph shared with the exported
scorer (`tfdialemb.serving.selection`).
"""
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.config import usable_max_length
from tfdialemb.inference.kinds import register_runtime
from tfdialemb.inference.sentence_transformers_calls import batch_output, progress_callback
from tfdialemb.inference.trace_policy import TraceWhenWorthIt
from tfdialemb.model_dir import ModelSource
from tfdialemb.text.tokenizer import BertTokenizer
from tfdialemb.text.pair_packing import PairLayout, bound_pieces
from tfdialemb.text.tokenizer import require_tokens

SIGNATURE = [tf.TensorSpec([None], tf.string, name="turns"),
             tf.TensorSpec([None], tf.int32, name="turn_counts"),
             tf.TensorSpec([None], tf.string, name="responses")]
"""One batch of pairs: the context turns of every pair in order, each pair's number of turns,
and each pair's response."""


@register_runtime("selection")
class PairScorer(tf.Module):
    """σ(W s_[CLS] + b) of pairs through `model.scores(ids, mask, segments)` (e.g. FGC's), and
    their representations through `model.representations`.

    Pairs are sorted by length and batched so each batch pads only to its own longest pair; a run
    of a few batches runs eagerly, a longer one traces (`TraceWhenWorthIt`)."""

    def __init__(self, model, tokenizer: BertTokenizer, max_length: int = 512, layout: str = "paper"):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = usable_max_length(model.encoder.encoder_config, max_length)
        self.layout = PairLayout.of(tokenizer, self.max_length, layout)
        self._score_function = TraceWhenWorthIt(self.score_batch)
        self._represent_function = TraceWhenWorthIt(self.represent_batch)

    @classmethod
    def load(cls, path: Union[str, os.PathLike], max_length: Optional[int] = None) -> "PairScorer":
        """From the directory of a trained cross-encoder (`--method=fgc`), its head included, with
        its recorded pair layout and max length (`max_length` overrides the record, with a warning)."""
        source = ModelSource(path)
        settings = source.settings("selection", {"max_length": max_length})
        return cls.from_settings(*source.serving_parts("selection"), settings)

    @classmethod
    def from_settings(cls, model, tokenizer: BertTokenizer, settings) -> "PairScorer":
        """From the `selection` settings of `tfdialemb.kind_registry`."""
        return cls(model, tokenizer, max_length=settings["max_length"], layout=settings["pair_layout"])

    def pieces(self, texts: tf.Tensor, name: str) -> tf.RaggedTensor:
        """The word pieces of `texts` [N], the signature input `name`, as the build stores them:
        at most max_length - 2 each; a text without a token is refused (`require_tokens`)."""
        return require_tokens(bound_pieces(self.tokenizer.tokenize(texts, self.max_length - 2), self.max_length),
                              name)

    def pack(self, turns: tf.Tensor, turn_counts: tf.Tensor, responses: tf.Tensor):
        """The encoder inputs of a batch of pairs (see SIGNATURE); counts must add up to the turns
        and every turn and response must have a token."""
        counts = tf.cast(turn_counts, tf.int64)
        checks = [
            tf.debugging.assert_equal(tf.reduce_sum(counts), tf.size(turns, tf.int64),
                                      message="turn_counts must add up to the number of turns"),
            tf.debugging.assert_equal(tf.size(counts), tf.size(responses),
                                      message="give one turn count per response"),
            tf.debugging.assert_non_negative(counts, message="turn_counts must not be negative"),
        ]
        with tf.control_dependencies(checks):
            context = tf.RaggedTensor.from_row_lengths(self.pieces(turns, "turns"), counts)
        return self.pack_pieces(context, responses, "responses")

    def pack_pieces(self, context: tf.RaggedTensor, responses: tf.Tensor, name: str):
        """The encoder inputs of tokenized contexts [B, (turns), (pieces)] with `responses` [B],
        the signature input `name`."""
        return self.layout.pack(context, self.pieces(responses, name)).dense(self.tokenizer.pad_id)

    @tf.function(autograph=False, input_signature=SIGNATURE, reduce_retracing=True)
    def score_batch(self, turns, turn_counts, responses):
        return self._scores(self.pack(turns, turn_counts, responses))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="turns"),
                                  tf.TensorSpec([None], tf.string, name="candidates")], autograph=False)
    def rank_batch(self, turns, candidates):
        """Scores [C] of `candidates` [C] after the one context `turns` [n], whose turns are
        tokenized once for all the candidates."""
        context = tf.RaggedTensor.from_row_lengths(self.pieces(turns, "turns"), tf.size(turns, tf.int64)[tf.newaxis])
        every = tf.zeros([tf.size(candidates)], tf.int32)
        return self._scores(self.pack_pieces(tf.gather(context, every), candidates, "candidates"))

    def _scores(self, inputs):
        return self.model.scores(inputs["input_word_ids"], inputs["input_mask"], inputs["input_type_ids"])

    @tf.function(autograph=False, input_signature=SIGNATURE, reduce_retracing=True)
    def represent_batch(self, turns, turn_counts, responses):
        inputs = self.pack(turns, turn_counts, responses)
        return self.model.representations(inputs["input_word_ids"], inputs["input_mask"],
                                          inputs["input_type_ids"])

    def score(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], batch_size: int = 64,
              on_batch: Optional[Callable[[int], None]] = None) -> np.ndarray:
        """Probabilities [len(responses)] float32 of the pairs (contexts[i], responses[i])."""
        return self._map(self._score_function, contexts, responses, batch_size, on_batch)

    def represent(self, contexts: Sequence[Sequence[str]], responses: Sequence[str], batch_size: int = 64,
                  on_batch: Optional[Callable[[int], None]] = None) -> Dict[str, np.ndarray]:
        """{view: [len(responses), d]} representations of the pairs (`model.representations`)."""
        return self._map(self._represent_function, contexts, responses, batch_size, on_batch)

    def predict(self, pairs, batch_size: int = 32, show_progress_bar: Optional[bool] = None,
                convert_to_numpy: bool = True, convert_to_tensor: bool = False):
        """`score` called as sentence-transformers' `CrossEncoder.predict`: a list of (context,
        response) pairs gives their probabilities [len] float32, one pair a single score; a
        context is one turn's text or the list of its turns. Numpy, or a tf.Tensor with
        `convert_to_numpy=False` or `convert_to_tensor=True`; `show_progress_bar` as
        `SentenceEmbedder.encode`."""
        single = _is_pair(pairs)
        items = [pairs] if single else list(pairs)
        for position, pair in enumerate(items):
            if not _is_pair(pair):
                raise ValueError(f"pair {position}: expected (context, response), the context a text or a list of "
                                 f"turn texts and the response a text, got {pair!r:.80}")
        if not items:
            return batch_output(np.zeros([0], np.float32), single, convert_to_numpy, convert_to_tensor)
        contexts = [[context] if isinstance(context, str) else list(context) for context, _ in items]
        scores = self.score(contexts, [response for _, response in items], batch_size,
                            progress_callback(len(items), "pairs", show_progress_bar))
        return batch_output(scores, single, convert_to_numpy, convert_to_tensor)

    def rank(self, query: Union[str, Sequence[str]], candidates: Sequence[str], top_k: Optional[int] = None,
             return_documents: bool = False, batch_size: int = 32,
             show_progress_bar: Optional[bool] = None) -> List[Dict[str, Any]]:
        """The `candidates` responses to the context `query` (a text or its turns) ranked as
        sentence-transformers' `CrossEncoder.rank` ranks documents: a list of {"corpus_id": index
        in `candidates`, "score": probability} (and "text" with `return_documents`), highest score
        first, equal scores in candidate order, the first `top_k` (all with None)."""
        if not _is_pair((query, "")):
            raise ValueError(f"query: expected a context text or a list of turn texts, got {query!r:.80}")
        if isinstance(candidates, str):
            raise ValueError("candidates must be a list of response texts, got one string")
        for position, candidate in enumerate(candidates):
            if not isinstance(candidate, str):
                raise ValueError(f"candidate {position}: expected a response text, got {type(candidate).__name__}")
        if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1):
            raise ValueError(f"top_k must be None or a positive integer, got {top_k!r}")
        scores = self.predict([(query, candidate) for candidate in candidates], batch_size, show_progress_bar)
        ranked = []
        for index, score in enumerate(scores):
            ranked.append({"corpus_id": index, "score": score})
            if return_documents:
                ranked[-1]["text"] = candidates[index]
        return sorted(ranked, key=lambda result: result["score"], reverse=True)[:top_k]

    @staticmethod
    def _map(policy: TraceWhenWorthIt, contexts, responses, batch_size, on_batch):
        """The batch function `policy` picks, over length-sorted batches of pairs; its outputs back
        in input order."""
        if len(contexts) != len(responses):
            raise ValueError(f"{len(contexts)} contexts for {len(responses)} responses")
        function = policy.for_batches(len(responses), batch_size)
        lengths = [len(r) + sum(len(t) for t in c) for c, r in zip(contexts, responses)]
        order = np.argsort(lengths, kind="stable")
        pieces = []
        for start in range(0, len(responses), batch_size):
            index = order[start:start + batch_size]
            turns = [turn for i in index for turn in contexts[i]]
            pieces.append(tf.nest.map_structure(lambda t: t.numpy(), function(
                tf.constant(turns, tf.string, shape=[len(turns)]),
                tf.constant([len(contexts[i]) for i in index], tf.int32),
                tf.constant([responses[i] for i in index], tf.string))))
            if on_batch is not None:
                on_batch(len(index))
        inverse = np.argsort(order, kind="stable")
        return tf.nest.map_structure(lambda *parts: np.concatenate(parts)[inverse], *pieces)


def _is_pair(value) -> bool:
    """Whether `value` is one (context, response): the context a text or a list of texts."""
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not isinstance(value[1], str):
        return False
    context = value[0]
    return isinstance(context, str) or (isinstance(context, (list, tuple))
                                        and all(isinstance(turn, str) for turn in context))
