"""Building a response-selection set: one block per dialogue in Ubuntu V1's layout, read back by
the evaluation's reader."""
import pytest

from data_prep.build_selection_set import build_selection_set
from tfdialemb.dialogue import Dialogue, DialogueFormatError, Turn, read_dialogues, write_dialogues
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


def test_a_jsonl_set_names_its_blocks_so_it_reads_without_a_block_size(tmp_path):
    """20 candidates per block: the text layout needs --block_size=20 (the default 10 is refused), the
    JSONL layout holds the same blocks in labels.context_id, speakers kept, and reads without one."""
    source = str(tmp_path / "dialogues.jsonl")
    write_dialogues([Dialogue(f"d{i}", tuple(Turn("uv"[t % 2], f"dialogue {i} turn {t}") for t in range(4)))
                     for i in range(12)], source)
    text, jsonl = str(tmp_path / "selection.txt"), str(tmp_path / "selection.jsonl")
    assert build_selection_set(source, text, candidates=20, seed=2) == build_selection_set(
        source, jsonl, candidates=20, seed=2) == {"dialogues": 12, "blocks": 12, "lines": 240}
    with pytest.raises(DialogueFormatError, match="past --block_size=10 lines"):
        read_blocks(text)
    from_text, from_jsonl = read_blocks(text, block_size=20), read_blocks(jsonl)
    assert from_jsonl == from_text and len(from_jsonl) == 12
    assert all(len(block.candidates) == 20 and block.labels == (1,) + (0,) * 19 for block in from_jsonl)
    first = read_dialogues(jsonl).__next__()
    k = len(first.turns) - 1  # the drawn position: the context is turns 0..k-1 of d0, the candidate turn k's
    assert first.id == "d0-0" and first.labels == {"label": 1, "context_id": 0}
    assert [(t.speaker, t.text) for t in first.turns] == [("uv"[t % 2], f"dialogue 0 turn {t}") for t in range(k + 1)]
