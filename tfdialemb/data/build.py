"""Streams a canonical dialogue file through an example builder into sharded TFRecords.

The examples are written in a seeded uniformly random order (`ExternalShuffle`), dealt to the
shards in turn, so each shard is a random sample of the corpus in random order whatever order the
corpus is stored in, and training batches drawn from them are uniform samples.

Memory holds one chunk of examples (flushed once it holds CHUNK_TEXTS texts or would pass
CHUNK_CHARACTERS characters), the shuffle's
bounded part of records, and, for builders that sample negatives, the ids and offsets of the pool
of dialogues they are drawn from (`DialoguePool`; its texts are spilled to disk, its size is in the
manifest's counts); never the corpus. Shards are written into a temporary sibling directory and
the manifest last; the directory is renamed into place only when complete.
"""
import contextlib
import dataclasses
import errno
import hashlib
import os
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from tfdialemb.data.examples import ExampleBuilder
from tfdialemb.data.external_shuffle import ExternalShuffle
from tfdialemb.data.example_codec import serialize_example
from tfdialemb.data.records import (
    DIALOGUE_LIST, DIALOGUE_TURNS, MANIFEST, SEQUENCE, SEQUENCE_LIST, shard_name, write_manifest)
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue, ErrorPolicy, drop_short, merge_consecutive_turns, read_dialogues
from tfdialemb.core.files import atomic_directory, check_writable, file_fingerprint
from tfdialemb.text.tokenizer import BertTokenizer
from tfdialemb.text.dialogue_packing import pack_dialogues, separator_id

CHUNK_TEXTS = 2048
"""Texts tokenized at once: a chunk of examples is flushed when it holds this many."""
CHUNK_CHARACTERS = 1_000_000
"""...or before an example would take it past this many characters: TensorFlow's working memory
for a tokenizer call grows with its characters (10-40 bytes each), so a chunk of long turns (a
dial2vec example tokenizes every turn of its 10 samples) would otherwise set a peak that grows
with the longest dialogues a corpus happens to hold. Characters are code points: a chunk of
Chinese text, 3 bytes each in UTF-8, holds about three times the bytes of an English one."""
SHUFFLED_ORDER = "uniform_permutation"
"""The manifest's `example_order` of a build whose shards hold its examples in a seeded uniformly
random order (builds without the key kept the corpus' order)."""


@dataclasses.dataclass(frozen=True)
class BuildOptions:
    max_length: int = 128
    seed: int = 0
    num_shards: int = 4
    merge_consecutive_turns: bool = True
    min_turns: int = 2
    pool_dialogues: int = 100_000
    overwrite: bool = False
    # Between the turns of a packed dialogue ("dialogue_list" features): [SEP] or [EOU].
    dialogue_separator: str = "[SEP]"


def vocab_sha256(tokenizer: BertTokenizer) -> str:
    """Identifies the vocabulary the ids index, so a build cannot meet the wrong checkpoint."""
    return hashlib.sha256("\n".join(tokenizer.vocab).encode("utf-8")).hexdigest()


def preprocessed_dialogues(path: str, options: BuildOptions, errors: ErrorPolicy,
                           read: Optional[List[int]] = None) -> Iterator[Dialogue]:
    """The papers' pre-processing: merge same-speaker runs, then drop dialogues under min_turns.

    `read[0]`, when given, counts the valid dialogues read, so the caller can say how many the
    pre-processing dropped."""
    dialogues = read_dialogues(path, errors)
    if read is not None:
        dialogues = _counting(dialogues, read)
    if options.merge_consecutive_turns:
        dialogues = (merge_consecutive_turns(d) for d in dialogues)
    return drop_short(dialogues, options.min_turns)


def _counting(dialogues: Iterable[Dialogue], count: List[int]) -> Iterator[Dialogue]:
    for dialogue in dialogues:
        count[0] += 1
        yield dialogue


class _Tokenizing:
    """Turns the text features of a chunk of examples into id lists at once: `[CLS] ... [SEP]`
    for sequences, `pack_dialogues` sequences with turn and role ids for dialogue lists, and
    each turn's pieces (at most max_length - 2, all a packed sequence can hold) for dialogue turns.

    Each example comes with the tokens its sequences had and those the cut at max_length left
    out, so a build can say how much of a corpus it keeps (a text is tokenized up to the
    tokenizer's character budget for max_length, so a huge text counts that much at most)."""

    def __init__(self, tokenizer: BertTokenizer, schema: Dict[str, str], max_length: int,
                 dialogue_separator: str = "[SEP]"):
        if max_length < 3:
            raise ValueError(f"max_length must be at least 3, got {max_length}")
        self.schema = schema
        self.cls, self.sep = tokenizer.cls_id, tokenizer.sep_id
        self.keep = max_length - 2
        self._tokenize = tf.function(lambda texts: tokenizer.tokenize(texts, max_length), autograph=False,
                                     input_signature=[tf.TensorSpec([None], tf.string)])
        separator = separator_id(tokenizer, dialogue_separator)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.int32),
                                      tf.TensorSpec([None], tf.int64)], autograph=False)
        def pack(texts, roles, turn_counts):
            pieces = tf.RaggedTensor.from_row_lengths(tokenizer.tokenize(texts, max_length), turn_counts)
            packed = pack_dialogues(pieces, tf.RaggedTensor.from_row_lengths(roles, turn_counts),
                                    self.cls, separator, max_length)
            # Uncut: [CLS], every turn's pieces and a separator between turns.
            uncut = tf.reduce_sum(pieces.row_lengths(axis=2), axis=1) + turn_counts
            return (*packed, uncut)

        self._pack_dialogues = pack
        self.max_lengths = {name: 0 for name, kind in schema.items()
                            if kind in (SEQUENCE, SEQUENCE_LIST, DIALOGUE_LIST, DIALOGUE_TURNS)}

    def __call__(self, examples: List[Dict]) -> List[Tuple[Dict, int, int]]:
        """(ids, tokens left out by the cut at max_length, tokens uncut) of each example."""
        texts: List[str] = []
        dialogues: List[Tuple[str, Sequence]] = []
        for example in examples:
            for name, kind in self.schema.items():
                if kind == SEQUENCE:
                    texts.append(example[name])
                elif kind == SEQUENCE_LIST:
                    texts.extend(example[name])
                elif kind == DIALOGUE_LIST:
                    dialogues.extend((name, sample) for sample in example[name])
                elif kind == DIALOGUE_TURNS:
                    texts.extend(text for sample in example[name] for _, text in _checked_turns(name, sample))
        ids = iter(self._tokenize(tf.constant(texts, tf.string)).to_list() if texts else [])
        packed = iter(self._dialogues(dialogues))
        encoded = []
        for example in examples:
            self._cut = self._uncut = 0
            row = {}
            for name, kind in self.schema.items():
                if kind == SEQUENCE:
                    row[name] = self._pack(next(ids), name)
                elif kind == SEQUENCE_LIST:
                    row[name] = [self._pack(next(ids), name) for _ in example[name]]
                elif kind == DIALOGUE_LIST:
                    row[name] = [self._packed(*next(packed)) for _ in example[name]]
                elif kind == DIALOGUE_TURNS:
                    row[name] = [[(int(role), self._turn(next(ids), name)) for role, _ in sample]
                                 for sample in example[name]]
                else:
                    row[name] = example[name]
            encoded.append((row, self._cut, self._uncut))
        return encoded

    def texts_in(self, example: Dict) -> Tuple[int, int]:
        """(texts, characters) `example` gives the tokenizer."""
        texts = characters = 0
        for name, kind in self.schema.items():
            if kind == SEQUENCE:
                texts, characters = texts + 1, characters + _characters(example[name])
            elif kind == SEQUENCE_LIST:
                texts += len(example[name])
                characters += sum(_characters(text) for text in example[name])
            elif kind in (DIALOGUE_LIST, DIALOGUE_TURNS):
                texts += sum(len(sample) for sample in example[name])
                characters += sum(len(text) for sample in example[name] for _, text in _checked_turns(name, sample))
        return texts, characters

    def _turn(self, pieces: List[int], name: str) -> List[int]:
        kept = pieces[: self.keep]
        self._count(len(kept), len(pieces))
        self.max_lengths[name] = max(self.max_lengths[name], len(kept))
        return kept

    def _pack(self, pieces: List[int], name: str) -> List[int]:
        packed = [self.cls] + pieces[: self.keep] + [self.sep]
        self._count(len(packed), len(pieces) + 2)
        self.max_lengths[name] = max(self.max_lengths[name], len(packed))
        return packed

    def _packed(self, ids: List[int], turn_ids: List[int], role_ids: List[int], uncut: int):
        self._count(len(ids), uncut)
        return ids, turn_ids, role_ids

    def _count(self, kept: int, uncut: int) -> None:
        self._cut += uncut - kept
        self._uncut += uncut

    def _dialogues(self, dialogues: List[Tuple[str, Sequence]]) -> List[Tuple[List[int], List[int], List[int], int]]:
        """(ids, turn ids, role ids, tokens uncut) of each (feature, [(role_id, text), ...]) sample."""
        if not dialogues:
            return []
        texts, roles, counts = [], [], []
        for name, sample in dialogues:
            for role, text in _checked_turns(name, sample):
                roles.append(int(role))
                texts.append(text)
            counts.append(len(sample))
        *packed, uncut = self._pack_dialogues(tf.constant(texts, tf.string), tf.constant(roles, tf.int32),
                                              tf.constant(counts, tf.int64))
        rows = list(zip(*(channel.to_list() for channel in packed), uncut.numpy().tolist()))
        for (name, _), (ids, *_) in zip(dialogues, rows):
            self.max_lengths[name] = max(self.max_lengths[name], len(ids))
        return rows


def _characters(text) -> int:
    """A text's length; 0 for what is no text, which the tokenizer then refuses with its own error."""
    return len(text) if isinstance(text, str) else 0


def _checked_turns(name: str, sample: Sequence) -> Sequence:
    """The (role_id, text) turns of one dialogue sample of feature `name`; a ValueError names a
    sample without turns or a malformed turn."""
    if not sample:
        raise ValueError(f"feature {name!r}: a dialogue sample has no turns")
    for role, text in sample:
        if not isinstance(role, (int, np.integer)) or role < 0 or not isinstance(text, str):
            raise ValueError(f"feature {name!r}: turns must be (role_id >= 0, text) pairs, got {(role, text)!r}")
    return sample


def _foreign_directory(path: str) -> bool:
    """A non-empty folder that no build wrote: --overwrite must not delete it whole."""
    return (os.path.isdir(path) and bool(os.listdir(path))
            and not os.path.exists(os.path.join(path, MANIFEST)))


def build(
    input_path: str,
    output_dir: str,
    builder: ExampleBuilder,
    tokenizer: BertTokenizer,
    options: BuildOptions = BuildOptions(),
    errors: Optional[ErrorPolicy] = None,
    on_dialogue: Optional[Callable[[int], None]] = None,
) -> Dict:
    """Builds `output_dir` from the JSONL at `input_path`; returns the manifest written.

    `on_dialogue(n)` reports progress (dialogues of the final pass).
    """
    errors = errors or ErrorPolicy("fail")
    output_dir = os.path.abspath(output_dir)
    target = os.path.realpath(output_dir)
    if os.path.commonpath([os.path.realpath(input_path), target]) == target:
        raise ValueError(f"{output_dir}: the output would replace the input {input_path}, which it holds; "
                         "write it elsewhere")
    if os.path.exists(output_dir) and not options.overwrite:
        raise FileExistsError(f"{output_dir}: already exists (pass --overwrite to replace it)")
    if _foreign_directory(output_dir):
        raise FileExistsError(f"{output_dir}: holds files but no {MANIFEST}, so it is not a build; "
                              "--overwrite replaces only a build (remove the folder yourself, or write elsewhere)")
    if options.num_shards < 1:
        raise ValueError(f"num_shards must be positive, got {options.num_shards}")
    tokenizing = _Tokenizing(tokenizer, dict(builder.schema), options.max_length, options.dialogue_separator)
    check_writable(output_dir)
    with atomic_directory(output_dir, replace=options.overwrite) as staging:
        try:
            with _negative_pool(input_path, staging, builder, options, errors) as pool:
                manifest = _write_shards(input_path, staging, builder, tokenizer, tokenizing, options, errors,
                                         pool, on_dialogue)
            write_manifest(staging, manifest)
        except (OSError, tf.errors.ResourceExhaustedError) as error:
            if isinstance(error, OSError) and error.errno not in _NO_SPACE:
                raise
            raise OSError(f"{output_dir}: no space left on the device while writing the build; "
                          "nothing was written") from None
    return manifest


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


@contextlib.contextmanager
def _negative_pool(input_path: str, staging: str, builder: ExampleBuilder, options: BuildOptions,
                   errors: ErrorPolicy) -> Iterator[Optional[DialoguePool]]:
    """For a builder that draws negatives, the pool filled by a first pass over the corpus (its
    spill file in `staging`); else None."""
    if not builder.uses_pool:
        yield None
        return
    with DialoguePool(options.pool_dialogues, options.seed, directory=staging) as pool:
        for index, dialogue in enumerate(preprocessed_dialogues(input_path, options, ErrorPolicy(errors.mode))):
            pool.add(index, [turn.text for turn in dialogue.turns], builder.pool_roles(dialogue))
        yield pool


def _write_shards(input_path, staging, builder, tokenizer, tokenizing, options, errors, pool, on_dialogue) -> Dict:
    names = [shard_name(i, options.num_shards) for i in range(options.num_shards)]
    per_shard = [0] * options.num_shards
    written = dialogues = too_long = cut_examples = tokens_cut = tokens = 0
    read = [0]
    chunk: List[Dict] = []
    chunk_texts = chunk_characters = 0

    def add(examples: Iterable[Dict]) -> None:
        nonlocal chunk_texts, chunk_characters
        for example in examples:
            texts, characters = tokenizing.texts_in(example)
            if chunk and chunk_characters + characters > CHUNK_CHARACTERS:
                flush()
            chunk.append(example)
            chunk_texts += texts
            chunk_characters += characters
            if chunk_texts >= CHUNK_TEXTS:
                flush()

    def flush():
        nonlocal written, too_long, chunk_texts, chunk_characters, cut_examples, tokens_cut, tokens
        for example, cut, uncut in tokenizing(chunk):
            if not builder.fits(example, tokenizer, options.max_length):
                too_long += 1
                continue
            shuffle.add(serialize_example(example, builder.schema))
            written += 1
            cut_examples += cut > 0
            tokens_cut += cut
            tokens += uncut
        chunk.clear()
        chunk_texts = chunk_characters = 0

    with ExternalShuffle(staging, options.seed) as shuffle:
        for index, dialogue in enumerate(preprocessed_dialogues(input_path, options, errors, read)):
            add(builder.examples(dialogue, index, np.random.default_rng([options.seed, index]), pool))
            dialogues += 1
            if on_dialogue is not None:
                on_dialogue(1)
        add(builder.finish(np.random.default_rng([options.seed, dialogues]), pool))
        flush()
        writers = [tf.io.TFRecordWriter(os.path.join(staging, n)) for n in names]
        dealt = 0

        def deal(record: bytes) -> None:
            nonlocal dealt
            writers[dealt % options.num_shards].write(record)
            per_shard[dealt % options.num_shards] += 1
            dealt += 1

        try:
            shuffle.drain(deal)
        finally:
            for writer in writers:
                writer.close()
    if dialogues == 0:
        raise ValueError(f"{input_path}: no dialogue passed pre-processing (merging consecutive turns: "
                         f"{options.merge_consecutive_turns}, at least {options.min_turns} turns)")
    if written == 0:
        raise ValueError(f"{input_path}: {dialogues} dialogues passed pre-processing but the {builder.name} "
                         f"builder made no example from them ({builder.describe()['params']}; e.g. windows "
                         "longer than every dialogue" + (f"; {too_long} examples were dropped for exceeding "
                                                         f"{options.max_length} tokens" if too_long else "") + ")")
    return {
        "builder": builder.describe(),
        "source": os.path.abspath(input_path),
        "source_fingerprint": file_fingerprint(input_path),
        "seed": options.seed,
        "example_order": SHUFFLED_ORDER,
        "max_length": options.max_length,
        "max_lengths": tokenizing.max_lengths,
        "dialogue_separator": options.dialogue_separator,
        "merge_consecutive_turns": options.merge_consecutive_turns,
        "min_turns": options.min_turns,
        "pool_dialogues": options.pool_dialogues,
        "vocab_sha256": vocab_sha256(tokenizer),
        "vocab_size": tokenizer.vocab_size,
        "lower_case": tokenizer.lower_case,
        "pad_id": tokenizer.pad_id,
        "counts": {
            "dialogues": dialogues,
            "dropped_under_min_turns": read[0] - dialogues,
            "skipped_lines": errors.skipped,
            "examples": written,
            "dropped_over_length": too_long,
            "cut_at_max_length": cut_examples,
            "tokens": tokens,
            "tokens_cut": tokens_cut,
            "per_shard": per_shard,
            "negative_pool": pool.memory() if pool else None,
        },
        "shards": names,
    }
