"""The `python -m tfdialemb.augment` command on any absl FlagValues: its flags and its main."""
import sys
from typing import Any, Callable, Counter, Mapping

from absl import flags

from tfdialemb.augment import flags as augment_flags
from tfdialemb.augment.augmented_file import Plan, augment_file
from tfdialemb.augment.operations import (
    build_operations,
    check_models,
    required_model_flags,
)
from tfdialemb.augment.presets import PRESETS, get_preset
from tfdialemb.core.cli import OVERWRITE, claim_output, report_error
from tfdialemb.core.progress import Progress


def define_flags(flag_values=flags.FLAGS) -> None:
    flags.DEFINE_string("input", None, "Canonical dialogue JSONL to augment.", flag_values=flag_values)
    flags.DEFINE_string("output", None, "Where to write the originals and their augmentations (JSONL).",
                        flag_values=flag_values)
    flags.DEFINE_enum("set", None, list(PRESETS), "Augmentation set (thesis Table 1).", flag_values=flag_values)
    flags.DEFINE_integer("views", 1, "Augmented views per operation and dialogue, each drawn afresh.",
                         lower_bound=1, flag_values=flag_values)
    flags.DEFINE_integer("seed", 0, "Seed of every random draw (per dialogue, operation and view).",
                         flag_values=flag_values)
    flags.DEFINE_integer("batch_size", 32, "Dialogues augmented together.", lower_bound=1, flag_values=flag_values)
    flags.DEFINE_integer("chunk_size", 512, "Dialogues per finished piece an interrupted run keeps.",
                         lower_bound=1, flag_values=flag_values)
    augment_flags.define_flags(flag_values)
    OVERWRITE.define(flag_values=flag_values)
    flags.mark_flags_as_required(["input", "output", "set"], flag_values=flag_values)


def augmentation_plan(input_path: str, output_path: str, set_name: str, given: Mapping[str, Any], seed: int = 0,
                      views: int = 1, batch_size: int = 32, chunk_size: int = 512):
    """The `augmented_file.Plan` of augmenting `input_path` with set `set_name` and the flag values
    `given` (`augment_flags.values`), once the models the set needs are checked (`check_models`);
    its fingerprint says what the output depends on, the models by their weights."""
    preset = get_preset(set_name)
    paths = augment_flags.model_paths(given)
    check_models(preset, paths)
    models = {flag: paths[flag] if isinstance(paths[flag], list) else [paths[flag]]
              for flag in required_model_flags(preset)}
    settings = {name: value for name, value in given.items() if name not in paths}
    return Plan(input_path, output_path, preset.operations, views=views, seed=seed, batch_size=batch_size,
                chunk_size=chunk_size, settings={"set": preset.name, **settings}, models=models)


def augment_to(input_path: str, output_path: str, set_name: str, given: Mapping[str, Any], load_model: Callable,
               seed: int = 0, views: int = 1, batch_size: int = 32, chunk_size: int = 512,
               overwrite: bool = False) -> Counter:
    """Checks the models `set_name` needs, then writes `output_path` from `input_path` with the
    flag values `given` (`augment_flags.values`), the similarity model opened by `load_model`
    (`operations.load_similarity`); the lines written by kind."""
    preset = get_preset(set_name)
    models = augment_flags.model_paths(given)
    plan = augmentation_plan(input_path, output_path, set_name, given, seed, views, batch_size, chunk_size)
    claim_output(output_path)

    def make_operations():
        return build_operations(preset, models, load_model, seed, augment_flags.operation_settings(given),
                                augment_flags.similarity_settings(given))

    def make_progress(total: int, done: int) -> Progress:
        if done:
            print(f"resuming from {plan.partial_dir}: {done} of {total} dialogues already done", file=sys.stderr)
        return Progress(total - done, "dialogues")

    counts = augment_file(plan, make_operations, overwrite, make_progress)
    written = ", ".join(f"{counts[name]} {name}" for name in preset.operations)
    print(f"wrote {sum(counts.values())} dialogues to {output_path}: {counts['original']} originals, {written}")
    return counts


def main(load_model: Callable, flag_values=flags.FLAGS) -> int:
    """Checks the models, then writes the file, the similarity model opened by `load_model`; the
    exit status (`cli.report_error`'s on failure)."""
    try:
        augment_to(flag_values.input, flag_values.output, flag_values.set, augment_flags.values(flag_values),
                   load_model, flag_values.seed, flag_values.views, flag_values.batch_size, flag_values.chunk_size,
                   flag_values.overwrite)
    except (OSError, ValueError) as e:
        return report_error(e)
    return 0
