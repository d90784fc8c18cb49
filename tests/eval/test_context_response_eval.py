"""The context-response evaluation: pairs drawn from a dialogue file as training draws them, and
in-batch accuracy over consecutive batches, on hand-made cases."""
import numpy as np
import pytest

from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.eval.context_response import context_response_pairs, evaluate_context_response, in_batch_accuracy


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



def test_ties_and_nan_scores_are_misses(tmp_path):
    contexts = np.eye(7, dtype=np.float32)
    responses = np.eye(7, dtype=np.float32)
    responses[:, 0] = 1.0   # context 0 scores every response 1: its own ties with six others
    responses[3] = np.nan   # response 3 scores NaN for every context: a miss for context 3, above the rest
    report = in_batch_accuracy(contexts, responses, batch_size=7)
    # Hits at 1: contexts 1, 2, 4, 5, 6 lose to nothing but the NaN of response 3: none at 1.
    # At 5: context 0 has 6 rivals ahead (a miss); contexts 1, 2, 4, 5, 6 have one (a hit); 3 is NaN (a miss).
    assert report == {"accuracy@1": 0.0, "accuracy@5": 5 / 7}


@pytest.mark.parametrize("dialogues, batch_size, needed", [(1, 128, 5), (2, 128, 5), (40, 4, 5), (6, 5, 5)])
def test_a_set_with_no_batch_above_k_is_refused(tmp_path, dialogues, batch_size, needed):
    """One or two dialogues give one or two pairs: accuracy@5 ranks among more than 5 or is undefined."""
    path = str(tmp_path / "d.jsonl")
    write_dialogues([Dialogue(f"d{i}", (Turn("a", f"hi {i}"), Turn("b", f"hello {i}"))) for i in range(dialogues)], path)
    with pytest.raises(ValueError, match=rf"d\.jsonl: {dialogues} context-response pair\(s\) .* in batches of "
                                         rf"{batch_size} leave no batch of more than {needed} pairs"):
        evaluate_context_response(path, encoder=None, batch_size=batch_size)
