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
    blocks = read_blocks(output)
    for block, name in zip(blocks, ("short", "long")):
        k = len(block.context)
        assert block.context == tuple(f"{name} {t}" for t in range(k))
        assert block.candidates[0] == f"{name} {k}" and block.labels == (1, 0, 0)
        assert all(not c.startswith(name) for c in block.candidates[1:])
    assert build_selection_set(source, str(tmp_path / "again.txt"), candidates=3, seed=1) == counts
    assert (tmp_path / "again.txt").read_text() == (tmp_path / "selection.txt").read_text()
