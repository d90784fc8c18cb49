"""Dialogue embeddings as the mean of their utterances' sentence embeddings (dial2vec's baselines).

dial2vec (dial2vec paper Sec. 4.2) embeds a dialogue with a sentence encoder (SimCSE, DialogueCSE)
by averaging the embeddings of its utterances. Each distinct utterance text is embedded once.
"""
from typing import Sequence

import numpy as np

from tfdialemb.dialogue import Dialogue
from tfdialemb.eval.inputs import Embed, embed_distinct


def average_utterance_embeddings(dialogues: Sequence[Dialogue],
                                 embed_sentences: Embed) -> np.ndarray:
    """[N, H] float32: row i is the mean of the embeddings of dialogue i's turns' texts."""
    if not dialogues:
        raise ValueError("no dialogues to embed")
    vectors = embed_distinct(embed_sentences, (turn.text for d in dialogues for turn in d.turns))
    means = [np.mean([vectors[turn.text] for turn in dialogue.turns], axis=0, dtype=np.float64)
             for dialogue in dialogues]
    return np.stack(means).astype(np.float32)
