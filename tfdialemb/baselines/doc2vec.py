"""dial2vec's Doc2Vec baseline (paper Sec. 4.3, Table 2): each dialogue is one document embedded
with gensim's Doc2Vec (Le and Mikolov, 2014).

Neither the paper nor the released code states Doc2Vec's settings: AlibabaResearch/DAMO-ConvAI
dial2vec has no Doc2Vec code, and its requirements.txt pins gensim==4.2.0. So the settings are
that version's defaults (`SETTINGS`, passed explicitly so another gensim version trains the same
model). The words are those of the TF-IDF and LDA baselines (`tfdialemb.baselines.topic`).

Training runs on one worker thread with a fixed seed, which makes it deterministic. The fit
dialogues get the paragraph vectors learned during training. Any other dialogue gets an inferred
vector (Le and Mikolov's inference step: word and output weights frozen, only the new vector
trained), computed as gensim's `Doc2Vec.infer_vector` computes it, with one change. gensim seeds
the start vector with Python's `hash`, which is randomised per process. Here the start vector and
the random stream are seeded from the seed and the dialogue's words, so a dialogue's vector is the
same in every process and in any order.
"""
import zlib
from typing import List, Sequence, Tuple

import numpy as np

from tfdialemb.baselines.topic import dialogue_words
from tfdialemb.dialogue import Dialogue

SETTINGS = {"dm": 1, "vector_size": 100, "window": 5, "min_count": 5, "sample": 1e-3, "negative": 5,
            "hs": 0, "alpha": 0.025, "min_alpha": 0.0001, "epochs": 10}
"""gensim 4.2.0's Doc2Vec defaults: PV-DM with a context mean, negative sampling."""


def _gensim():
    """gensim's Doc2Vec module; a clear error when gensim is not installed."""
    try:
        from gensim.models import doc2vec  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ValueError("--embedding=doc2vec needs the gensim package: pip install gensim, or "
                         "pip install 'tfdialemb[doc2vec]'") from None
    return doc2vec


class Doc2VecDialogueEmbedder:
    """gensim Doc2Vec trained on `fit_dialogues` (one tagged document each, in order)."""

    view = "doc2vec"

    def __init__(self, fit_dialogues: Sequence[Dialogue], seed: int = 0, **overrides):
        unknown = sorted(set(overrides) - set(SETTINGS))
        if unknown:
            raise ValueError(f"unknown Doc2Vec settings {unknown}; expected some of {sorted(SETTINGS)}")
        if not fit_dialogues:
            raise ValueError("Doc2Vec needs at least one dialogue to fit on")
        doc2vec = _gensim()
        self.seed = seed
        self.settings = {**SETTINGS, **overrides}
        documents = [doc2vec.TaggedDocument(words, [i])
                     for i, words in enumerate(dialogue_words(fit_dialogues))]
        try:
            self.model = doc2vec.Doc2Vec(documents, seed=seed, workers=1, **self.settings)
        except RuntimeError:  # gensim's "you must first build vocabulary"
            raise ValueError(f"Doc2Vec: no word occurs min_count={self.settings['min_count']} times "
                             f"in the {len(documents)} fit dialogues") from None

    def fitted(self) -> np.ndarray:
        """[N_fit, d] float32: the paragraph vectors learned for the fit dialogues, in order."""
        return np.asarray(self.model.dv.vectors, np.float32).copy()

    def inference_start(self, words: List[str]) -> Tuple[np.ndarray, np.random.RandomState]:
        """The start vector (gensim's uniform ±0.5/d) and random stream of inferring `words`."""
        key = zlib.crc32(" ".join(words).encode("utf-8"))
        rng = np.random.default_rng([self.seed, key])
        size = self.model.dv.vector_size
        start = ((rng.random(size) - 0.5) / size).astype(np.float32)
        return start, np.random.RandomState(rng.integers(2 ** 31))

    def infer(self, words: List[str]) -> np.ndarray:
        """`Doc2Vec.infer_vector(words)` for PV-DM (gensim 4), seeded by `inference_start`."""
        from gensim.models.doc2vec_inner import train_document_dm  # pylint: disable=import-outside-toplevel

        model = self.model
        start, model.random = self.inference_start(words)
        vectors = start.reshape(1, -1)
        work = np.zeros(model.layer1_size, np.float32)
        neu1 = np.zeros(model.layer1_size, np.float32)
        alpha, epochs = model.alpha, model.epochs
        alpha_delta = (model.alpha - model.min_alpha) / max(epochs - 1, 1)
        for _ in range(epochs):
            train_document_dm(model, words, [0], alpha, work, neu1, learn_words=False,
                              learn_hidden=False, doctag_vectors=vectors,
                              doctags_lockf=np.ones(1, np.float32))
            alpha -= alpha_delta
        return vectors[0]

    def embed(self, dialogues: Sequence[Dialogue]) -> np.ndarray:
        """[N, d] float32: inferred vectors of `dialogues`, one row per dialogue."""
        if not dialogues:
            raise ValueError("no dialogues to embed")
        return np.stack([self.infer(words) for words in dialogue_words(dialogues)]).astype(np.float32)
