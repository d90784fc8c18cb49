"""The benchmarks' data: utterances and examples built from the generated demo corpus."""
import itertools
import os
from typing import Iterator, List

from tfdialemb.demo.corpus import MIN_TURNS, generate
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues

CHITCHAT_TURNS = 45
"""Turns of a long chit-chat session."""


def demo_build(directory: str, dialogues: int, builder, tokenizer, options) -> str:
    """Builds `dialogues` generated demo dialogues (seed `options.seed`) with `builder` and
    `BuildOptions` `options` into directory/built; returns it."""
    from tfdialemb.data.build import build  # pylint: disable=import-outside-toplevel

    corpus = os.path.join(directory, "demo.jsonl")
    write_dialogues(generate(dialogues, options.seed), corpus)
    built = os.path.join(directory, "built")
    build(corpus, built, builder, tokenizer, options)
    return built


def padding_feeds(built: str, batch: int, seed: int, pad_to: int) -> dict:
    """One epoch of the examples fed three ways, to compare how many positions each pads: uniform
    batches padded to their longest sequence (training's default), length-bucketed batches
    (`--bucket_by_length`), and the uniform batches padded to `pad_to`."""
    from tfdialemb.data.pipeline import LENGTH_BOUNDARIES, make_dataset  # pylint: disable=import-outside-toplevel

    return {
        "uniform": make_dataset(built, batch, training=True, seed=seed),
        "bucketed": make_dataset(built, batch, training=True, seed=seed, bucket_boundaries=LENGTH_BOUNDARIES),
        "padded": make_dataset(built, batch, training=True, seed=seed, pad_to=pad_to),
    }


def demo_utterances(count: int, seed: int = 0) -> List[str]:
    """The first `count` turn texts of the demo corpus, dialogue after dialogue."""
    turns = (turn.text for dialogue in generate(count // MIN_TURNS + 1, seed) for turn in dialogue.turns)
    return list(itertools.islice(turns, count))


def chitchat_dialogues(count: int, turns: int = CHITCHAT_TURNS, seed: int = 0) -> Iterator:
    """`count` dialogues of `turns` turns between speakers "a" and "b", each turn two consecutive
    demo utterances (about 12 words, as chit-chat's: the demo's task talk is terser), taken from
    the demo dialogues one after another: the length of real chit-chat sessions."""
    utterances = (turn.text for dialogue in generate(count * turns, seed) for turn in dialogue.turns)
    for number in range(count):
        session = [Turn("ab"[k % 2], f"{next(utterances)} {next(utterances)}") for k in range(turns)]
        yield Dialogue(f"chitchat-{number + 1:06d}", tuple(session))
