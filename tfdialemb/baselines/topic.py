"""Bag-of-words dialogue embeddings that need no encoder: TF-IDF and LDA (dial2vec's LDA baseline).

A dialogue's document is its turns' texts joined; its words are BERT's basic words lower-cased
(`tfdialemb.baselines.glove.tokenize`) without punctuation, so Chinese text splits into
characters. Each embedder is fitted once, on the evaluation dialogues or on a separate fit set,
and then embeds any dialogues with that vocabulary; `embed_views` plugs it into
`evaluate_dialogue_embeddings`.
"""
from typing import Dict, List, Optional, Sequence

import numpy as np

from tfdialemb.baselines.glove import tokenize
from tfdialemb.dialogue import Dialogue


def dialogue_words(dialogues: Sequence[Dialogue]) -> List[List[str]]:
    """Per dialogue, the lower-cased basic words of all its turns in order, punctuation dropped."""
    texts = [" ".join(turn.text for turn in dialogue.turns) for dialogue in dialogues]
    return [[word for word in words if any(c.isalnum() for c in word)] for words in tokenize(texts)]


def _given_words(words: List[str]) -> List[str]:
    """scikit-learn analyzer for documents that are already word lists."""
    return words


class _BagOfWordsEmbedder:
    """A scikit-learn transformer over word lists, fitted on `fit_dialogues`; dense float32 out."""

    view = ""

    def __init__(self, pipeline, fit_dialogues: Sequence[Dialogue]):
        if not fit_dialogues:
            raise ValueError(f"{type(self).__name__} needs at least one dialogue to fit on")
        try:
            self.pipeline = pipeline.fit(dialogue_words(fit_dialogues))
        except ValueError as e:
            raise ValueError(
                f"{type(self).__name__}: cannot fit on the given dialogues: {e}") from None

    def embed(self, dialogues: Sequence[Dialogue]) -> np.ndarray:
        """[N, d] float32, one row per dialogue."""
        if not dialogues:
            raise ValueError("no dialogues to embed")
        features = self.pipeline.transform(dialogue_words(dialogues))
        return np.asarray(features.toarray() if hasattr(features, "toarray") else features,
                          np.float32)

    def embed_views(self, dialogues: Sequence[Dialogue]) -> Dict[str, np.ndarray]:
        return {self.view: self.embed(dialogues)}


class TfidfDialogueEmbedder(_BagOfWordsEmbedder):
    """TF-IDF vectors (scikit-learn's smoothed idf, L2-normalised rows) over the fit vocabulary.

    d is the vocabulary size, or `max_features` (the most frequent words) when given: embeddings
    are dense, so large corpora want a cap.
    """

    view = "tfidf"

    def __init__(self, fit_dialogues: Sequence[Dialogue], max_features: Optional[int] = None,
                 min_df: int = 1):
        from sklearn.feature_extraction.text import TfidfVectorizer  # pylint: disable=import-outside-toplevel

        super().__init__(TfidfVectorizer(analyzer=_given_words, max_features=max_features,
                                         min_df=min_df), fit_dialogues)


class LdaDialogueEmbedder(_BagOfWordsEmbedder):
    """Topic distributions [N, n_components] of a seeded batch LDA fitted on word counts.

    dial2vec's LDA baseline, which "assign[s] each dialogue a topic" (Sec. 4.3, `assign`); the number
    of topics is the caller's (e.g. the number of domains).
    """

    view = "lda"

    def __init__(self, fit_dialogues: Sequence[Dialogue], n_components: int, seed: int = 0,
                 max_iter: int = 10, min_df: int = 1):
        from sklearn.decomposition import LatentDirichletAllocation  # pylint: disable=import-outside-toplevel
        from sklearn.feature_extraction.text import CountVectorizer  # pylint: disable=import-outside-toplevel
        from sklearn.pipeline import make_pipeline  # pylint: disable=import-outside-toplevel

        if isinstance(n_components, bool) or not isinstance(n_components, int) or n_components < 1:
            raise ValueError(f"n_components must be a positive int, got {n_components!r}")
        lda = LatentDirichletAllocation(n_components=n_components, learning_method="batch",
                                        max_iter=max_iter, random_state=seed)
        super().__init__(make_pipeline(CountVectorizer(analyzer=_given_words, min_df=min_df), lda),
                         fit_dialogues)

    def assign(self, dialogues: Sequence[Dialogue]) -> np.ndarray:
        """[N] int: each dialogue's most probable topic."""
        return self.embed(dialogues).argmax(axis=1)
