"""A similarity source whose answers the tests know: an utterance "hotel 3" is about its first
word, a context about its last utterance's, and two things are similar (cosine 1) exactly when
they share a topic, else orthogonal (cosine 0). Stages are then the runs of one topic."""
import numpy as np

from tfdialemb.augment.presets import Preset
from tfdialemb.dialogue import Dialogue, Turn

TOPICS = ("hotel", "taxi", "food", "train", "bank", "music")


def topic(text):
    return text.split()[0]


def one_hot(text):
    row = np.zeros(len(TOPICS), np.float32)
    row[TOPICS.index(topic(text))] = 1.0
    return row


class TopicSource:
    def __init__(self, context=3):
        self.context = context
        self.calls = []

    def embed_contexts(self, contexts):
        self.calls.append(("contexts", [tuple(c) for c in contexts]))
        return np.stack([one_hot(c[-1]) for c in contexts])

    def embed_responses(self, texts):
        self.calls.append(("responses", list(texts)))
        return np.stack([one_hot(t) for t in texts])


class TopicUtterances(TopicSource):
    """The same similarities from one-hot utterance vectors (`per_utterance`): a context is the
    vector in its last filled slot, a response its utterance's vector."""

    per_utterance = True

    def embed_utterances(self, texts):
        self.calls.append(("utterances", list(texts)))
        return np.stack([one_hot(t) for t in texts])

    def contexts_from_utterances(self, slots):
        self.calls.append(("slots", slots.copy()))
        filled = (np.abs(slots).sum(axis=-1) > 0).sum(axis=1)
        return slots[np.arange(len(slots)), filled - 1]

    def responses_from_utterances(self, vectors):
        return vectors


def topic_dialogue(dialogue_id, runs, labels=None):
    """Runs of (topic, count); texts "topic k" with k the utterance's index, speakers alternating."""
    topics = [name for name, count in runs for _ in range(count)]
    turns = [Turn("user" if k % 2 == 0 else "system", f"{name} {k}") for k, name in enumerate(topics)]
    return Dialogue(dialogue_id, tuple(turns), dict(labels or {}))


def texts(dialogue):
    return [turn.text for turn in dialogue.turns]


TEST_SET = Preset("test-stages", ("crop", "shuffle"), False, "context_response")
"""A set of crop and shuffle only, scored by the context-response model (the topic source)."""
