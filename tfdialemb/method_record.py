"""The record of a model directory (`method.json`, like sentence-transformers' `modules.json`):
what a training run was, written beside its checkpoints.

Training writes the method and its resolved options, the example builder and its parameters, what
identifies the examples it built (the source's SHA-256, the seed, their number), the
pre-processing (merged turns, minimum turns, max length, packing separator, casing, special-token
mapping), the encoder's start and options, the training settings, and per inference kind the
settings inference must repeat (`tfdialemb.inference_settings`). Reading it needs no model:
`tfdialemb.model_dir` rebuilds the trained model from it.
"""
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional

from tfdialemb.core.files import atomic_open
from tfdialemb.kind_registry import KINDS, RENAMED_KINDS
from tfdialemb.core.options import current_option_names

METHOD_CONFIG = "method.json"
VALIDATION_HISTORY = "validation.jsonl"
"""One JSON line per validation of a training run: {"step": N, metric: value, ...}."""
FORMAT_VERSION = 1
COMPARED_ON_RESUME = ("method", "params", "builder", "data", "preprocessing", "encoder_options")
"""What a resumed run must share with the run that wrote the directory; training settings
(steps, learning rate, ...) may change between runs, except COMPARED_TRAINING."""
COMPARED_TRAINING = ("freeze_layers", "batch_size", "bucket_by_length")
"""The training settings a resumed run must share too: the checkpoints hold optimizer slots for
the variables the first run trained, listed in order, which another freezing cannot restore; and
a resumed run skips the batches the first run read, which only batches of its size and grouping
skip exactly."""


def method_config(spec, params: Mapping[str, Any], manifest: Mapping[str, Any], tokenizer,
                  encoder_options: Mapping[str, Any], training: Mapping[str, Any],
                  declared_inference: Mapping[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """The `method.json` of a run of `spec` (a `tfdialemb.methods.spec.MethodSpec`) with `params`
    on the build described by `manifest`; `declared_inference` is what the spec's
    `inference_settings` declares for `params`."""
    preprocessing = {
        "merge_consecutive_turns": manifest["merge_consecutive_turns"],
        "min_turns": manifest["min_turns"],
        "max_length": manifest["max_length"],
        "dialogue_separator": manifest.get("dialogue_separator", "[SEP]"),
        "lower_case": tokenizer.lower_case,
        "special_tokens": dict(tokenizer.special_tokens),
    }
    inference = {}
    for kind in spec.offers:
        settings = {"max_length": manifest["max_length"]}
        if "merge_consecutive_turns" in KINDS[kind].settings:
            settings["merge_consecutive_turns"] = manifest["merge_consecutive_turns"]
        settings.update(declared_inference.get(kind, {}))
        inference[kind] = settings
    return {
        "format_version": FORMAT_VERSION,
        "method": spec.name,
        "paper": spec.paper,
        "params": dict(params),
        "builder": manifest["builder"],
        "data": {"source_sha256": (manifest.get("source_fingerprint") or {}).get("sha256"),
                 "seed": manifest.get("seed"), "examples": manifest["counts"]["examples"]},
        "preprocessing": preprocessing,
        "encoder_options": dict(encoder_options),
        "training": dict(training),
        "inference": inference,
    }


def read_method_config(directory: str) -> Optional[Dict[str, Any]]:
    """The `method.json` of `directory`, or None when it has none (any other checkpoint)."""
    path = os.path.join(directory, METHOD_CONFIG)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(config, dict) or config.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: format_version {config.get('format_version') if isinstance(config, dict) else None} "
                         f"is not {FORMAT_VERSION}")
    if isinstance(config.get("params"), dict):
        config["params"] = current_option_names(config["params"])
    config["inference"] = {RENAMED_KINDS.get(kind, kind): current_option_names(settings)
                           for kind, settings in config.get("inference", {}).items()}
    return config


def trained_method_name(directory: str) -> Optional[str]:
    """The method a tfdialemb model directory was trained with, or None."""
    config = read_method_config(directory) if directory and os.path.isdir(directory) else None
    return config["method"] if config else None


def write_method_config(directory: str, config: Mapping[str, Any],
                        complete_params: Optional[Callable[[Mapping[str, Any]], Mapping[str, Any]]] = None) -> None:
    """Writes `config` as DIR/method.json; a directory written by another run must describe the
    same method, options and build, or a ValueError names what differs (`check_method_config`)."""
    check_method_config(directory, config, complete_params)
    with atomic_open(os.path.join(directory, METHOD_CONFIG)) as f:
        f.write(json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def check_method_config(directory: str, config: Mapping[str, Any],
                        complete_params: Optional[Callable[[Mapping[str, Any]], Mapping[str, Any]]] = None) -> None:
    """A ValueError naming what differs when DIR/method.json describes another method, options or
    build than `config`, which a run resuming in DIR must share (`recorded_run`, `refuse_other_run`)."""
    existing = recorded_run(directory, config.get("method"), complete_params)
    if existing is not None:
        refuse_other_run(directory, existing, config)


def recorded_run(directory: str, method: Optional[str],
                 complete_params: Optional[Callable[[Mapping[str, Any]], Mapping[str, Any]]] = None
                 ) -> Optional[Dict[str, Any]]:
    """DIR/method.json, or None. `complete_params` (the method spec's `from_record`) gives the
    options of a record of `method` their defaults where the record lacks them: a record written
    before an option existed was trained as its default trains."""
    existing = read_method_config(directory)
    if existing is not None and complete_params is not None and existing.get("method") == method:
        existing = {**existing, "params": dict(complete_params(existing.get("params") or {}))}
    return existing


def refuse_other_run(directory: str, existing: Mapping[str, Any], config: Mapping[str, Any]) -> None:
    """A ValueError naming what `config` does otherwise than the run recorded as `existing` in
    `directory`, among what a resumed run must share; what `config` does not hold yet (the
    data, before it is built) is not compared."""
    there, now = _compared_on_resume(existing), _compared_on_resume(config)
    for key in COMPARED_ON_RESUME:
        if key not in config or (key == "data" and there[key] is None):  # not known yet, or a record before "data"
            del there[key], now[key]
    differ = setting_differences(there, now)
    if differ:
        raise ValueError(f"{directory}: holds a model trained otherwise ({'; '.join(differ)}); use a new "
                         "--model_dir, or the same flags to resume")


def _compared_on_resume(config: Mapping[str, Any]) -> Dict[str, Any]:
    training = config.get("training") or {}
    return {**{key: config.get(key) for key in COMPARED_ON_RESUME},
            "training": {key: training.get(key) for key in COMPARED_TRAINING}}


def setting_differences(there: Mapping[str, Any], now: Mapping[str, Any], prefix: str = "") -> List[str]:
    """"name: A there, B now" for each setting that differs, nested dictionaries compared key by
    key (`params.temperature: 0.1 there, 0.2 now`), so a refused resume names only what changed."""
    differences = []
    for key in list(there) + [k for k in now if k not in there]:
        name = f"{prefix}{key}"
        before, after = there.get(key), now.get(key)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            differences.extend(setting_differences(before, after, f"{name}."))
        elif before != after:
            differences.append(f"{name}: {before} there, {after} now")
    return differences


def recorded_settings(config: Mapping[str, Any], kind: str) -> Dict[str, Any]:
    """The settings `config` records for inference `kind`: the kind's own when the method offers
    it, else only the pre-processing every dialogue kind repeats and, for the curved kind, no
    [O] / [E] speaker tokens, which only the curved methods train with (a model that never saw
    them would be scored on texts it was not trained on)."""
    if kind in config["inference"]:
        return dict(config["inference"][kind])
    recorded: Dict[str, Any] = {}
    if "merge_consecutive_turns" in KINDS[kind].settings:
        recorded["merge_consecutive_turns"] = config["preprocessing"]["merge_consecutive_turns"]
    if "speaker_tokens" in KINDS[kind].settings:
        recorded["speaker_tokens"] = False
    return recorded
