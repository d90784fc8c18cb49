"""AllNLI pairs for curved contrastive learning's auxiliary NLI objective (triple-encoders Sec. 3;
Justus-Jonas/imaginaryNLP imaginaryNLP/trainer.py, UKPLab/acl2024-triple-encoders triple_encoders/trainer.py).

The released CCL and triple-encoder trainers read sbert.net's AllNLI.tsv.gz (SNLI + MultiNLI):
tab-separated, a header naming at least the columns split, sentence1, sentence2 and label, and
the rows whose split is "train". Labels: entailment 1, contradiction 0. Neutral pairs have no
label in a binary contrastive loss, so `labels="paper"` drops them; `labels="released"` keeps
them with y = 2 as the released code does (not a valid binary label, see
`tfdialemb.losses.nli_contrastive`). Nothing is downloaded: the user supplies the file.
"""
import csv
import dataclasses
import gzip
import os
from typing import Optional, Tuple

import numpy as np
import tensorflow as tf

from tfdialemb.text.tokenizer import BertTokenizer

LABEL_SETS = ("paper", "released")
LABEL_VALUES = {"entailment": 1.0, "contradiction": 0.0, "neutral": 2.0}
COLUMNS = ("split", "sentence1", "sentence2", "label")
FIRST, SECOND, LABEL = "nli_a", "nli_b", "nli_label"
"""Batch keys: token ids `nli_a` / `nli_b` (with `_mask`) [b, T] int32 and `nli_label` [b] float32."""
SOURCE = "sbert.net's AllNLI.tsv.gz (https://sbert.net/datasets/AllNLI.tsv.gz)"


@dataclasses.dataclass(frozen=True)
class NliPairs:
    """Sentence pairs and their float labels, in file order."""
    first: Tuple[str, ...]
    second: Tuple[str, ...]
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.first)


def read_nli(path: str, labels: str = "paper") -> NliPairs:
    """The train pairs of an AllNLI-style `.tsv` or `.tsv.gz` file (gzip is detected by content)."""
    if labels not in LABEL_SETS:
        raise ValueError(f"unknown NLI labels {labels!r}; expected one of {LABEL_SETS}")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path}: NLI file does not exist; it is {SOURCE}, which must be downloaded by the user")
    first, second, values = [], [], []
    with _open_text(path) as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        try:
            header = next(reader, [])
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise ValueError(f"{path}:1: the header lacks the columns {missing}; expected "
                                 f"tab-separated columns including {', '.join(COLUMNS)} ({SOURCE})")
            index = {c: header.index(c) for c in COLUMNS}
            for row in reader:
                if len(row) != len(header):
                    raise ValueError(f"{path}:{reader.line_num}: {len(row)} fields, but the header "
                                     f"has {len(header)}")
                if row[index["split"]] != "train":
                    continue
                label = row[index["label"]]
                if label not in LABEL_VALUES:
                    raise ValueError(f"{path}:{reader.line_num}: unknown label {label!r}; expected "
                                     f"one of {', '.join(LABEL_VALUES)}")
                if label == "neutral" and labels == "paper":
                    continue
                first.append(row[index["sentence1"]])
                second.append(row[index["sentence2"]])
                values.append(LABEL_VALUES[label])
        except UnicodeDecodeError as e:
            raise ValueError(f"{path}: not UTF-8 text ({e.reason})") from None
        except (EOFError, gzip.BadGzipFile) as e:
            raise ValueError(f"{path}: damaged gzip file ({e})") from None
    if not first:
        raise ValueError(f"{path}: no usable pairs with split 'train'")
    return NliPairs(tuple(first), tuple(second), np.asarray(values, np.float32))


def nli_dataset(pairs: NliPairs, tokenizer: BertTokenizer, batch_size: int, max_length: int,
                seed: int, input_context: Optional[tf.distribute.InputContext] = None) -> tf.data.Dataset:
    """Infinite batches of `pairs`, reshuffled every epoch (deterministic for a seed).

    `batch_size` is global; with an `input_context` each input pipeline takes every
    num_input_pipelines-th pair and yields per-replica batches. Batches cross epoch
    boundaries, so every batch is full. Texts are tokenized in the graph, one segment each,
    both columns padded to the longest sentence of the batch.
    """
    pipelines, pipeline = 1, 0
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
        pipelines, pipeline = input_context.num_input_pipelines, input_context.input_pipeline_id
    if len(pairs) < pipelines:
        raise ValueError(f"{len(pairs)} NLI pairs cannot feed {pipelines} input pipelines")
    dataset = tf.data.Dataset.from_tensor_slices((list(pairs.first), list(pairs.second), pairs.labels))
    dataset = dataset.shard(pipelines, pipeline)
    dataset = dataset.shuffle(-(-len(pairs) // pipelines), seed=seed, reshuffle_each_iteration=True)

    def tokenize(first, second, label):
        # One tokenizer call for both columns: tracing the tokenizer is the costly part.
        inputs = tokenizer(tf.concat([first, second], axis=0), max_length=max_length)
        ids = tf.split(inputs["input_word_ids"], 2)
        mask = tf.split(inputs["input_mask"], 2)
        return {FIRST: ids[0], f"{FIRST}_mask": mask[0], SECOND: ids[1], f"{SECOND}_mask": mask[1],
                LABEL: label}

    dataset = dataset.repeat().batch(batch_size).map(tokenize, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def _open_text(path: str):
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")
