"""AllNLI reading (sbert.net AllNLI.tsv.gz as Justus-Jonas/imaginaryNLP imaginaryNLP/trainer.py reads it)
and the NLI batches of the auxiliary objective."""
import gzip

import numpy as np
import pytest
import tensorflow as tf

from tiny_corpus import TOKENIZER, packed_ids
from tfdialemb.data.nli import nli_dataset, read_nli

HEADER = "split\tdataset\tfilename\tsentence1\tsentence2\tlabel\n"
ROWS = [  # AllNLI's layout: (split, sentence1, sentence2, label)
    ("train", "hello world", "good morning", "entailment"),
    ("train", "book a taxi", "book a hotel", "contradiction"),
    ("dev", "how are you", "fine thanks", "entailment"),
    ("train", "need help", "help please", "neutral"),
    ("train", "the cafe", "a taxi", "contradiction"),
    ("test", "good", "world", "neutral"),
    ("train", "you are fine", "thanks", "entailment"),
]


def _text(rows=ROWS, header=HEADER):
    return header + "".join(f"{s}\tSNLI\tsnli_1.0_{s}.jsonl\t{a}\t{b}\t{y}\n" for s, a, b, y in rows)


def _write(path, text):
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", ["AllNLI.tsv", "AllNLI.tsv.gz"])
def test_reads_train_rows_and_drops_neutral_by_default(tmp_path, name):
    pairs = read_nli(_write(tmp_path / name, _text()))
    assert pairs.first == ("hello world", "book a taxi", "the cafe", "you are fine")
    assert pairs.second == ("good morning", "book a hotel", "a taxi", "thanks")
    np.testing.assert_array_equal(pairs.labels, [1.0, 0.0, 0.0, 1.0])
    assert pairs.labels.dtype == np.float32 and len(pairs) == 4


def test_released_labels_keep_neutral_as_two(tmp_path):
    pairs = read_nli(_write(tmp_path / "AllNLI.tsv.gz", _text()), labels="released")
    assert pairs.first == ("hello world", "book a taxi", "need help", "the cafe", "you are fine")
    np.testing.assert_array_equal(pairs.labels, [1.0, 0.0, 2.0, 0.0, 1.0])


def test_gzip_is_detected_by_content(tmp_path):
    gzipped = _write(tmp_path / "x.tsv.gz", _text())
    renamed = tmp_path / "renamed.tsv"
    renamed.write_bytes(open(gzipped, "rb").read())
    got, plain = read_nli(str(renamed)), read_nli(_write(tmp_path / "plain.tsv", _text()))
    assert (got.first, got.second) == (plain.first, plain.second)
    np.testing.assert_array_equal(got.labels, plain.labels)


def test_bad_files_fail_with_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"AllNLI\.tsv\.gz.*must be downloaded by the user"):
        read_nli(str(tmp_path / "absent.tsv.gz"))
    with pytest.raises(ValueError, match=r"bad\.tsv:1: the header lacks the columns \['label'\]"):
        read_nli(_write(tmp_path / "bad.tsv", _text(header="split\tsentence1\tsentence2\tgold\n")))
    rows = ROWS[:4] + [("train", "hello", "world", "Entails")]
    with pytest.raises(ValueError, match=r"labels\.tsv:6: unknown label 'Entails'"):
        read_nli(_write(tmp_path / "labels.tsv", _text(rows)))
    with pytest.raises(ValueError, match=r"short\.tsv\.gz:3: 5 fields, but the header has 6"):
        read_nli(_write(tmp_path / "short.tsv.gz", _text(ROWS[:1]) + "train\tx\ty\tz\tentailment\n"))
    with pytest.raises(ValueError, match="no usable pairs with split 'train'"):
        read_nli(_write(tmp_path / "dev.tsv", _text([r for r in ROWS if r[0] != "train"])))
    with pytest.raises(ValueError, match="unknown NLI labels"):
        read_nli(_write(tmp_path / "ok.tsv", _text()), labels="binary")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """12 train pairs of the tiny vocabulary, alternately entailed and contradicting."""
    words = ["hello", "world", "good", "morning", "book", "taxi", "hotel", "cafe"]
    rows = [("train", " ".join(words[i % 8: i % 8 + 1 + i % 3]), words[(3 * i) % 8],
             ("entailment", "contradiction")[i % 2]) for i in range(12)]
    return read_nli(_write(tmp_path_factory.mktemp("nli") / "pairs.tsv", _text(rows)))


def _tokenized(pairs):
    """Each pair in file order as `[CLS] pieces [SEP]` of each sentence alone, and its label."""
    return [(tuple(packed_ids(a, 8)), tuple(packed_ids(b, 8)), float(y))
            for a, b, y in zip(pairs.first, pairs.second, pairs.labels)]


def _decoded(batches):
    """(sentence1 ids, sentence2 ids, label) per pair, padding removed, in batch order."""
    out = []
    for batch in batches:
        for a, am, b, bm, y in zip(batch["nli_a"].numpy(), batch["nli_a_mask"].numpy(),
                                   batch["nli_b"].numpy(), batch["nli_b_mask"].numpy(),
                                   batch["nli_label"].numpy()):
            for ids, mask in ((a, am), (b, bm)):  # valid tokens first, then zero padding
                n = int(mask.sum())
                assert mask[:n].all() and not mask[n:].any() and not ids[n:].any()
            out.append((tuple(a[am > 0]), tuple(b[bm > 0]), float(y)))
    return out


@pytest.fixture(scope="module")
def seed3_batches(pairs):
    """Six batches of 5 from 12 pairs: two and a half epochs."""
    return list(nli_dataset(pairs, TOKENIZER, batch_size=5, max_length=8, seed=3).take(6))


def test_batches_are_full_typed_and_cross_epoch_boundaries(seed3_batches):
    for batch in seed3_batches:
        assert batch["nli_label"].shape == (5,) and batch["nli_label"].dtype == tf.float32
        for key in ("nli_a", "nli_a_mask", "nli_b", "nli_b_mask"):
            assert batch[key].dtype == tf.int32 and batch[key].shape[0] == 5


def test_every_pair_once_per_epoch_reshuffled_each_epoch(pairs, seed3_batches):
    decoded = _decoded(seed3_batches)
    first_epoch, second_epoch = decoded[:12], decoded[12:24]
    in_file_order = _tokenized(pairs)
    assert sorted(first_epoch) == sorted(in_file_order) == sorted(second_epoch)
    assert first_epoch != second_epoch and first_epoch != in_file_order


def test_order_is_deterministic_for_a_seed(pairs, seed3_batches):
    again = _decoded(nli_dataset(pairs, TOKENIZER, 5, 8, seed=3).take(6))
    assert again == _decoded(seed3_batches)
    assert _decoded(nli_dataset(pairs, TOKENIZER, 5, 8, seed=4).take(6)) != again


def test_an_input_pipeline_reads_its_shard_at_the_per_replica_batch_size(pairs):
    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1,
                                         num_replicas_in_sync=2)
    batches = list(nli_dataset(pairs, TOKENIZER, 4, 8, seed=0, input_context=context).take(3))
    assert all(b["nli_label"].shape == (2,) for b in batches)
    # Pipeline 1 of 2 holds every second pair from the second on: one epoch is 6 pairs.
    assert sorted(_decoded(batches)) == sorted(_tokenized(pairs)[1::2])
