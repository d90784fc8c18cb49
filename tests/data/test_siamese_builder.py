"""The `siamese` builder: previous utterance, flattened most-recent-first context, negatives."""
import os

import numpy as np
import pytest
import tensorflow as tf

import tiny_bert
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.data.example_codec import parse_spec
from tfdialemb.data.records import read_manifest
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tiny_corpus import TOKENIZER, packed_ids, utterance_pool

OWN = ["hello", "how are you", "fine thanks", "book a taxi", "please help"]
OTHER = ["good morning", "need hotel", "the cafe"]


def _pool():
    return utterance_pool(OWN, OTHER)


def test_examples_hand_worked():
    dialogue = Dialogue("d0", tuple(Turn("ab"[i % 2], text) for i, text in enumerate(OWN)))
    builder = make_builder("siamese", {"negatives": 2, "context_turns": 3})
    examples = list(builder.examples(dialogue, 0, np.random.default_rng(0), _pool()))
    assert [(e["previous"], e["context"], e["candidates"][0]) for e in examples] == [
        ("hello", "hello", "how are you"),
        ("how are you", "how are you [SEP] hello", "fine thanks"),
        ("fine thanks", "fine thanks [SEP] how are you [SEP] hello", "book a taxi"),
        ("book a taxi", "book a taxi [SEP] fine thanks [SEP] how are you", "please help"),
    ]
    for example in examples:
        negatives = example["candidates"][1:]
        assert len(negatives) == 2 == len(set(negatives)) and set(negatives) <= set(OTHER)


def test_truncation_keeps_the_most_recent_turns(tmp_path):
    path = str(tmp_path / "train.jsonl")
    write_dialogues([Dialogue("d0", tuple(Turn("ab"[i % 2], t) for i, t in enumerate(OWN))),
                     Dialogue("d1", tuple(Turn("ab"[i % 2], t) for i, t in enumerate(OTHER)))],
                    path)
    builder = make_builder("siamese", {"negatives": "1", "context_turns": "3"})
    options = BuildOptions(max_length=6, num_shards=1, merge_consecutive_turns=False, min_turns=1)
    build(path, str(tmp_path / "built"), builder, TOKENIZER, options)
    built = str(tmp_path / "built")
    manifest = read_manifest(built)
    spec = parse_spec(manifest["builder"]["schema"])
    shard = os.path.join(built, manifest["shards"][0])
    records = [tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(shard)]
    # d0's last response: context "book a taxi [SEP] fine thanks [SEP] how are you" cut to 4 pieces.
    last = [r for r in records if r["candidates"].to_list()[0] == packed_ids("please help", 6)]
    assert len(last) == 1
    kept = ["[CLS]", "book", "a", "taxi", "[SEP]", "[SEP]"]
    assert last[0]["context"].numpy().tolist() == [tiny_bert.WORDS.index(t) for t in kept]
    assert last[0]["previous"].numpy().tolist() == packed_ids("book a taxi", 6)
    assert manifest["counts"]["examples"] == 4 + 2
    assert manifest["builder"]["params"] == {"negatives": 1, "context_turns": 3}


def test_parameter_errors():
    with pytest.raises(ValueError, match="out of range"):
        make_builder("siamese", {"context_turns": 0})
    with pytest.raises(ValueError, match="has no parameters"):
        make_builder("siamese", {"turns": 3})
