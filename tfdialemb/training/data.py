"""Training data for a run: a built shard directory, or a canonical JSONL built on the fly.

A JSONL is built (seeded) into the model directory once; a restarted run finds the same build
and reuses it, so resuming never rebuilds, and a run whose flags would build different examples
is refused rather than silently mixed.
"""
import datetime
import os
from typing import Callable, Dict, Optional

from tfdialemb.data.build import BuildOptions, build, vocab_sha256
from tfdialemb.data.examples import ExampleBuilder
from tfdialemb.data.pipeline import LENGTH_BOUNDARIES, make_dataset
from tfdialemb.data.records import DIALOGUE_LIST, MANIFEST, read_manifest
from tfdialemb.core.inputs import check_input_file
from tfdialemb.dialogue import ErrorPolicy
from tfdialemb.core.files import file_fingerprint
from tfdialemb.method_record import setting_differences
from tfdialemb.text.tokenizer import BertTokenizer


def check_same_source(train_file: str, data_dir: str, manifest: Dict) -> None:
    """ValueError when `train_file` is no longer the file `data_dir` was built from (replaced or
    edited under the same name), naming both fingerprints."""
    built_from = manifest.get("source_fingerprint")
    now = file_fingerprint(train_file)
    if built_from is not None and built_from["sha256"] != now["sha256"]:
        def describe(print_):
            return (f"{print_['size']} bytes, sha256 {print_['sha256'][:12]}…, modified "
                    f"{datetime.datetime.fromtimestamp(print_['mtime']).isoformat(timespec='seconds')}")
        raise ValueError(f"{train_file}: changed since {data_dir} was built from it (then {describe(built_from)}; "
                         f"now {describe(now)}); use a new --model_dir to train on the new file")


def prepare(train_file: str, data_dir: str, builder: ExampleBuilder, tokenizer: BertTokenizer,
            options: BuildOptions, errors: ErrorPolicy, on_dialogue: Optional[Callable[[int], None]] = None) -> Dict:
    """The manifest of the shards to train on; builds `train_file` into `data_dir` if needed,
    telling `on_dialogue(n)` as the build reads dialogues into examples."""
    if os.path.isdir(train_file):
        manifest = read_manifest(train_file)
        source = train_file
        built_with = manifest.get("dialogue_separator", "[SEP]")
        if DIALOGUE_LIST in manifest["builder"]["schema"].values() and built_with != options.dialogue_separator:
            raise ValueError(f"{source}: dialogues were packed with {built_with} between turns, but this "
                             f"run asks for {options.dialogue_separator}; pass the build's separator")
        if manifest["max_length"] != options.max_length:  # the shards' length is the one trained and recorded
            raise ValueError(f"{source}: built with max_length {manifest['max_length']}, not the {options.max_length} "
                             f"this run uses; pass --max_length={manifest['max_length']}, or rebuild it")
        stored = manifest["builder"]["params"].get("negatives")
        wanted = getattr(builder.params, "negatives", None)
        if stored is not None and wanted is not None and stored < wanted:
            raise ValueError(f"{source}: stores {stored} negatives per example, fewer than the {wanted} "
                             "this run uses; rebuild it or lower --negatives")
    else:
        check_input_file(train_file, "training file")
        if os.path.isfile(os.path.join(data_dir, MANIFEST)):
            manifest = read_manifest(data_dir)
            if manifest.get("source") == os.path.abspath(train_file):  # another file is named below
                check_same_source(train_file, data_dir, manifest)
            expected = {"source": os.path.abspath(train_file), "seed": options.seed,
                        "max_length": options.max_length, "builder": builder.describe(),
                        "dialogue_separator": options.dialogue_separator}
            if builder.uses_pool:
                expected["pool_dialogues"] = options.pool_dialogues
            found = {key: manifest.get(key, "[SEP]" if key == "dialogue_separator" else None)
                     for key in expected}
            differ = setting_differences(found, expected)
            if differ:
                raise ValueError(
                    f"{data_dir}: holds examples built otherwise ({'; '.join(differ)}); "
                    "use a new --model_dir (or the same flags to resume)")
        else:
            manifest = build(train_file, data_dir, builder, tokenizer, options, errors, on_dialogue)
        source = data_dir
    if manifest["builder"]["method"] != builder.name:
        raise ValueError(f"{source}: built for method {manifest['builder']['method']!r}, not {builder.name!r}")
    if manifest["vocab_sha256"] != vocab_sha256(tokenizer):
        raise ValueError(f"{source}: built with another vocabulary than the checkpoint's vocab.txt; rebuild it")
    manifest["directory"] = source
    return manifest


def training_batches(directory: str, batch_size: int, seed: int, bucket_by_length: bool = False, context=None):
    """The endless batches a training run reads from the build in `directory`: epoch after epoch,
    each in a fresh seeded order of uniformly drawn full batches, or with `bucket_by_length` of
    batches grouped by length class (`make_dataset`)."""
    return make_dataset(directory, batch_size, training=True, input_context=context, seed=seed, repeat=True,
                        bucket_boundaries=LENGTH_BOUNDARIES if bucket_by_length else None)
