"""The `augcl` builder on hand-made augmented files: an original and its following views become
one example of turns, roles from the original's speakers; a plain file gives originals alone."""
import numpy as np
import pytest

from tfdialemb.data.examples import make_builder
from tfdialemb.dialogue import Dialogue, Turn


def _original(id_, *turns):
    return Dialogue(id_, tuple(Turn(s, t) for s, t in turns), {"source_id": id_, "augmentations": [], "domain": "x"})


def _view(source, op, *turns, k=None):
    id_ = f"{source}/{op}" + (f"/{k}" if k is not None else "")
    return Dialogue(id_, tuple(Turn(s, t) for s, t in turns), {"source_id": source, "augmentations": [op]})


D0 = _original("d0", ("user", "hello world"), ("agent", "good morning"), ("user", "how are you"))
D0_INSERT = _view("d0", "insert", ("user", "hello the world"), ("agent", "good morning"), ("user", "how are you"))
# Shuffled to open with the agent: its turns keep the agent's role 1.
D0_SHUFFLE = _view("d0", "shuffle", ("agent", "good morning"), ("user", "how are you"), ("user", "hello world"), k=0)
D1 = _original("d1", ("b", "book taxi"), ("a", "please"))
D2 = _original("d2", ("c", "thanks"))


def _examples(dialogues, **params):
    builder = make_builder("augcl", params)
    rng = np.random.default_rng(0)
    out = []
    for index, dialogue in enumerate(dialogues):
        out.extend(builder.examples(dialogue, index, rng, None))
    return out + list(builder.finish(rng, None))


def test_consecutive_lines_of_one_source_form_one_example():
    examples = _examples([D0, D0_INSERT, D0_SHUFFLE, D1, D2])
    assert examples == [
        {"dialogues": [[(0, "hello world"), (1, "good morning"), (0, "how are you")],
                       [(0, "hello the world"), (1, "good morning"), (0, "how are you")],
                       [(1, "good morning"), (0, "how are you"), (0, "hello world")]]},
        {"dialogues": [[(0, "book taxi"), (1, "please")]]},
    ]  # d2: one turn, no view, so no pair can be drawn from it


def test_a_plain_file_gives_each_dialogue_alone_and_min_views_drops_them():
    plain = [Dialogue("p0", D0.turns), Dialogue("p1", D1.turns)]
    assert [len(e["dialogues"]) for e in _examples(plain)] == [1, 1]
    assert _examples(plain, min_views=1) == []
    assert len(_examples([D0, D0_INSERT, D1], min_views=1)) == 1


def test_third_speakers_fold_into_the_last_role():
    three = _original("t", ("a", "hello"), ("b", "fine"), ("c", "thanks"))
    assert _examples([three])[0]["dialogues"][0] == [(0, "hello"), (1, "fine"), (1, "thanks")]
    assert _examples([three], max_roles=3)[0]["dialogues"][0] == [(0, "hello"), (1, "fine"), (2, "thanks")]


def test_misplaced_views_and_foreign_speakers_fail_clearly():
    with pytest.raises(ValueError, match="'d0/insert' is a view of 'd0' but does not follow it"):
        _examples([D1, D0_INSERT])
    stranger = _view("d0", "crop", ("guest", "hello"), ("user", "fine"))
    with pytest.raises(ValueError, match=r"view 'd0/crop' has speakers \['guest'\] that its original 'd0' lacks"):
        _examples([D0, stranger])
