"""Building a response-selection set: one block per dialogue in Ubuntu V1's layout, read back by
the evaluation's reader."""
from data_prep.build_selection_set import build_selection_set
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.eval.response_selection import read_blocks

LENGTHS = {"one": 1, "short": 3, "long": 6}  # turns "<dialogue> <t>", unique to each dialogue


def test_one_block_per_dialogue_true_turn_first_negatives_from_other_dialogues(tmp_path):
    source = str(tmp_path / "dialogues.jsonl")
    write_dialogues([Dialogue(name, tuple(Turn("ab"[t % 2], f"{name}\t{t}") for t in range(n)))
                     for name, n in LENGTHS.items()], source)
    output = str(tmp_path / "selection.txt")
    counts = build_selection_set(source, output, candidates=3, seed=1)
    assert counts == {"dialogues": 3, "blocks": 2, "lines": 6}
    blocks = read_blocks(output, block_size=3)
    for block, name in zip(blocks, ("short", "long")):
        k = len(block.context)
        assert block.context == tuple(f"{name} {t}" for t in range(k))
        assert block.candidates[0] == f"{name} {k}" and block.labels == (1, 0, 0)
        assert all(not c.startswith(name) for c in block.candidates[1:])
    assert build_selection_set(source, str(tmp_path / "again.txt"), candidates=3, seed=1) == counts
    assert (tmp_path / "again.txt").read_text() == (tmp_path / "selection.txt").read_text()


def test_no_negative_repeats_the_positive_or_another_negative(tmp_path):
    """Every dialogue answers "ok" and thanks alike: an unchecked draw would give blocks whose
    negatives copy the positive (a tie the ranking cannot break) or each other."""
    source = str(tmp_path / "chit_chat.jsonl")
    write_dialogues([Dialogue(f"d{i}", (Turn("a", f"question {i}"), Turn("b", "ok"), Turn("a", "thanks"),
                                        Turn("b", f"bye {i % 3}")))
                     for i in range(30)], source)
    output = str(tmp_path / "selection.txt")
    assert build_selection_set(source, output, candidates=4, seed=0)["blocks"] == 30
    blocks = read_blocks(output, block_size=4)
    assert len(blocks) == 30
    for block in blocks:
        assert len(set(block.candidates)) == 4, block.candidates
    assert sum("ok" in block.candidates for block in blocks) > 10  # "ok" is still drawn, never twice
