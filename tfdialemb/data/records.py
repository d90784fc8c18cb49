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
