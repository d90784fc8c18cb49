"""Built examples as tf.train.Example protos: `serialize_example` writes a record of a schema
(`tfdialemb.data.records`), `parse_spec` reads it back with `tf.io.parse_example`."""
from typing import Dict, Mapping

import tensorflow as tf

from tfdialemb.data.records import (DIALOGUE_CHANNELS, DIALOGUE_LIST, DIALOGUE_TURNS, FLOAT, INT, KINDS, SEQUENCE,
                                    SEQUENCE_LIST)


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
