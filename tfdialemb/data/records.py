"""TFRecord schema of built examples, and the manifest that makes a shard set complete.

Each feature has a kind:
  - "sequence": one token-id sequence, stored as an Int64List, parsed to [batch, (tokens)];
  - "sequence_list": several sequences (context turns, candidates), stored as `NAME/values` and
    `NAME/row_lengths`, parsed to [batch, (sequences), (tokens)];
  - "dialogue_list": several whole dialogues packed into one sequence each (dial2vec's positive
    and negatives), their token ids stored like a sequence_list plus `NAME/turn_ids` and
    `NAME/role_ids` aligned with `NAME/values`; parsed to `NAME`, `NAME_turn_ids` and
    `NAME_role_ids`, each [batch, (dialogues), (tokens)];
  - "dialogue_turns": several whole dialogues kept as turns (augcl's dialogue and its views, cut
    and joined only in the input pipeline): the token ids of every turn of every dialogue stored
    like a sequence_list (`NAME/values`, `NAME/row_lengths`, one row per turn, no special tokens),
    `NAME/roles` one role id per turn and `NAME/turn_counts` the turns of each dialogue; parsed
    to `NAME` [batch, (turns), (tokens)], `NAME_roles` [batch, (turns)] and `NAME_turn_counts`
    [batch, (dialogues)];
  - "int": one integer per example;
  - "float": one float32 per example (a regression target), stored as a FloatList.
A build directory holds `examples-SSSSS-of-NNNNN.tfrecord` shards and `manifest.json`, written last,
so a directory without a manifest is never a complete build.
"""
import json
import os
from typing import Dict, List, Mapping, Optional

import tensorflow as tf

SEQUENCE = "sequence"
SEQUENCE_LIST = "sequence_list"
DIALOGUE_LIST = "dialogue_list"
DIALOGUE_TURNS = "dialogue_turns"
INT = "int"
FLOAT = "float"
KINDS = (SEQUENCE, SEQUENCE_LIST, DIALOGUE_LIST, DIALOGUE_TURNS, INT, FLOAT)
# The parallel id channels of a dialogue_list feature besides its token ids.
DIALOGUE_CHANNELS = ("turn_ids", "role_ids")
MANIFEST = "manifest.json"
FORMAT_VERSION = 1


class IncompleteBuildError(FileNotFoundError):
    """A build directory that lacks its manifest or shards (missing, or interrupted)."""


def shard_name(index: int, count: int) -> str:
    return f"examples-{index:05d}-of-{count:05d}.tfrecord"


def serialize_example(features: Mapping, schema: Mapping[str, str]) -> bytes:
    """One tf.train.Example from token ids: lists for sequences, lists of lists for lists, for a
    dialogue list a list of (ids, turn_ids, role_ids) triples of equal-length lists, and for
    dialogue turns a list of dialogues, each a list of (role_id, ids) turns."""
    encoded = {}
    for name, kind in schema.items():
        value = features[name]
        if kind == SEQUENCE:
            encoded[name] = _ints(value)
        elif kind == SEQUENCE_LIST:
            encoded.update(_rows(name, value))
        elif kind == DIALOGUE_LIST:
            for ids, *channels in value:
                if any(len(channel) != len(ids) for channel in channels):
                    raise ValueError(f"feature {name!r}: turn and role ids must be as long as the token ids")
            encoded.update(_rows(name, [ids for ids, _, _ in value]))
            for position, channel in enumerate(DIALOGUE_CHANNELS, start=1):
                encoded[f"{name}/{channel}"] = _ints([i for row in value for i in row[position]])
        elif kind == DIALOGUE_TURNS:
            turns = [turn for dialogue in value for turn in dialogue]
            encoded.update(_rows(name, [ids for _, ids in turns]))
            encoded[f"{name}/roles"] = _ints([role for role, _ in turns])
            encoded[f"{name}/turn_counts"] = _ints([len(dialogue) for dialogue in value])
        elif kind == INT:
            encoded[name] = _ints([value])
        elif kind == FLOAT:
            encoded[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
        else:
            raise ValueError(f"feature {name!r} has unknown kind {kind!r}; expected one of {KINDS}")
    # Deterministic: the feature map in key order, so the same example gives the same bytes in
    # every process (protobuf's map order otherwise follows the per-process string hash seed).
    return tf.train.Example(features=tf.train.Features(feature=encoded)).SerializeToString(deterministic=True)


def parse_spec(schema: Mapping[str, str]) -> Dict[str, object]:
    """`tf.io.parse_example` features that give back what `serialize_example` stored."""
    spec = {}
    for name, kind in schema.items():
        if kind == SEQUENCE:
            spec[name] = tf.io.RaggedFeature(tf.int64, value_key=name, row_splits_dtype=tf.int64)
        elif kind == SEQUENCE_LIST:
            spec[name] = _row_feature(name, "values")
        elif kind == DIALOGUE_LIST:
            spec[name] = _row_feature(name, "values")
            for channel in DIALOGUE_CHANNELS:
                spec[f"{name}_{channel}"] = _row_feature(name, channel)
        elif kind == DIALOGUE_TURNS:
            spec[name] = _row_feature(name, "values")
            for channel in ("roles", "turn_counts"):
                spec[f"{name}_{channel}"] = tf.io.RaggedFeature(tf.int64, value_key=f"{name}/{channel}",
                                                                row_splits_dtype=tf.int64)
        elif kind == FLOAT:
            spec[name] = tf.io.FixedLenFeature([], tf.float32)
        else:
            spec[name] = tf.io.FixedLenFeature([], tf.int64)
    return spec


def write_manifest(directory: str, manifest: Mapping) -> None:
    """Writes the manifest with sorted keys, so equal builds give equal bytes."""
    tmp = os.path.join(directory, MANIFEST + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(dict(manifest, format_version=FORMAT_VERSION), f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(directory, MANIFEST))


def read_manifest(directory: str) -> Dict:
    """The manifest of a complete build; IncompleteBuildError names what is missing otherwise."""
    path = os.path.join(directory, MANIFEST)
    if not os.path.isfile(path):
        raise IncompleteBuildError(
            f"{directory}: no {MANIFEST}, so not a complete build (an interrupted build leaves "
            "none); build it with `python -m tfdialemb.data build`"
        )
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IncompleteBuildError(f"{path}: format_version {manifest.get('format_version')} is not {FORMAT_VERSION}")
    missing = [s for s in manifest["shards"] if not os.path.isfile(os.path.join(directory, s))]
    if missing:
        raise IncompleteBuildError(f"{directory}: shards named in {MANIFEST} are missing: {missing}")
    return manifest


def describe_cuts(manifest: Mapping) -> Optional[str]:
    """How much the cut at max_length left out of a build ("12 of 40 examples cut at 128 tokens,
    9.5% of the tokens left out"); None when nothing was cut, or the manifest does not say."""
    counts = manifest["counts"]
    if not counts.get("cut_at_max_length"):
        return None
    return (f"{counts['cut_at_max_length']} of {counts['examples']} examples cut at {manifest['max_length']} tokens, "
            f"{counts['tokens_cut'] / counts['tokens']:.1%} of the tokens left out")


def shard_paths(directory: str, manifest: Mapping) -> List[str]:
    return [os.path.join(directory, name) for name in manifest["shards"]]


def _rows(name: str, rows) -> Dict[str, tf.train.Feature]:
    """`NAME/values` and `NAME/row_lengths` of a list of id lists."""
    return {f"{name}/values": _ints([token for row in rows for token in row]),
            f"{name}/row_lengths": _ints([len(row) for row in rows])}


def _row_feature(name: str, values: str) -> tf.io.RaggedFeature:
    """[(rows), (tokens)] from `NAME/<values>` split by `NAME/row_lengths`."""
    return tf.io.RaggedFeature(
        tf.int64,
        value_key=f"{name}/{values}",
        partitions=[tf.io.RaggedFeature.RowLengths(f"{name}/row_lengths")],
        row_splits_dtype=tf.int64,
    )


def _ints(values) -> tf.train.Feature:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))
