"""The benchmarks' data: utterances and examples built from the generated demo corpus."""
import itertools
import os
from typing import Iterator, List

from tfdialemb.data.records import read_manifest, shard_paths
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


def same_example_feeds(built: str, batch: int, batches: int) -> dict:
    """The first `batch` × `batches` examples of a build (a uniform sample: the build writes them
    in a uniformly random order) fed two ways: in uniform batches as stored, and sorted by length
    into batches of similar length, as bucketing would group them. The same examples and the same
    number of steps, so the two cost the same but for padding."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from tfdialemb.data.pipeline import example_lengths, to_dense  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.example_codec import parse_spec  # pylint: disable=import-outside-toplevel

    manifest = read_manifest(built)
    schema = manifest["builder"]["schema"]
    count = batch * batches
    if manifest["counts"]["examples"] < count:
        raise ValueError(f"{built} holds {manifest['counts']['examples']} examples, fewer than "
                         f"{batches} batches of {batch}; generate more dialogues")
    records = tf.data.TFRecordDataset(shard_paths(built, manifest)).take(count).batch(count)
    examples = next(iter(records.map(lambda r: tf.io.parse_example(r, parse_spec(schema)))))
    order = tf.argsort(example_lengths(examples, schema), stable=True)
    pad_id = manifest.get("pad_id", 0)

    def feed(parsed):
        dataset = tf.data.Dataset.from_tensors(parsed).unbatch().batch(batch)
        return dataset.map(lambda b: to_dense(b, schema, pad_id))

    return {"uniform": feed(examples),
            "length_sorted": feed({name: tf.gather(value, order) for name, value in examples.items()})}


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
