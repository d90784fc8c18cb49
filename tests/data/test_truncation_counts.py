"""The build counts the examples the cut at max_length shortens and the tokens it leaves out."""
import numpy as np

from tiny_corpus import TOKENIZER
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import ExampleBuilder, make_builder
from tfdialemb.data.records import DIALOGUE_LIST, DIALOGUE_TURNS, describe_cuts
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues

SHORT = "hello world"  # 2 pieces
LONG = "good morning how are you fine thanks"  # 7 pieces


def _pieces(text):
    return len(TOKENIZER.tokenize([text]).to_list()[0])


def test_sequences_count_cut_examples_and_lost_tokens(tmp_path):
    """mlm at max_length 6 keeps [CLS], 4 pieces and [SEP]: a 7-piece turn loses 3 of its 9 tokens."""
    assert (_pieces(SHORT), _pieces(LONG)) == (2, 7)
    turns = [SHORT, LONG, SHORT, LONG, LONG]
    write_dialogues([Dialogue("d", tuple(Turn("ab"[i % 2], t) for i, t in enumerate(turns)))],
                    str(tmp_path / "d.jsonl"))
    manifest = build(str(tmp_path / "d.jsonl"), str(tmp_path / "mlm"), make_builder("mlm"), TOKENIZER,
                     BuildOptions(max_length=6, num_shards=1, merge_consecutive_turns=False, min_turns=1))
    counts = manifest["counts"]
    assert (counts["cut_at_max_length"], counts["tokens"], counts["tokens_cut"]) == (3, 2 * 4 + 3 * 9, 3 * 3)
    assert describe_cuts(manifest) == "3 of 5 examples cut at 6 tokens, 25.7% of the tokens left out"


class _WholeDialogue(ExampleBuilder):
    """The dialogue itself as one dialogue-list sample and as one dialogue-turns sample."""

    name = "whole_dialogue"
    schema = {"packed": DIALOGUE_LIST, "turns": DIALOGUE_TURNS}

    def examples(self, dialogue, index, rng, pool):
        sample = [(i % 2, turn.text) for i, turn in enumerate(dialogue.turns)]
        yield {"packed": [sample], "turns": [sample]}


def test_whole_dialogues_count_the_packed_sequence_and_each_turn(tmp_path):
    """At max_length 8: packed `[CLS] 2 [SEP] 7` is 11 tokens, 3 cut; as turns, each keeps at most
    6 pieces, so the 7-piece turn loses 1. A dialogue of two short turns (6 packed tokens) is whole."""
    write_dialogues([Dialogue("long", (Turn("a", SHORT), Turn("b", LONG))),
                     Dialogue("short", (Turn("a", SHORT), Turn("b", SHORT)))], str(tmp_path / "d.jsonl"))
    manifest = build(str(tmp_path / "d.jsonl"), str(tmp_path / "out"), _WholeDialogue(), TOKENIZER,
                     BuildOptions(max_length=8, num_shards=1, merge_consecutive_turns=False, min_turns=1))
    counts = manifest["counts"]
    uncut = (1 + 2 + 1 + 7) + (2 + 7) + (1 + 2 + 1 + 2) + (2 + 2)
    assert (counts["cut_at_max_length"], counts["tokens"], counts["tokens_cut"]) == (1, uncut, 3 + 1)
    np.testing.assert_equal(manifest["max_lengths"], {"packed": 8, "turns": 6})


def test_nothing_cut_says_nothing(tmp_path):
    write_dialogues([Dialogue("d", (Turn("a", SHORT), Turn("b", SHORT)))], str(tmp_path / "d.jsonl"))
    manifest = build(str(tmp_path / "d.jsonl"), str(tmp_path / "mlm"), make_builder("mlm"), TOKENIZER,
                     BuildOptions(max_length=6, num_shards=1, merge_consecutive_turns=False, min_turns=1))
    assert manifest["counts"]["cut_at_max_length"] == 0 and describe_cuts(manifest) is None
