"""The context-response evaluation: pairs drawn from a dialogue file as training draws them, and
in-batch accuracy over consecutive batches, on hand-made cases."""
import numpy as np

from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.eval.context_response import context_response_pairs, in_batch_accuracy


def test_pairs_are_one_per_dialogue_in_the_released_range(tmp_path):
    texts = [f"utterance {i}" for i in range(6)]
    path = str(tmp_path / "d.jsonl")
    write_dialogues([Dialogue("long", tuple(Turn("ab"[i % 2], t) for i, t in enumerate(texts))),
                     Dialogue("two", (Turn("a", "hi"), Turn("b", "hello"))),
                     Dialogue("one", (Turn("a", "alone"),)),
                     Dialogue("merged", (Turn("a", "x"), Turn("a", "y"), Turn("b", "z")))], path)
    positions = set()
    for seed in range(30):
        contexts, responses = context_response_pairs(path, seed=seed)
        assert len(contexts) == 3  # the one-utterance dialogue has no pair
        k = texts.index(responses[0])
        assert 1 <= k <= 4 and contexts[0] == texts[:k]
        positions.add(k)
        assert (contexts[1], responses[1]) == (["hi"], "hello")
        assert (contexts[2], responses[2]) == (["x y"], "z")  # a speaker's turns merged first
    assert positions == {1, 2, 3, 4}
    assert context_response_pairs(path, seed=3) == context_response_pairs(path, seed=3)
    assert context_response_pairs(path, merge_turns=False)[0][2] == ["x"]


def test_in_batch_accuracy_by_hand():
    # Batches: pairs 0-6, then pair 7 alone, which is left out of accuracy@1 and @5.
    contexts = np.eye(8, dtype=np.float32)
    responses = np.eye(8, dtype=np.float32)
    # Context 1 scores its own response 0.6, the rest 0; context 2 scores response 1 0.8, its own 1.
    responses[1] = [0, 0.6, 0.8, 0, 0, 0, 0, 0]
    assert in_batch_accuracy(contexts, responses, batch_size=7) == {"accuracy@1": 1.0, "accuracy@5": 1.0}
    # Now context 2 scores its own response 0.5 < 0.8: a miss at 1, a hit at 5.
    responses[2] = [0, 0, 0.5, 0, 0, 0, 0, 0.866]
    report = in_batch_accuracy(contexts, responses, batch_size=7)
    assert report["accuracy@1"] == 6 / 7 and report["accuracy@5"] == 1.0
    assert np.isnan(in_batch_accuracy(contexts[:3], responses[:3], batch_size=7)["accuracy@5"])
