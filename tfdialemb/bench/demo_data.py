"""The benchmarks' data: examples built from the generated demo corpus."""
import os


def demo_build(directory: str, dialogues: int, builder, tokenizer, max_length: int, seed: int,
               num_shards: int = 1) -> str:
    """Builds `dialogues` generated demo dialogues with `builder` into directory/built; returns it."""
    from data_prep.make_demo_corpus import generate  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.build import BuildOptions, build  # pylint: disable=import-outside-toplevel
    from tfdialemb.dialogue import write_dialogues  # pylint: disable=import-outside-toplevel

    corpus = os.path.join(directory, "demo.jsonl")
    write_dialogues(generate(dialogues, seed), corpus)
    built = os.path.join(directory, "built")
    build(corpus, built, builder, tokenizer, BuildOptions(max_length=max_length, seed=seed, num_shards=num_shards))
    return built


def padding_feeds(built: str, batch: int, seed: int, pad_to: int) -> dict:
    """The same examples fed three ways, to compare how many positions each pads: length-bucketed
    (the library's default), dynamic padding without buckets, and padding every batch to `pad_to`."""
    from tfdialemb.data.pipeline import make_dataset  # pylint: disable=import-outside-toplevel

    return {
        "bucketed": make_dataset(built, batch, training=True, seed=seed),
        "dynamic": make_dataset(built, batch, training=True, seed=seed, bucket_boundaries=None),
        "padded": make_dataset(built, batch, training=True, seed=seed, bucket_boundaries=None,
                               pad_to=pad_to),
    }
