"""Building shards: exact read-back, reproducible bytes, manifest, atomicity."""
import json
import os

import pytest
import tensorflow as tf

from tfdialemb.data.build import BuildOptions, build, vocab_sha256
from tfdialemb.data.examples import make_builder
from tfdialemb.data.example_codec import parse_spec
from tfdialemb.data.records import IncompleteBuildError, read_manifest
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tiny_corpus import TOKENIZER, corpus, packed_ids as _ids

@pytest.fixture
def jsonl(tmp_path):
    path = str(tmp_path / "train.jsonl")
    write_dialogues(corpus(), path)
    return path


def _records(directory):
    manifest = read_manifest(directory)
    spec = parse_spec(manifest["builder"]["schema"])
    out = []
    for shard in manifest["shards"]:
        for record in tf.data.TFRecordDataset(os.path.join(directory, shard)):
            parsed = tf.io.parse_single_example(record, spec)
            out.append({k: v.to_list() if isinstance(v, tf.RaggedTensor) else v.numpy().tolist()
                        for k, v in parsed.items()})
    return manifest, out


def test_mlm_shards_hold_exactly_the_utterances(tmp_path, jsonl):
    options = BuildOptions(max_length=6, num_shards=3, merge_consecutive_turns=False, min_turns=1)
    build(jsonl, str(tmp_path / "mlm"), make_builder("mlm"), TOKENIZER, options)
    manifest, records = _records(str(tmp_path / "mlm"))
    expected = sorted(_ids(t.text, 6) for d in corpus() for t in d.turns)
    assert sorted(r["input_word_ids"] for r in records) == expected
    assert manifest["counts"]["examples"] == len(expected) == sum(manifest["counts"]["per_shard"])
    assert manifest["counts"]["dialogues"] == 12
    assert manifest["max_lengths"]["input_word_ids"] == max(len(e) for e in expected) <= 6
    assert manifest["vocab_sha256"] == vocab_sha256(TOKENIZER)


def test_mge_examples_context_and_negatives(tmp_path, jsonl):
    options = BuildOptions(max_length=16, num_shards=2, merge_consecutive_turns=False, min_turns=1)
    builder = make_builder("mge", {"negatives": "3", "context_before": "2", "context_after": "1"})
    build(jsonl, str(tmp_path / "mge"), builder, TOKENIZER, options)
    manifest, records = _records(str(tmp_path / "mge"))
    dialogues = corpus()
    expected = []
    for d in dialogues:
        texts = [t.text for t in d.turns]
        for k in range(len(texts)):
            expected.append(([_ids(t, 16) for t in texts[max(0, k - 2):k]],
                             [_ids(t, 16) for t in texts[k + 1:k + 2]], _ids(texts[k], 16), d.id))
    assert len(records) == len(expected)
    by_key = {}
    for before, after, response, did in expected:
        by_key.setdefault((json.dumps(before), json.dumps(after), json.dumps(response)), []).append(did)
    utterances_of = {d.id: {json.dumps(_ids(t.text, 16)) for t in d.turns} for d in dialogues}
    for record in records:
        key = (json.dumps(record["context_before"]), json.dumps(record["context_after"]),
               json.dumps(record["candidates"][0]))
        assert key in by_key
        own = by_key[key][0]
        negatives = record["candidates"][1:]
        assert len(negatives) == 3
        for negative in negatives:
            # Drawn from another dialogue (short utterances may also occur in the own one).
            assert any(json.dumps(negative) in texts for other, texts in utterances_of.items() if other != own)
    assert manifest["builder"]["params"] == {"negatives": 3, "context_before": 2, "context_after": 1}
    assert manifest["pool_dialogues"] == 100_000
    assert manifest["counts"]["negative_pool"]["dialogues"] == manifest["counts"]["dialogues"]


def test_same_seed_same_bytes_other_seed_other_negatives(tmp_path, jsonl):
    def shards(name, seed):
        directory = str(tmp_path / name)
        build(jsonl, directory, make_builder("mge", {"negatives": 2}), TOKENIZER, BuildOptions(seed=seed))
        return {f: open(os.path.join(directory, f), "rb").read() for f in sorted(os.listdir(directory))}

    first, again, other = shards("a", 5), shards("b", 5), shards("c", 6)
    assert first == again
    assert first != other


def test_interrupted_build_leaves_nothing_a_reader_takes_as_complete(tmp_path, jsonl):
    class Exploding(type(make_builder("mlm"))):
        count = 0

        def examples(self, dialogue, index, rng, pool):
            if index == 6:
                raise KeyboardInterrupt
            yield from super().examples(dialogue, index, rng, pool)

    with pytest.raises(KeyboardInterrupt):
        build(jsonl, str(tmp_path / "out"), Exploding(), TOKENIZER, BuildOptions())
    assert sorted(os.listdir(tmp_path)) == ["train.jsonl"]
    with pytest.raises(IncompleteBuildError, match="not a complete build"):
        read_manifest(str(tmp_path / "out"))


def test_existing_output_needs_overwrite(tmp_path, jsonl):
    out = str(tmp_path / "out")
    build(jsonl, out, make_builder("mlm"), TOKENIZER, BuildOptions())
    with pytest.raises(FileExistsError, match="already exists"):
        build(jsonl, out, make_builder("mlm"), TOKENIZER, BuildOptions())
    build(jsonl, out, make_builder("mlm", {"unit": "dialogue"}), TOKENIZER, BuildOptions(overwrite=True))
    assert read_manifest(out)["builder"]["params"] == {"unit": "dialogue"}
    assert sorted(os.listdir(tmp_path)) == ["out", "train.jsonl"]


def test_dialogues_under_min_turns_are_counted(tmp_path):
    # Of five valid dialogues, one has a single turn and one merges into a single turn (two turns
    # of one speaker): with min_turns=2 the build keeps three and counts two dropped.
    dialogues = corpus(3) + [Dialogue("one", (Turn("a", "hello"),)),
                             Dialogue("same", (Turn("a", "hello"), Turn("a", "world")))]
    path = str(tmp_path / "mixed.jsonl")
    write_dialogues(dialogues, path)
    counts = build(path, str(tmp_path / "out"), make_builder("mlm"), TOKENIZER, BuildOptions())["counts"]
    assert (counts["dialogues"], counts["dropped_under_min_turns"]) == (3, 2)
    assert counts["examples"] == sum(len(d.turns) for d in corpus(3))


def test_an_output_holding_the_input_is_refused_even_with_overwrite(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    path = str(folder / "train.jsonl")
    write_dialogues(corpus(), path)
    (folder / "notes.txt").write_text("mine")
    for output in (str(folder), str(tmp_path)):
        with pytest.raises(ValueError, match="the output would replace the input"):
            build(path, output, make_builder("mlm"), TOKENIZER, BuildOptions(overwrite=True))
    assert sorted(os.listdir(folder)) == ["notes.txt", "train.jsonl"]


def test_overwrite_replaces_a_build_but_refuses_a_folder_no_build_wrote(tmp_path):
    path = str(tmp_path / "train.jsonl")
    write_dialogues(corpus(), path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="no manifest.json, so it is not a build"):
        build(path, str(mine), make_builder("mlm"), TOKENIZER, BuildOptions(overwrite=True))
    assert os.listdir(mine) == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    built = str(tmp_path / "built")
    for output in (str(empty), built, built):
        build(path, output, make_builder("mlm"), TOKENIZER, BuildOptions(overwrite=True))
        assert "manifest.json" in os.listdir(output)


def test_builder_parameter_errors():
    with pytest.raises(ValueError, match=r"has no parameters \['turns'\]"):
        make_builder("mge", {"turns": 3})
    with pytest.raises(ValueError, match="negatives='many' is not a valid int"):
        make_builder("mge", {"negatives": "many"})
    with pytest.raises(ValueError, match="no example builder for method 'xyz'"):
        make_builder("xyz")
    with pytest.raises(ValueError, match="mlm unit must be one of"):
        make_builder("mlm", {"unit": "word"})
