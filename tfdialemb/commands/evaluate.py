r"""Evaluates an encoder on one of the papers' tasks: prints a table, writes a JSON report.

  python -m tfdialemb.evaluate --task=TASK --eval_file=PATH (--model_dir=DIR | --init_checkpoint=DIR) \
      [--output=report.json] [--json] [--embedding=SOURCE] [task flags]
  python -m tfdialemb.evaluate --task=sr|dsts --eval_file=PATH --saved_model=EXPORT_DIR [--output=report.json]
  python -m tfdialemb.evaluate --task=invariance --augmented_file=PATH (--model_dir=DIR | ...) [--output=report.json]

Each task is an evaluator (`tfdialemb.eval.evaluator`): DialogueCSE's `sr` and `dsts`, dial2vec's
`dialogue`, FGC's `response_selection` and `fgc_similarity`, the triple-encoders' `sequence_modeling`
and `stp`, the augmentation thesis' `probes`, `intent`, `invariance` and `context_response`
(docs/evaluation.md). --embedding picks what is embedded (`tfdialemb.eval.sources`): the
encoder, or a baseline needing no training loop (whitening, flow, glove, tfidf, lda, doc2vec,
plm_mean, utterance_average), those giving what the task scores. A flag of another task or another embedding is
refused; --helpfull names each flag's tasks.

--model_dir is a trained tfdialemb model: its method.json says how it was trained, so the method's
settings (--separator, --num_roles, --speaker_tokens, --merge_consecutive_turns, the curved kind)
come from there and a flag contradicting them is refused; --max_length and --pooling override the
record with a warning. --init_checkpoint is any checkpoint the project loads (Hugging Face BERT,
Google TF1 BERT), with the flags' values or their defaults. Encoders compute in float32 unless
--mixed_precision asks otherwise (an exported --saved_model in the precision it was exported
with). The report {"task", "eval_file", "checkpoint", "arguments" (the command line), "weights"
(the weights file evaluated, its SHA-256 and a training run's step), "settings" (the inference
settings the model was evaluated with: max length, pooling, ...), "mixed_precision" (the
encoder's; absent for an embedding without one), "embedding", "metrics", ...} is written
atomically to --output; the command prints a table of the task's headline metrics under the names
its paper uses, each marked ↑ (higher is better) or ↓, a row per model named by its directory's
last component (`tfdialemb.eval.table`), within 100 columns, or with --json the report itself.
--model_dir=A,B,C (or the flag repeated, --model_dir=A --model_dir=B; a value that is an existing
directory is one directory, commas and all) evaluates several models (checkpoint directories of
any kind) on the same task and settings, one loaded at a time: the report is a list of theirs and
the table compares them, a row per model (and view); a row evaluated with other settings than the
first row's (each model's record gives its own max length and pooling unless the flags fix them)
is marked † and its settings are named under the table.
Exit status: 0 done; 1 the eval or fit file has a bad line (file, line and reason are named);
2 the command is wrong (missing eval file or checkpoint, a file that is no such set, a flag the
task or embedding needs or does not use).
"""
import contextlib
import os
import sys
from typing import Dict, List, Optional

from absl import flags

from tfdialemb.core import precision

from tfdialemb.core import options
from tfdialemb.baselines import sources as _baselines  # noqa: F401  (registers the baselines' sources)
from tfdialemb.core.cli import ARGUMENTS, OVERWRITE, claim_output, report_error, run_command
from tfdialemb.eval.evaluator import OptionValues, evaluators, get_evaluator
from tfdialemb.eval.sources import get_source, source_options, sources
from tfdialemb.eval.table import results_table
from tfdialemb.core.files import check_output
from tfdialemb.inference_settings import (
    FINAL_SEPARATOR,
    MAX_LENGTH,
    MERGE_TURNS,
    NUM_ROLES,
    PAIR_LAYOUT,
    POOLING,
    SEPARATOR,
    SETTINGS,
    SPEAKER_PREFIX,
    SPEAKER_TOKENS,
)
from tfdialemb.kind_registry import KINDS
from tfdialemb.model_dir import ModelSource
from tfdialemb.core.reports import report_json, write_report

FLAGS = flags.FLAGS
flags.DEFINE_enum("task", None, sorted(evaluators()), "Evaluation task.")
flags.DEFINE_string("eval_file", None, "Evaluation set: released text file or converted JSONL "
                    "(every task but invariance).")
flags.DEFINE_multi_string("model_dir", None, "Trained tfdialemb model directory to evaluate, or several for one "
                          "comparison table (any checkpoint directory may be one of them): the flag repeated, or "
                          "comma-separated (a value that is an existing directory is one, commas and all).")
flags.DEFINE_string("init_checkpoint", None, "Any loadable checkpoint, e.g. an untrained BERT.")
flags.DEFINE_string("saved_model", None, "sr, dsts: an exported sentence SavedModel (`export "
                    "--kind=sentence`) instead of a checkpoint; its pooling and max length are fixed.")
flags.DEFINE_string("output", None, "Where to write the JSON report (several models: a list of reports).")
flags.DEFINE_boolean("json", False, "Print the JSON report instead of the table (scripts, `| jq`).")
flags.DEFINE_integer("batch_size", 64, "Sentences (dialogue task: dialogues / 4) per batch.",
                     lower_bound=1)
for _setting in (POOLING, MAX_LENGTH, SEPARATOR, NUM_ROLES, SPEAKER_PREFIX, FINAL_SEPARATOR, SPEAKER_TOKENS,
                 MERGE_TURNS, PAIR_LAYOUT):
    _setting.define()
precision.define_flags(default_policy=precision.INFERENCE_POLICY, jit_compile=False)
OVERWRITE.define()
flags.adopt_module_key_flags(options)
flags.DEFINE_enum("embedding", "encoder", list(sources()), "The encoder's embedding or a baseline (see the "
                  "task's list in docs/evaluation.md).")
options.define_all(source_options() + [(name, option) for name, evaluator in evaluators().items()
                                       for option in evaluator.options])
flags.mark_flags_as_required(["task"])
flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint", "saved_model"])


def option_values() -> OptionValues:
    """Every flag's value, and the names of those given on the command line."""
    return OptionValues({name: FLAGS[name].value for name in FLAGS},
                        given=[name for name in FLAGS if FLAGS[name].present])


def settings_kind() -> Optional[str]:
    """The inference kind whose settings (`tfdialemb.kind_registry`) the evaluation reads, or
    None for a baseline without a tfdialemb encoder."""
    return get_source(FLAGS.embedding).settings_kind(get_evaluator(FLAGS.task).kind)


def given_settings(kind: Optional[str]) -> Dict[str, object]:
    """The settings flags given on the command line that `kind` reads."""
    names = KINDS[kind].settings if kind else ()
    return {name: FLAGS[name].value for name in names if name in FLAGS and FLAGS[name].present}


def stray_option(evaluator, source) -> Optional[str]:
    """The first flag given that belongs to another --embedding or another --task, with its refusal."""
    own = {o.name for o in evaluator.options + source.options}
    of_sources = [o.name for s in sources().values() for o in s.options]
    of_tasks = [o.name for e in evaluators().values() for o in e.options]
    for name in dict.fromkeys(of_sources + of_tasks):
        if FLAGS[name].present and name not in own:
            refused = f"--embedding={source.name}" if name in of_sources else f"--task={evaluator.name}"
            return f"--{name} does not apply to {refused}"
    return None


def check_flags() -> None:
    """ValueError naming the flag that the task or --embedding needs, or would silently ignore."""
    evaluator, source, values = get_evaluator(FLAGS.task), get_source(FLAGS.embedding), option_values()
    task, kind = evaluator.name, source.name
    if not set(source.provided(values)) & set(evaluator.inputs):
        taken = [name for name, other in sources().items() if set(other.provided(values)) & set(evaluator.inputs)]
        raise ValueError(f"--task={task} takes --embedding in {', '.join(taken)}, not {kind}")
    if FLAGS.saved_model and not evaluator.serves_exported:
        exported = "|".join(name for name, e in evaluators().items() if e.serves_exported)
        raise ValueError(f"--saved_model serves sentence embeddings (--task={exported}), not --task={task}")
    source.check(values)
    if FLAGS["mixed_precision"].present and (not source.uses_encoder or FLAGS.saved_model):
        raise ValueError("--mixed_precision does not apply to "
                         + ("an exported --saved_model: it computes in the precision it was exported with"
                            if FLAGS.saved_model else f"--embedding={kind}, which uses no encoder"))
    if evaluator.reads != "eval_file" and (FLAGS.eval_file or not FLAGS[evaluator.reads].value):
        raise ValueError(f"--task={task} reads --{evaluator.reads} ({evaluator.reads_description}), not --eval_file")
    if evaluator.reads == "eval_file" and not FLAGS.eval_file:
        raise ValueError(f"--task={task} needs --eval_file")
    stray = stray_option(evaluator, source)
    if stray:
        raise ValueError(stray)
    read = () if FLAGS.saved_model else source.settings_read(source.settings_kind(evaluator.kind))
    for name in SETTINGS:
        if name in FLAGS and FLAGS[name].present and name not in read:
            raise ValueError(f"--{name} does not apply to --task={task} --embedding={kind}"
                             + evaluator.setting_hints.get(name, "")
                             + (": it is fixed in the exported --saved_model" if FLAGS.saved_model else ""))
    if source.required and not FLAGS[source.required].value:
        raise ValueError(f"--embedding={kind} needs --{source.required}")
    evaluator.check(values)
    if len(model_dirs()) > 1 and FLAGS["plot_dir"].value:
        raise ValueError("--plot_dir draws one model's plots: give one --model_dir with it")


def model_dirs() -> List[str]:
    """The directories of --model_dir: each value one directory when it is an existing one, else a
    comma-separated list of them."""
    paths = []
    for value in FLAGS.model_dir or []:
        paths += [value] if os.path.isdir(value) else [path.strip() for path in value.split(",") if path.strip()]
    return paths


def main(argv):
    del argv

    try:
        check_flags()
        evaluator = get_evaluator(FLAGS.task)
        if FLAGS.output:
            check_output(FLAGS.output, [FLAGS.eval_file, FLAGS["fit_file"].value, FLAGS["augmented_file"].value],
                         FLAGS.overwrite)
            claim_output(FLAGS.output)
        checkpoints = model_dirs() or [FLAGS.init_checkpoint]
        kind = settings_kind()
        models, settings = [], []
        for checkpoint in checkpoints:  # every record checked before the first model loads
            models.append(ModelSource(checkpoint) if checkpoint else None)
            settings.append(models[-1].settings(kind, given_settings(kind)) if kind and models[-1] else {})
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    precision.apply(FLAGS.mixed_precision)
    try:
        reports = []
        for checkpoint, model, setting in zip(checkpoints, models, settings):
            with model or contextlib.nullcontext():  # each model released after its report
                reports.append(evaluate_model(evaluator, checkpoint, model, setting))
    except (OSError, ValueError) as e:
        return report_error(e)
    report = reports[0] if len(reports) == 1 else reports
    text = write_report(FLAGS.output, report) if FLAGS.output else report_json(report) if FLAGS.json else None
    print(text if FLAGS.json else results_table(reports))
    return 0


def evaluate_model(evaluator, checkpoint: Optional[str], model: Optional[ModelSource], settings: dict) -> dict:
    """The report of `evaluator` for one checkpoint (None: a baseline without one); it records the
    command's arguments and the weights evaluated (`weights_fingerprint`: the file, its SHA-256,
    a training run's step), so a recipe can tell a report of other weights or flags."""
    from tfdialemb.encoders.checkpoint import weights_fingerprint  # pylint: disable=import-outside-toplevel

    values = option_values()
    source = get_source(FLAGS.embedding)(model, settings, values)
    eval_file = FLAGS[evaluator.reads].value
    evaluated = checkpoint or FLAGS.saved_model
    report = {"task": evaluator.name, evaluator.reads: eval_file, "checkpoint": evaluated,
              "arguments": list(ARGUMENTS), "weights": weights_fingerprint(evaluated) if evaluated else None}
    if source.uses_encoder:
        report["mixed_precision"] = None if FLAGS.saved_model else precision.resolve(FLAGS.mixed_precision)
    if model and model.method:
        report["method"] = model.method
    if settings:
        report["settings"] = dict(settings)
    report.update(evaluator(source, eval_file, values))
    if FLAGS.saved_model:
        report["mixed_precision"] = source.exported.policy
    return report


def run():
    run_command(main, __name__)


if __name__ == "__main__":
    run()
