"""Dialogue embedding = mean of its utterances' sentence embeddings, each text embedded once."""
import numpy as np
import pytest

from tfdialemb.baselines.utterance_average import average_utterance_embeddings
from tfdialemb.dialogue import Dialogue, Turn

VECTORS = {"hi": [1.0, 0.0, 2.0], "book a taxi": [3.0, 1.0, 0.0], "sure": [0.0, 4.0, 1.0]}


class FakeSentences:
    def __init__(self, vectors=VECTORS):
        self.vectors = vectors
        self.calls = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.array([self.vectors[text] for text in texts])


def _dialogue(i, *texts):
    return Dialogue(f"d{i}", tuple(Turn("ab"[t % 2], text) for t, text in enumerate(texts)))


def test_average_of_utterance_embeddings_by_hand():
    embed = FakeSentences()
    dialogues = [_dialogue(0, "hi", "book a taxi", "sure"), _dialogue(1, "hi", "hi", "sure")]
    vectors = average_utterance_embeddings(dialogues, embed)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, [[4 / 3, 5 / 3, 1.0], [2 / 3, 4 / 3, 5 / 3]], rtol=1e-6)
    assert embed.calls == [["hi", "book a taxi", "sure"]]


@pytest.mark.parametrize("dialogues, embed, message", [
    ([], FakeSentences(), "no dialogues to embed"),
    ([_dialogue(0, "hi")], lambda texts: np.ones(3), r"returned shape \(3,\) for 1 texts"),
])
def test_bad_input_is_refused(dialogues, embed, message):
    with pytest.raises(ValueError, match=message):
        average_utterance_embeddings(dialogues, embed)
