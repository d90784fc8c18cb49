"""Where the within-dialogue utterance similarity of crop and shuffle comes from (thesis appendix
1.1; released mylib/augmentations/prune.py `get_similarities`, mylib/modeling/pairwise/
simplified_pairwise.py).

A source is any object with `context` (utterances per context window), `embed_contexts(contexts)`
(each context its utterances, oldest first) and `embed_responses(texts)`, both returning rows
[N, d]. A source whose contexts and responses are functions of their utterances' own vectors also
says so (`per_utterance`) and gives `embed_utterances(texts)`, `contexts_from_utterances(slots)` and
`responses_from_utterances(vectors)`: each distinct utterance is then encoded once, however many
contexts (of shuffle's candidate orders) it appears in. Two are provided, each a trained model
opened by the caller's loader (`operations.load_similarity`):
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

How the context-response model is read (`--context_response_reading`, `READING`): `paper`, each
context the last `context` utterances up to utterance a (the thesis' appendix 1.1; prune.py
`make_batch_from_dia` from commit 20c5d49 on), utterances i < j 1 − S[i, j − 1] apart; or
`released`, as the released code read its trained `Pairwise` model when it built the a-h, a-l-m
and a-h-m sets (before commit 5ef94c7): prune.py:96 gave each context the whole dialogue up to a,
and context_encoders.py:48-57 `ContextEncoderConcat.pad_missing_utterances` padded the
concatenated utterance embeddings to `context` slots with `F.pad`, whose negative pad, once there
were more, cuts the vector to the dialogue's first `context` utterances; the distance was
1 / (S + 1e-5) (prune.py:78), and the model had projection 128 (config.py:6,
`PairwiseModelConfig`).
"""
from typing import Callable, Dict, Hashable, Iterable, List, Sequence

import numpy as np

from tfdialemb.core.options import PAPER, RELEASED, Switch
from tfdialemb.core.similarity import cosine_matrix

COSINE, DOT = "cosine", "dot"
MEASURES = (COSINE, DOT)
RELEASED_PROJECTION_SIZE = 128
"""mylib/modeling/pairwise/config.py `PairwiseModelConfig.projection_size` before commit 5ef94c7."""
READING = Switch("context_response_reading", PAPER, "How crop and shuffle read the context-response model "
                 "(--context_response_model; not the -dse sets' sentence encoder).",
                 paper="thesis appendix 1.1: each context the last 3 utterances up to utterance a, utterances "
                       "i < j 1 - S[i, j-1] apart (voorhs/dialogue-augmentation prune.py from commit 5ef94c7 on)",
                 released="the version that built a-h, a-l-m and a-h-m (before commit 5ef94c7): prune.py "
                          "make_batch_from_dia's whole history cut by context_encoders.py "
                          "pad_missing_utterances' negative padding to the dialogue's first 3 utterances, "
                          "distance 1 / (S + 1e-5) (prune.py:78), a model of projection 128 "
                          "(PairwiseModelConfig; refused otherwise)")
CONTEXT_SEPARATOR = "\n"
"""Between the utterances of a context given to a sentence encoder (SimplifiedPairwise.forward)."""


class SentenceEncoderSimilarity:
    """A sentence encoder as a similarity source: a context is its utterances joined by newlines.

    With one utterance per context, a context's embedding is its utterance's, the same as that
    utterance's as a response: the source is then `per_utterance`, and each text is embedded once."""

    def __init__(self, embedder, context: int = 1, batch_size: int = 64):
        """`embedder`: anything with `embed(texts, batch_size=...)` (`tfdialemb.inference.embedder.SentenceEmbedder`)."""
        if context < 1:
            raise ValueError(f"a context window holds at least one utterance, got {context}")
        self.embedder = embedder
        self.context = context
        self.batch_size = batch_size

    @property
    def per_utterance(self) -> bool:
        return self.context == 1

    def embed_contexts(self, contexts: Sequence[Sequence[str]]) -> np.ndarray:
        return self.embedder.embed([CONTEXT_SEPARATOR.join(c) for c in contexts], batch_size=self.batch_size)

    def embed_responses(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed(list(texts), batch_size=self.batch_size)

    def embed_utterances(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_responses(texts)

    def contexts_from_utterances(self, slots: np.ndarray) -> np.ndarray:
        """A context of one utterance is embedded as that utterance: its only slot."""
        return slots[:, 0]

    def responses_from_utterances(self, vectors: np.ndarray) -> np.ndarray:
        return vectors


class UtteranceSimilarity:
    """The context-response matrices of many dialogues from one source, embedded in batches.

    Embeddings are kept, keyed by their text, until `clear()`: crop and shuffle of one batch, and
    shuffle's candidate orders (which share most contexts), embed each text once. A
    `per_utterance` source (the context-response model, which embeds each utterance of a context
    on its own; a sentence encoder at one utterance per context) embeds each distinct utterance
    once, and makes every context and every response from those vectors
    (`contexts_from_utterances` of the slots [N, context, d], oldest first, empty slots zero;
    `responses_from_utterances`): the contexts of a reordered dialogue cost no encoder pass.
    """

    def __init__(self, source, measure: str = COSINE, reading: str = PAPER):
        """`reading`: the context windows of `READING` (the distance `stages` reads from it)."""
        if measure not in MEASURES:
            raise ValueError(f"similarity measure must be one of {MEASURES}, got {measure!r}")
        if reading not in READING.choices:
            raise ValueError(f"reading must be one of {READING.choices}, got {reading!r}")
        self.reading = reading
        if int(source.context) < 1:
            raise ValueError(f"{type(source).__name__}: a context window holds at least one utterance, "
                             f"got {source.context}")
        self.source = source
        self.measure = measure
        self.per_utterance = bool(getattr(source, "per_utterance", False))
        self._utterances: Dict[Hashable, np.ndarray] = {}
        self._contexts: Dict[Hashable, np.ndarray] = {}
        self._responses: Dict[Hashable, np.ndarray] = {}

    @property
    def context(self) -> int:
        return int(self.source.context)

    def clear(self) -> None:
        self._utterances.clear()
        self._contexts.clear()
        self._responses.clear()

    def windows(self, texts: Sequence[str]) -> List[tuple]:
        """The context ending at each utterance but the last, as make_batch_from_dia cuts them:
        its last `context` utterances, or (`released` reading) the dialogue's first `context`
        utterances up to it, what the negative padding of the whole history kept."""
        if self.reading == RELEASED:
            return [tuple(texts[:min(i + 1, self.context)]) for i in range(len(texts) - 1)]
        return [tuple(texts[max(0, i - self.context + 1):i + 1]) for i in range(len(texts) - 1)]

    def prepare(self, dialogues: Iterable[Sequence[str]]) -> None:
        """Embeds, in one call per kind, every context and response of `dialogues` not yet kept."""
        dialogues = [list(texts) for texts in dialogues]
        windows = [window for texts in dialogues for window in self.windows(texts)]
        responses = [text for texts in dialogues for text in texts[1:]]
        if not self.per_utterance:
            self._embed(self._contexts, self.source.embed_contexts, windows, "embed_contexts")
            self._embed(self._responses, self.source.embed_responses, responses, "embed_responses")
            return
        self._embed(self._utterances, self.source.embed_utterances,
                    [text for texts in dialogues if len(texts) > 1 for text in texts], "embed_utterances")
        self._embed(self._contexts, lambda found: self.source.contexts_from_utterances(self._slots(found)),
                    windows, "contexts_from_utterances")
        self._embed(self._responses,
                    lambda found: self.source.responses_from_utterances(
                        np.stack([self._utterances[text] for text in found])),
                    responses, "responses_from_utterances")

    def matrices(self, dialogues: Sequence[Sequence[str]]) -> List[np.ndarray]:
        """S of each dialogue (its utterance texts), embedded together: S[a, b] = sim(context
        ending at utterance a, utterance b + 1), [L − 1, L − 1]."""
        dialogues = [list(texts) for texts in dialogues]
        self.prepare(dialogues)
        return [self.order_matrices([texts])[0] for texts in dialogues]

    def order_matrices(self, orders: Sequence[Sequence[str]]) -> List[np.ndarray]:
        """S of each of `orders` (orders of one dialogue's utterances, every text `prepare`d),
        read from one product of their distinct contexts and responses."""
        orders = [list(texts) for texts in orders]
        windows = [self.windows(texts) for texts in orders]
        contexts = list(dict.fromkeys(window for found in windows for window in found))
        responses = list(dict.fromkeys(text for texts in orders for text in texts[1:]))
        if not contexts:
            return [np.zeros((0, 0), np.float32) for _ in orders]
        left = np.stack([self._contexts[window] for window in contexts])
        right = np.stack([self._responses[text] for text in responses])
        table = cosine_matrix(left, right) if self.measure == COSINE else left @ right.T
        row = {window: i for i, window in enumerate(contexts)}
        column = {text: j for j, text in enumerate(responses)}
        return [table[np.ix_(np.array([row[w] for w in found], np.intp),
                             np.array([column[t] for t in texts[1:]], np.intp))]
                for found, texts in zip(windows, orders)]

    def _slots(self, windows: Sequence[Sequence[str]]) -> np.ndarray:
        """The utterance vectors of each window [N, context, d], oldest first, empty slots zero."""
        width = next(iter(self._utterances.values())).shape[-1]
        slots = np.zeros([len(windows), self.context, width], np.float32)
        for i, window in enumerate(windows):
            for j, text in enumerate(window):
                slots[i, j] = self._utterances[text]
        return slots

    def _embed(self, kept: Dict[Hashable, np.ndarray], embed: Callable, keys: List[Hashable], what: str) -> None:
        missing = list(dict.fromkeys(key for key in keys if key not in kept))
        if not missing:
            return
        rows = np.asarray(embed([list(key) if isinstance(key, tuple) else key for key in missing]))
        if rows.ndim != 2 or rows.shape[0] != len(missing):
            raise ValueError(f"{type(self.source).__name__}.{what} gave shape {rows.shape} for "
                             f"{len(missing)} inputs; expected one row each")
        kept.update(zip(missing, rows))
