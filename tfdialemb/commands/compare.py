r"""Compares training configurations over seeds: is one better than the baseline, or is the
difference within what another seed would give?

  python -m tfdialemb.compare --config=NAME=FLAGFILE --config='NAME=--method=mge --turns=3' [--config=...] \
      --seeds=0,1,2 --train_file=train.jsonl --init_checkpoint=DIR --max_steps=N [any train flag] \
      --task=TASK --eval_file=PATH [--evaluate_flag=--fit_file=PATH ...] --output_dir=DIR \
      [--allow_differences=max_length,...]

Each --config is a name, then either a flagfile of `tfdialemb.train` or train flags starting with
`--` (split as a shell splits them); the first is the baseline. The train flags given to this
command itself (--train_file, --init_checkpoint, --max_steps, any other) are shared: they follow
each configuration's flags on its training command line, so they override them. Every
configuration is trained once per seed by `python -m tfdialemb.train ... --seed=S
--model_dir=OUTPUT_DIR/NAME/seed-S` and its model evaluated by `python -m tfdialemb.evaluate
--task=TASK --eval_file=PATH --model_dir=...`, each in a fresh process.

Before anything runs, each configuration's flags are resolved as train resolves them (given,
else the method's default, else the library's): two configurations that differ in a setting other
than the method and its options (--max_length, --batch_size, --learning_rate, the run's length,
--train_file, --init_checkpoint, ...) are refused, naming the flag and the values, unless
--allow_differences names it. Settings that leave the trained weights as they are (how often a
run saves, logs or validates, where it runs) are not compared.

The table gives, per headline metric of the task (as `evaluate` prints them), each
configuration's mean over seeds with a 90% percentile bootstrap interval (10,000 seeded
resamples), and each configuration against the baseline: the mean of the per-seed differences,
its interval and a verdict in the metric's direction (the evaluator's: some are lower-is-better)
— better or worse when the interval excludes 0, else no detectable difference at K seeds. Below
3 seeds there is no interval and no verdict. OUTPUT_DIR/report.json (written atomically) holds
every run's metrics, commands and wall time, the summaries and the differences.

A run's result is written atomically as it finishes (OUTPUT_DIR/NAME/seed-S.result.json), so a
comparison stopped on the way and run again with the same command skips the runs recorded, and a
run stopped during training resumes from its last checkpoint (train's own resume).
Exit status: 0 done; 2 the command is wrong (fewer than two configurations, an unknown task, a
missing file, configurations differing in a setting); 1 a training or evaluation failed.
"""
import copy
import json
import math
import os
import re
import shlex
import sys
import time
from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence, Tuple

from absl import flags

from tfdialemb.core.cli import parse_arguments, run_command
from tfdialemb.commands.steps import evaluation_metrics, run_step
from tfdialemb.eval.evaluator import Evaluator, get_evaluator
from tfdialemb.eval.seed_statistics import CONFIDENCE, MIN_SEEDS, RESAMPLES, paired_difference, summary
from tfdialemb.core.files import check_writable
from tfdialemb.methods.spec import all_specs, get_method
from tfdialemb.core.reports import write_report
from tfdialemb.training import flags as training_flags
from tfdialemb.training.settings import TRAINING_DEFAULTS, shared_settings, stray_options

FLAGS = flags.FLAGS
COMMAND = "train"
SET_HERE = ("seed", "model_dir")
"""Train flags this command sets for each run (--seeds, --output_dir), after the configuration's
flags: a flagfile's own --model_dir is overridden."""
NOT_MEASURED = ("checkpoint_every", "log_every", "strategy", "devices", "collective_timeout", "validate_task",
                "validate_file", "validate_every", "validate_label_key", "validate_mixed_precision")
"""Train flags that leave the trained weights as they are: how often a run saves and logs, where it
runs, what it validates on (the final weights are evaluated, not the best kept)."""
CONFIG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
REPORT = "report.json"
RESULT_SUFFIX = ".result.json"
_train_flag_names: List[str] = []


def define_flags() -> None:
    """The command's own flags, then every flag of `tfdialemb.train` (shared by the configurations)."""
    flags.DEFINE_multi_string("config", None, "A configuration: NAME=FLAGFILE (a train flagfile) or "
                              "'NAME=--method=... --option=...' (train flags); repeat for each, the first is the "
                              "baseline.")
    flags.DEFINE_list("seeds", ["0", "1", "2"], "Seeds each configuration trains with (train's --seed); the "
                      f"intervals and verdicts need at least {MIN_SEEDS}.")
    flags.DEFINE_string("task", None, "Evaluation task, as `evaluate --task`.")
    flags.DEFINE_string("eval_file", None, "Held-out set every model is evaluated on, as `evaluate --eval_file`.")
    flags.DEFINE_multi_string("evaluate_flag", [], "A flag added to every evaluate command (e.g. "
                              "--evaluate_flag=--fit_file=train.jsonl); repeatable.")
    flags.DEFINE_string("output_dir", None, "Where the models (NAME/seed-S), their results and report.json go.")
    flags.DEFINE_list("allow_differences", [], "Train settings the configurations may differ in besides the "
                      "method and its options, e.g. max_length,batch_size.")
    before = set(FLAGS)
    training_flags.define_flags(COMMAND)
    _train_flag_names[:] = sorted(set(FLAGS) - before)
    for module in training_flags.flag_modules():
        flags.adopt_module_key_flags(module)


def parse_configurations(values: Sequence[str]) -> Dict[str, List[str]]:
    """NAME → its train arguments, from the --config values (a flagfile becomes --flagfile=PATH)."""
    configurations: Dict[str, List[str]] = {}
    for value in values:
        name, equals, body = value.partition("=")
        body = body.strip()
        if not equals or not CONFIG_NAME.fullmatch(name):
            raise ValueError(f"--config={value}: give NAME=FLAGFILE or 'NAME=--flag=value ...', NAME of letters, "
                             "digits, '_', '.' and '-'")
        if name in configurations:
            raise ValueError(f"--config: {name} is named twice")
        if body.startswith("-"):
            try:
                configurations[name] = shlex.split(body)
            except ValueError as e:  # an unclosed quote
                raise ValueError(f"--config={name}: {e}") from None
        elif os.path.isfile(body):
            configurations[name] = [f"--flagfile={body}"]
        else:
            raise ValueError(f"--config={name}: {body or 'nothing'}: no such flagfile (train flags start with --)")
    if len(configurations) < 2:
        raise ValueError(f"give at least two --config to compare ({len(configurations)} given)")
    return configurations


def parse_seeds(values: Sequence[str]) -> List[int]:
    """The --seeds as numbers, each once: every configuration runs every seed, paired by it."""
    try:
        seeds = [int(value) for value in values]
    except ValueError:
        raise ValueError(f"--seeds={','.join(values)}: give whole numbers, e.g. --seeds=0,1,2") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds={','.join(values)}: give one or more different seeds")
    return seeds


def shared_arguments(flag_values, names: Collection[str]) -> List[str]:
    """The train flags given to this command, as arguments every training command ends with."""
    given = [name for name in names if flag_values[name].present]
    fixed = [name for name in given if name in SET_HERE]
    if fixed:
        raise ValueError(f"--{fixed[0]} is set per run here: give --seeds and --output_dir")
    return [line for name in given for line in flag_values[name].serialize().split("\n")]


def resolve_configuration(name: str, arguments: Sequence[str], shared: Sequence[str], template,
                          names: Collection[str]) -> Dict[str, Any]:
    """Every train flag's value as `train ARGUMENTS SHARED` would use it (given, else the method's
    default, else the library's), parsed into a copy of `template` (flag values holding train's
    flags `names`); a ValueError names the configuration and what train would refuse."""
    values = copy.deepcopy(template)
    values.unparse_flags()
    try:
        left, _ = parse_arguments([COMMAND, *arguments, *shared], values)
    except (flags.Error, ValueError) as e:
        raise ValueError(f"--config={name}: {e}") from None
    if len(left) > 1:
        raise ValueError(f"--config={name}: {' '.join(left[1:])}: not a flag")
    given = list(dict.fromkeys(values[flag].name for flag in values if values[flag].present))
    foreign = [flag for flag in given if flag not in names and flag != "verbose"]
    if foreign:
        raise ValueError(f"--config={name}: --{foreign[0]} is not a flag of tfdialemb.train")
    if values.method is None:
        raise ValueError(f"--config={name}: names no --method")
    spec = get_method(values.method)
    stray = stray_options(spec, COMMAND, values)
    if stray:
        raise ValueError(f"--config={name}: {', '.join('--' + n for n in stray)} do(es) not apply to "
                         f"--method={spec.name}")
    resolved = {flag: values[flag].value for flag in names}
    resolved.update(shared_settings(spec, values))
    if resolved["freeze_layers"] is None:
        resolved["freeze_layers"] = spec.defaults.get("freeze_layers", TRAINING_DEFAULTS["freeze_layers"])
    return resolved


def compared_flags() -> List[str]:
    """What the configurations compare: the method and the options of every method."""
    return ["method", *sorted({option.name for spec in all_specs(COMMAND) for option in spec.options})]


def setting_differences(resolved: Mapping[str, Mapping[str, Any]],
                        compared: Collection[str]) -> Dict[str, Dict[str, Any]]:
    """flag → {configuration: value} of each setting whose value is not the same in every
    configuration, the `compared` flags and those NOT_MEASURED left out."""
    first = next(iter(resolved.values()))
    differences = {}
    for flag in first:
        if flag in compared or flag in NOT_MEASURED or flag in SET_HERE:
            continue
        values = {name: settings[flag] for name, settings in resolved.items()}
        if len({repr(value) for value in values.values()}) > 1:
            differences[flag] = values
    return differences


def check_differences(differences: Mapping[str, Mapping[str, Any]], allowed: Collection[str]) -> None:
    """A ValueError naming each differing setting and its values that `allowed` does not name."""
    refused = {flag: values for flag, values in differences.items() if flag not in allowed}
    if refused:
        described = "; ".join(f"--{flag} ({', '.join(f'{name}: {value}' for name, value in values.items())})"
                              for flag, values in refused.items())
        raise ValueError(f"the configurations differ in settings that change what is measured: {described}; make them "
                         f"alike, or pass --allow_differences={','.join(refused)} to compare them anyway")


class Run:
    """One configuration trained with one seed and evaluated: its commands and where it writes."""

    def __init__(self, config: str, seed: int, arguments: Sequence[str], shared: Sequence[str],
                 evaluate: Sequence[str], output_dir: str):
        self.config, self.seed = config, seed
        base = os.path.join(output_dir, config, f"seed-{seed}")
        self.model_dir, self.result, self.report = base, base + RESULT_SUFFIX, base + ".evaluation.json"
        self.train = ["tfdialemb.train", *arguments, *shared, f"--seed={seed}", f"--model_dir={base}"]
        self.evaluate = [*evaluate, f"--model_dir={base}"]

    def commands(self) -> Dict[str, List[str]]:
        """The argument lists of `python -m` for training and evaluation, as they run."""
        return {"train": list(self.train), "evaluate": ["tfdialemb.evaluate", *self.evaluate,
                                                        f"--output={self.report}"]}

    def recorded(self) -> Optional[dict]:
        """The result written when this run finished with these very commands, else None."""
        try:
            with open(self.result, encoding="utf-8") as f:
                found = json.load(f)
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) and found.get("commands") == self.commands() else None

    def execute(self) -> dict:
        """Trains (resuming a stopped run), evaluates, and writes the result atomically."""
        started = time.time()
        run_step(*self.train)
        metrics = evaluation_metrics(self.report, *self.evaluate)
        result = {"config": self.config, "seed": self.seed, "model_dir": self.model_dir,
                  "commands": self.commands(), "metrics": metrics, "wall_time_s": round(time.time() - started, 3)}
        write_report(self.result, result)
        return result


def execute_runs(runs: Sequence[Run]) -> List[dict]:
    """Each run's result, recorded or run now, with a line saying which run of how many and its time."""
    results = []
    for index, run in enumerate(runs, start=1):
        label = f"[{index}/{len(runs)}] {run.config}, seed {run.seed}"
        result = run.recorded()
        if result:
            print(f"\n{label}: recorded in {run.result} (it took {result['wall_time_s']:.0f} s), skipped", flush=True)
        else:
            print(f"\n{label}: training and evaluating into {run.model_dir}", flush=True)
            result = run.execute()
            print(f"{label}: done in {result['wall_time_s']:.0f} s", flush=True)
        results.append(result)
    return results


def headline_values(evaluator: Evaluator, metrics: Mapping[str, Any]) -> Dict[str, Tuple[str, str, Any]]:
    """metric id → (metric key, column name, value) of the task's headline metrics in a report's
    metrics, a set per view for a task with views ("view/key", "name [view]")."""
    if not evaluator.per_view:
        return {key: (key, column, metrics.get(key)) for key, column in evaluator.columns(metrics)}
    return {f"{view}/{key}": (key, f"{column} [{view}]", values.get(key))
            for view, values in metrics[evaluator.per_view].items() for key, column in evaluator.columns(values)}


def finite(value: Any) -> bool:
    """Whether `value` is a number a summary can use (not None, NaN, an infinity or a flag)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def summarise(evaluator: Evaluator, configs: Sequence[str], seeds: Sequence[int],
              results: Sequence[Mapping[str, Any]]) -> Dict[str, dict]:
    """metric id → {"metric", "column", "greater_is_better", "configurations": {NAME: summary},
    "differences": {NAME: paired difference against the first}}; a metric that is not a finite
    number in every run gets "undefined" naming the runs instead of figures."""
    by_run = {(r["config"], r["seed"]): headline_values(evaluator, r["metrics"]) for r in results}
    metric_ids = list(dict.fromkeys(metric for values in by_run.values() for metric in values))
    summaries = {}
    for metric in metric_ids:
        key, column = next((values[metric][0], values[metric][1]) for values in by_run.values() if metric in values)
        higher = evaluator.metric_greater_is_better(key)
        entry: Dict[str, Any] = {"metric": key, "column": column, "greater_is_better": higher}
        undefined = [f"{config} seed {seed}" for config in configs for seed in seeds
                     if not finite(by_run[(config, seed)].get(metric, (None, None, None))[2])]
        if undefined:
            entry["undefined"] = undefined
        else:
            values = {config: [float(by_run[(config, seed)][metric][2]) for seed in seeds] for config in configs}
            entry["configurations"] = {config: summary(values[config]) for config in configs}
            entry["differences"] = {config: paired_difference(values[config], values[configs[0]], higher)
                                    for config in configs[1:]}
        summaries[metric] = entry
    return summaries


def _interval(interval: Optional[Sequence[float]], signed: bool = False) -> str:
    if interval is None:
        return "n/a"
    form = "+.4f" if signed else ".4f"
    return f"[{interval[0]:{form}}, {interval[1]:{form}}]"


def comparison_table(summaries: Mapping[str, Mapping[str, Any]], configs: Sequence[str], seeds: Sequence[int],
                     title: str) -> str:
    """The summaries as text: a block per metric, a row per configuration, the baseline first."""
    names = max(len(name) for name in configs) + 2
    baseline = configs[0]
    lines = [title, f"{len(seeds)} seeds ({', '.join(map(str, seeds))}); mean and {CONFIDENCE:.0%} bootstrap interval "
                    f"over seeds ({RESAMPLES:,} resamples); differences paired by seed against {baseline}"]
    if len(seeds) < MIN_SEEDS:
        lines.append(f"with {len(seeds)} seeds an interval is not meaningful: none is given, and no verdict "
                     f"(at least {MIN_SEEDS} seeds)")
    header = (f"{'':{names}}{'mean':>10}  {'interval':<20}  {'difference':>10}  {'interval':<22}  verdict")
    for entry in summaries.values():
        lines += ["", f"{entry['column']} ({'higher' if entry['greater_is_better'] else 'lower'} is better)"]
        if "undefined" in entry:
            lines.append(f"  not a number in {', '.join(entry['undefined'])}: no summary")
            continue
        lines.append(header)
        for config in configs:
            found = entry["configurations"][config]
            row = f"{config:{names}}{found['mean']:>10.4f}  {_interval(found['interval']):<20}"
            if config != baseline:
                difference = entry["differences"][config]
                row += (f"  {difference['mean']:>+10.4f}  {_interval(difference['interval'], signed=True):<22}  "
                        f"{difference['verdict'] if difference['interval'] else 'no verdict'}")
            lines.append(row.rstrip())
    return "\n".join(lines)


def check_inputs(evaluator: Evaluator, resolved: Mapping[str, Mapping[str, Any]]) -> None:
    """A ValueError naming a missing setting or file, before anything runs."""
    if evaluator.reads == "eval_file":
        if not FLAGS.eval_file:
            raise ValueError(f"--task={evaluator.name} needs --eval_file")
        if not os.path.isfile(FLAGS.eval_file):
            raise ValueError(f"--eval_file={FLAGS.eval_file}: no such file")
    elif FLAGS.eval_file:
        raise ValueError(f"--task={evaluator.name} reads --{evaluator.reads}, not --eval_file: give "
                         f"--evaluate_flag=--{evaluator.reads}=PATH")
    for name, settings in resolved.items():
        for flag in ("train_file", "init_checkpoint"):
            if not settings[flag]:
                raise ValueError(f"--config={name}: no --{flag} (give it to this command, shared)")
            if not os.path.exists(settings[flag]):
                raise ValueError(f"--{flag}={settings[flag]}: no such file or directory")
        if not settings["max_steps"] and not settings["num_epochs"]:
            raise ValueError(f"--config={name}: give --max_steps or --num_epochs")


def plan() -> Tuple[Evaluator, List[str], List[int], List[Run], Dict[str, Any]]:
    """(evaluator, configuration names, seeds, the runs, what the report records of the setup),
    every check made first."""
    if not FLAGS.output_dir:
        raise ValueError("missing --output_dir")
    if not FLAGS.task:
        raise ValueError("missing --task")
    evaluator = get_evaluator(FLAGS.task)
    configurations = parse_configurations(FLAGS.config or [])
    seeds = parse_seeds(FLAGS.seeds)
    shared = shared_arguments(FLAGS, _train_flag_names)
    compared = compared_flags()
    unknown = [flag for flag in FLAGS.allow_differences
               if flag not in _train_flag_names or flag in compared or flag in SET_HERE]
    if unknown:
        raise ValueError(f"--allow_differences: {', '.join(unknown)}: not a train setting (the method and its "
                         "options may always differ)")
    resolved = {name: resolve_configuration(name, arguments, shared, FLAGS, _train_flag_names)
                for name, arguments in configurations.items()}
    check_inputs(evaluator, resolved)
    differences = setting_differences(resolved, compared)
    check_differences(differences, FLAGS.allow_differences)
    check_writable(FLAGS.output_dir, directory_output=True)
    evaluate = [f"--task={evaluator.name}", *([f"--eval_file={FLAGS.eval_file}"] if FLAGS.eval_file else []),
                *FLAGS.evaluate_flag]
    runs = [Run(name, seed, configurations[name], shared, evaluate, FLAGS.output_dir)
            for seed in seeds for name in configurations]
    setup = {"task": evaluator.name, "eval_file": FLAGS.eval_file, "seeds": seeds,
             "configurations": {name: {"arguments": arguments} for name, arguments in configurations.items()},
             "shared_arguments": shared, "evaluate_arguments": evaluate,
             "allowed_differences": {flag: values for flag, values in differences.items()},
             "bootstrap": {"method": "percentile, of the mean over seeds", "resamples": RESAMPLES,
                           "confidence": CONFIDENCE, "seed": 0, "min_seeds": MIN_SEEDS}}
    return evaluator, list(configurations), seeds, runs, setup


def main(argv):
    del argv
    try:
        evaluator, configs, seeds, runs, setup = plan()
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    results = execute_runs(runs)
    summaries = summarise(evaluator, configs, seeds, results)
    report = {**setup, "runs": results, "metrics": summaries}
    path = os.path.join(FLAGS.output_dir, REPORT)
    write_report(path, report)
    title = f"{evaluator.name}{f' on {FLAGS.eval_file}' if FLAGS.eval_file else ''}: {', '.join(configs)}"
    print("\n" + comparison_table(summaries, configs, seeds, title))
    print(f"\nwritten to {path}")
    return 0


def run():
    """Defines the flags only when run as the command: `evaluate` defines --task and --eval_file,
    `train` its own flags, so a process importing this module next to them must not define them."""
    define_flags()
    run_command(main, __name__)


if __name__ == "__main__":
    run()
