"""Where the within-dialogue utterance similarity of crop and shuffle comes from (thesis appendix
1.1; released mylib/augmentations/prune.py `get_similarities`, mylib/modeling/pairwise/
simplified_pairwise.py).

A source is any object with `context` (utterances per context window), `embed_contexts(contexts)`
(each context its utterances, oldest first) and `embed_responses(texts)`, both returning rows
[N, d]. Two are provided:
- the auxiliary context-response model (`--context_response_model`):
  `tfdialemb.inference.context_response.ContextResponseEncoder`, with the window it was trained
  with (thesis: 3);
- a sentence encoder (`--sentence_encoder`; the "-dse" sets, † in Table 1): mean-pooled
  last-layer embeddings of any checkpoint `load_pretrained` reads (e.g. aws-ai/dse-bert-base).
  The thesis uses it "without the auxiliary model and without the context window" (appendix
  1.1, last paragraph): one utterance against another, cosine (`--sentence_encoder_context=1`,
  `--sentence_encoder_similarity=cosine`, the defaults). The released code instead gives DSE the
  up to 3 utterances before the response joined by newlines (SimplifiedPairwise.forward,
  make_batch_from_dia) and takes the dot product of the unnormalised mean-pooled vectors
  (`context_encodings @ target_encodings.T`): `--sentence_encoder_context=3
  --sentence_encoder_similarity=dot` reproduces it.
"""
from typing import Callable, Dict, Hashable, Iterable, List, Sequence

import numpy as np

from tfdialemb.similarity import cosine_matrix

COSINE, DOT = "cosine", "dot"
MEASURES = (COSINE, DOT)
CONTEXT_SEPARATOR = "\n"
"""Between the utterances of a context given to a sentence encoder (SimplifiedPairwise.forward)."""


class SentenceEncoderSimilarity:
    """A sentence encoder as a similarity source: a context is its utterances joined by newlines."""

    def __init__(self, embedder, context: int = 1, batch_size: int = 64):
        """`embedder`: anything with `embed(texts, batch_size=...)` (`tfdialemb.embedder.SentenceEmbedder`)."""
        if context < 1:
            raise ValueError(f"a context window holds at least one utterance, got {context}")
        self.embedder = embedder
        self.context = context
        self.batch_size = batch_size

    @classmethod
    def from_model_dir(cls, path: str, context: int = 1, batch_size: int = 64) -> "SentenceEncoderSimilarity":
        """Mean pooling as the released mySentenceTransformer, whatever the checkpoint recorded."""
        from tfdialemb.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel
        from tfdialemb.model_dir import ModelSource  # pylint: disable=import-outside-toplevel

        source = ModelSource(path)
        settings = source.settings("sentence", {"pooling": "mean"})
        pretrained = source.pretrained
        return cls(SentenceEmbedder.from_settings(pretrained.encoder, pretrained.tokenizer, settings),
                   context, batch_size)

    def embed_contexts(self, contexts: Sequence[Sequence[str]]) -> np.ndarray:
        return self.embedder.embed([CONTEXT_SEPARATOR.join(c) for c in contexts], batch_size=self.batch_size)

    def embed_responses(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed(list(texts), batch_size=self.batch_size)


def load_context_response_model(path: str):
    """The auxiliary context-response model of `path` (trained with --method=context_response)."""
    from tfdialemb.inference.context_response import ContextResponseEncoder  # pylint: disable=import-outside-toplevel

    return ContextResponseEncoder.from_model_dir(path)


class UtteranceSimilarity:
    """The context-response matrices of many dialogues from one source, embedded in batches.

    Embeddings are kept, keyed by their text, until `clear()`: crop and shuffle of one batch, and
    shuffle's candidate orders (which share most contexts), embed each text once.
    """

    def __init__(self, source, measure: str = COSINE):
        if measure not in MEASURES:
            raise ValueError(f"similarity measure must be one of {MEASURES}, got {measure!r}")
        if int(source.context) < 1:
            raise ValueError(f"{type(source).__name__}: a context window holds at least one utterance, "
                             f"got {source.context}")
        self.source = source
        self.measure = measure
        self._contexts: Dict[Hashable, np.ndarray] = {}
        self._responses: Dict[Hashable, np.ndarray] = {}

    @property
    def context(self) -> int:
        return int(self.source.context)

    def clear(self) -> None:
        self._contexts.clear()
        self._responses.clear()

    def windows(self, texts: Sequence[str]) -> List[tuple]:
        """The context ending at each utterance but the last, as make_batch_from_dia cuts them."""
        return [tuple(texts[max(0, i - self.context + 1):i + 1]) for i in range(len(texts) - 1)]

    def prepare(self, dialogues: Iterable[Sequence[str]]) -> None:
        """Embeds, in one call per kind, every context and response of `dialogues` not yet kept."""
        dialogues = [list(texts) for texts in dialogues]
        self._embed(self._contexts, self.source.embed_contexts,
                    [window for texts in dialogues for window in self.windows(texts)], "embed_contexts")
        self._embed(self._responses, self.source.embed_responses,
                    [text for texts in dialogues for text in texts[1:]], "embed_responses")

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """S[a, b] = sim(context ending at utterance a, utterance b + 1), [L − 1, L − 1]; every
        text must have been `prepare`d."""
        texts = list(texts)
        if len(texts) < 2:
            return np.zeros((0, 0), np.float32)
        contexts = np.stack([self._contexts[window] for window in self.windows(texts)])
        responses = np.stack([self._responses[text] for text in texts[1:]])
        return cosine_matrix(contexts, responses) if self.measure == COSINE else contexts @ responses.T

    def matrices(self, dialogues: Sequence[Sequence[str]]) -> List[np.ndarray]:
        """`matrix` of each dialogue (its utterance texts), embedded together."""
        self.prepare(dialogues)
        return [self.matrix(texts) for texts in dialogues]

    def _embed(self, kept: Dict[Hashable, np.ndarray], embed: Callable, keys: List[Hashable], what: str) -> None:
        missing = list(dict.fromkeys(key for key in keys if key not in kept))
        if not missing:
            return
        rows = np.asarray(embed([list(key) if isinstance(key, tuple) else key for key in missing]))
        if rows.ndim != 2 or rows.shape[0] != len(missing):
            raise ValueError(f"{type(self.source).__name__}.{what} gave shape {rows.shape} for "
                             f"{len(missing)} inputs; expected one row each")
        kept.update(zip(missing, rows))
