"""The evaluator registry: one `Evaluator` per task, found by name (sentence-transformers'
`SentenceEvaluator`, registered as `tfdialemb.methods.spec` registers methods).

An evaluator says everything `evaluate` and training validation need to know about its task, so
neither has code of its own per task:

  - `name`: the task, `--task=NAME` of `evaluate` and `--validate_task=NAME` of `train`;
  - `kind`: the inference kind (`tfdialemb.kind_registry`) whose recorded settings embed its
    texts, the runtime validation builds (`tfdialemb.inference.kinds.runtime_class`);
  - `options`: its own flags, each an `Option` that `evaluate` defines (another task's are refused);
  - `inputs`: what it scores (INPUTS), which decides the `--embedding` sources it takes
    (`tfdialemb.eval.sources`: the encoder, the baselines);
  - `primary_metric` and `greater_is_better`: what selects the best weights during training;
  - `lower_is_better`: the other metrics (key patterns) where lower is better, so a comparison of
    runs (`python -m tfdialemb.compare`) reads each metric in its direction;
  - `__call__(source, eval_file, options)`: the report's task fields, its `metrics` among them;
  - `validation(eval_file, settings, options)`: for a task training validates on, a function of
    the in-training runtime returning the metrics (the file is read first, so a set that cannot
    be scored fails before training).

A module defining an evaluator registers it with `register_evaluator`; the package's own task
modules (`BUILTIN`) are imported on first lookup. Code outside the package registers its own the
same way before calling a command's `run`.
"""
import fnmatch
import importlib
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from tfdialemb.core.options import Option

SENTENCES, DIALOGUE_VIEWS, ASSIGNMENTS, MODEL = "sentences", "dialogue views", "topic assignments", "the model"
INPUTS = (SENTENCES, DIALOGUE_VIEWS, ASSIGNMENTS, MODEL)
"""What an evaluator scores and an embedding source gives: sentence embeddings (`sentences()`),
dialogue embedding views (`dialogue_views()`), cluster assignments of dialogues (`assign_views()`),
or the evaluated model itself (its recorded `settings`, its `model` directory, its `runtime(kind)`)."""
BUILTIN = ("semantic_retrieval", "dialogue_sts", "dialogue_embedding", "sequence_modeling", "short_term_planning",
           "response_selection", "context_response", "probes", "intent", "invariance")
"""The modules of `tfdialemb.eval` whose import registers the package's evaluators."""


class OptionValues:
    """The values of the options an evaluator or embedding source reads, by attribute, and the names
    given explicitly (a command line's flags), for a default that depends on whether one was."""

    def __init__(self, values: Mapping[str, Any], given: Iterable[str] = ()):
        self._values = dict(values)
        self.given = frozenset(given)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no option {name!r}") from None


class Evaluator:
    """Base of every task's evaluator; subclasses set the class attributes and `__call__`."""

    name: str = ""
    kind: Optional[str] = "sentence"
    """The inference kind whose settings embed the task's inputs."""
    options: Tuple[Option, ...] = ()
    inputs: Tuple[str, ...] = (MODEL,)
    """What it scores (INPUTS): one of them is what it takes from an `--embedding` source."""
    reads: str = "eval_file"
    """The flag naming the evaluated file."""
    reads_description: str = ""
    """What that file holds, when it is not --eval_file (for the message refusing --eval_file)."""
    serves_exported: bool = False
    """Whether an exported sentence SavedModel (`evaluate --saved_model`) can be scored."""
    setting_hints: Mapping[str, str] = {"pooling": ": every pooling is reported as a view"}
    """Setting flag → what to give instead, when the task does not read it."""
    primary_metric: str = ""
    greater_is_better: bool = True
    lower_is_better: Tuple[str, ...] = ()
    """fnmatch patterns of the metric keys besides the primary one where lower is better; every
    other metric is better higher."""
    headline: Tuple[Tuple[str, str], ...] = ()
    """(metric key, column name) of the metrics its paper reports under the paper's names, the
    columns of `evaluate`'s comparison table (default: the primary metric)."""
    per_view: Optional[str] = None
    """The key of `metrics` holding one set of metrics per view (or representation): a row each."""

    def check(self, options: OptionValues) -> None:
        """A ValueError naming an option value (or combination) the task cannot use."""
        del options

    def __call__(self, source, eval_file: str, options: OptionValues) -> Dict[str, Any]:
        """The report's task fields ("embedding", "metrics", ...) of `source` on `eval_file`."""
        raise TypeError(f"{type(self).__name__} must define __call__()")

    def validation(self, eval_file: str, settings: Mapping[str, Any],
                   options: OptionValues) -> Optional[Callable[[Any], Dict[str, float]]]:
        """score(runtime) → metrics of a model in training, `eval_file` read now; None: training
        does not validate on this task. `options` hold `label_key`, `seed` and `batch_size`."""
        del eval_file, settings, options
        return None

    def columns(self, metrics: Mapping[str, Any]) -> List[Tuple[str, str]]:
        """The table's columns for one row's metrics (a task adds those whose keys its flags set)."""
        del metrics
        return list(self.headline or ((self.primary_metric, self.primary_metric),))

    def metric_greater_is_better(self, metric: str) -> bool:
        """Whether a higher value of `metric` is better: the primary metric's declared direction, else
        lower for the keys `lower_is_better` matches."""
        if metric == self.primary_metric:
            return self.greater_is_better
        return not any(fnmatch.fnmatchcase(metric, pattern) for pattern in self.lower_is_better)

    @property
    def selection(self) -> Tuple[str, str]:
        """(primary metric, "max" or "min"): how the best weights are kept."""
        return self.primary_metric, "max" if self.greater_is_better else "min"


_EVALUATORS: Dict[str, Evaluator] = {}
_builtin_loaded = False


def register_evaluator(evaluator_class):
    """Class decorator (or call) registering one instance of an `Evaluator` subclass."""
    evaluator = evaluator_class() if isinstance(evaluator_class, type) else evaluator_class
    if not evaluator.name or not evaluator.primary_metric:
        raise ValueError(f"{type(evaluator).__name__} needs a name and a primary metric")
    if evaluator.name in _EVALUATORS and type(_EVALUATORS[evaluator.name]) is not type(evaluator):
        raise ValueError(f"an evaluator named {evaluator.name!r} is already registered")
    _EVALUATORS[evaluator.name] = evaluator
    return evaluator_class


def unregister_evaluator(name: str) -> None:
    """Removes a registered evaluator (for evaluators defined by tests)."""
    _EVALUATORS.pop(name, None)


def get_evaluator(name: str) -> Evaluator:
    """The evaluator registered as `name`; a ValueError lists the known ones."""
    if name not in evaluators():
        raise ValueError(f"unknown task {name!r}; known: {', '.join(sorted(_EVALUATORS))} (an evaluator "
                         "defined outside tfdialemb must be registered before the command runs)")
    return _EVALUATORS[name]


def evaluators() -> Dict[str, Evaluator]:
    """Every registered evaluator by name, the package's own included."""
    global _builtin_loaded  # pylint: disable=global-statement
    if not _builtin_loaded:
        _builtin_loaded = True
        for module in BUILTIN:
            importlib.import_module(f"tfdialemb.eval.{module}")
    return dict(sorted(_EVALUATORS.items()))


def validation_tasks() -> List[str]:
    """The tasks training validates on: those whose evaluator offers a `validation`."""
    return [name for name, evaluator in evaluators().items()
            if type(evaluator).validation is not Evaluator.validation]
