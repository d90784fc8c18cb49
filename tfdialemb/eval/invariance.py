"""Invariance analysis: how well the augmentation a dialogue went through can be read from its
embedding (thesis Sec. 5.4-5.5, Tables 4-5; lower is better, the encoder is more invariant).

The input is an augmented file (`python -m tfdialemb.augment`): canonical dialogues whose
`labels.augmentations` lists the operations applied (empty for an original) and whose
`labels.source_id` names the original (`tfdialemb.augment.base`). Classes are none, insert,
replace, crop and shuffle, those of them the file holds (Table 4's five classes for a-l-m-dse);
translate views (no a-l-m-dse operation, not in Table 4) and views of several operations are
left out and counted under their operations' names.

Dialogues (originals and views) longer than `invariance_max_tokens` (512) tokens as the thesis'
encoder reads them are left out before sources are matched, as the released experiment drops them
after embedding (bash-scripts/dataset/scatter-analysis.sh runs filter_dataset_by_length.py, 512, on
each embedded table: the originals and each augmentation's views apart), counted in
`over_length`; a lengthened view (insert) so takes its source out of the join.

Sources, views and the split follow the released experiment (voorhs/dialogue-augmentation
scatter-analysis.py `aug_prediction` and `dump_scores`, lines 188-228): the per-augmentation
tables are inner-joined on the source dialogue, so only sources with a view of every class take
part (crop applies from 6 utterances, shuffle from 12: without this, a dialogue's length alone
would tell its class apart), and `sampling="released"` draws one class per source uniformly, then
one view of it, and splits the drawn views 75/25 by the seed; `sampling="all_views"` keeps every
view and splits by source, so the views of one dialogue are never on both sides. The probes,
fitted on one part and scored on the other (`classifier_probes`), on each representation the
embedder returns (the final embedding and the hidden states −2, −3, −4 of Table 5, mean-pooled as
the released embed_domain_dataset.py pools `hidden_state[k]`):

- logistic regression (max_iter 1000) and k nearest neighbours by euclidean distance (Table 5:
  k = 5) on the raw embeddings, as `dump_scores` fits them (`embeddings="normalised"` fits them
  on unit vectors instead: where an embedding's norm carries its class, the two differ);
- Table 4's "cosine" column, the released `cosine_analysis` (lines 132-185): per augmentation the
  mean cosine between each original and its view, over every view of that augmentation whose
  original is in the file, and their mean over the augmentations (`view_cosine`; higher is more
  invariant, so Table 4 bolds its maximum where the accuracy columns bold their minimum);
- the cosine nearest-centroid accuracy, a probe of this project's (`cosine_centroid_accuracy`).

`majority_accuracy`, the share of the held-out part's most common class, is the chance level the
accuracies compare against. Not copied: the released joins (`df.join(other,
on="idx_within_source")`, lines 135-137, 191 and 195) match a dialogue's `idx_within_source` with
the other table's row number, not its `idx_within_source`, so an original is compared with, and
grouped with, the views of another dialogue; here views are paired with their own original by
`labels.source_id`.
"""
import collections
import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import numpy as np

from tfdialemb.augment.base import applied, source_id
from tfdialemb.augment.presets import OPERATIONS
from tfdialemb.dialogue import Dialogue, DialogueFormatError, read_dialogues
from tfdialemb.eval import classifier_probes
from tfdialemb.eval.dialogue_embedding import checked_views
from tfdialemb.eval.dialogue_metrics import unit_rows
from tfdialemb.eval.evaluator import register_evaluator
from tfdialemb.eval.probe_split import DEFAULT_TEST_FRACTION, held_out_split
from tfdialemb.eval.probe_task import ProbeTaskEvaluator
from tfdialemb.eval.task_options import PROBE_VIEW, probe_view
from tfdialemb.core.options import Option

NONE = "none"
CLASSES = (NONE,) + tuple(op for op in OPERATIONS if op != "translate")
"""Table 4's classes, in the released code's order (orig, insert, replace, prune, shuffle), which
also breaks tied neighbour votes."""
SAMPLINGS = ("released", "all_views")
THESIS_K = 5
RELEASED_MAX_TOKENS = 512
"""bash-scripts/dataset/scatter-analysis.sh: filter_dataset_by_length.py's default --upper-bound."""
HIDDEN_STATE_POOLINGS = ("mean", "view")
"""A hidden layer pooled by mean whatever the view (the released embed_domain_dataset.py's
`hidden_state[k]`: AveragePooling), or as the probed view pools the last one."""
EMBEDDINGS = ("raw", "normalised")
"""What logistic regression and k-NN are fitted on: the embeddings as the encoder gives them
(released `dump_scores`), or L2-normalised."""

EmbedRepresentations = Callable[[Sequence[Dialogue]], Mapping[str, np.ndarray]]
"""Dialogues in, {representation name: float [N, H]} out, one row per dialogue in input order."""


def layer_pooling(view: str, hidden_state_pooling: str = "mean") -> str:
    """The pooling of the hidden layers: "mean", or the probed `view`'s."""
    if hidden_state_pooling not in HIDDEN_STATE_POOLINGS:
        raise ValueError(f"hidden_state_pooling must be one of {HIDDEN_STATE_POOLINGS}, got {hidden_state_pooling!r}")
    return view if hidden_state_pooling == "view" else "mean"


def representations(views: Mapping[str, np.ndarray], view: str, layers: Sequence[int],
                    hidden_state_pooling: str = "mean") -> Dict[str, np.ndarray]:
    """The probed representations among a DialogueEmbedder's views (built with `hidden_layers`):
    "embedding", the last layer's `view`, and "hidden_state[-k]" per layer -k (the released
    names), pooled per `hidden_state_pooling`."""
    from tfdialemb.layers.dialogue_views import hidden_state_name  # pylint: disable=import-outside-toplevel

    pooling = layer_pooling(view, hidden_state_pooling)
    return {"embedding": views[view],
            **{f"hidden_state[{layer}]": views[hidden_state_name(pooling, layer)] for layer in layers}}


def view_class(dialogue: Dialogue) -> Optional[str]:
    """The class of one view ("none" for an original), or None when it is left out."""
    operations = applied(dialogue)
    if not operations:
        return NONE
    return operations[0] if len(operations) == 1 and operations[0] in CLASSES else None


@dataclasses.dataclass(frozen=True)
class AugmentedViews:
    """The usable views of every source, grouped by source in file order, and which sources have
    a view of every class present (those the probes take part in)."""
    classes: List[str]
    by_source: Dict[str, Dict[str, List[Dialogue]]]
    complete: List[str]
    left_out: Dict[str, int]

    @property
    def incomplete_sources(self) -> int:
        return len(self.by_source) - len(self.complete)


def read_views(path: str, length_filter=None) -> AugmentedViews:
    """The usable views of an augmented file, those `length_filter` (a
    `tfdialemb.data.length_filter.TokenLengthFilter`) drops left out (counted in its `dropped`); a
    DialogueFormatError names a line whose augmentations or source id are malformed, a ValueError
    says when fewer than two classes, or no source with every class, remain."""
    by_source: Dict[str, Dict[str, List[Dialogue]]] = {}
    left_out: Dict[str, int] = collections.Counter()
    dialogues = list(read_dialogues(path))
    for line, dialogue in enumerate(dialogues, start=1):
        try:
            applied(dialogue), source_id(dialogue)
        except ValueError as error:
            raise DialogueFormatError(path, line, str(error)) from None
    kept = {id(d) for d in length_filter(dialogues)} if length_filter else {id(d) for d in dialogues}
    for dialogue in dialogues:
        if id(dialogue) not in kept:
            continue
        name = view_class(dialogue)
        if name is None:
            left_out["+".join(applied(dialogue))] += 1
            continue
        by_source.setdefault(source_id(dialogue), {}).setdefault(name, []).append(dialogue)
    counts = collections.Counter(name for views in by_source.values() for name in views)
    classes = [name for name in CLASSES if counts[name]]
    if len(classes) < 2:
        raise ValueError(f"{path}: views of {len(classes)} class(es) {classes} among {list(CLASSES)}; the invariance "
                         "probe needs the originals (labels.augmentations = []) and at least one operation's views")
    complete = [source for source, views in by_source.items() if len(views) == len(classes)]
    if not complete:
        raise ValueError(f"{path}: no source dialogue has a view of every class {classes} (sources by class: "
                         f"{dict(counts)}); write the originals and each operation's view of the same dialogues")
    return AugmentedViews(classes, by_source, complete, dict(left_out))


def sample_views(views: AugmentedViews, sampling: str, seed: int):
    """(dialogues, class names, source ids) of the views taking part, per `sampling`."""
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
    rng = np.random.default_rng(seed)
    dialogues, names, sources = [], [], []
    for source in views.complete:
        by_class = views.by_source[source]
        if sampling == "released":
            name = views.classes[rng.integers(len(views.classes))]
            chosen = [(name, by_class[name][rng.integers(len(by_class[name]))])]
        else:
            chosen = [(name, dialogue) for name in views.classes for dialogue in by_class[name]]
        for name, dialogue in chosen:
            dialogues.append(dialogue)
            names.append(name)
            sources.append(source)
    return dialogues, names, sources


def view_pairs(views: AugmentedViews) -> Dict[str, List[tuple]]:
    """Per augmentation class, (original, view) of every view whose source's original is in the
    file (the released `cosine_analysis` joins each augmentation's table with the originals')."""
    pairs: Dict[str, List[tuple]] = {name: [] for name in views.classes if name != NONE}
    for by_class in views.by_source.values():
        if NONE in by_class:
            for name in pairs:
                pairs[name].extend((by_class[NONE][0], view) for view in by_class.get(name, ()))
    return pairs


def mean_view_cosines(originals: np.ndarray, views: np.ndarray, classes: Sequence[str]) -> Dict[str, float]:
    """Per class, the mean cosine of each original row with its view row (rows paired, `classes`
    naming each pair's class), and "mean", their mean over the classes."""
    cosines = np.sum(unit_rows(originals) * unit_rows(views), axis=1)
    classes = np.asarray(classes)
    means = {name: float(cosines[classes == name].mean()) for name in dict.fromkeys(classes.tolist())}
    return {**means, "mean": float(np.mean(list(means.values())))}


def representation_probes(x: np.ndarray, codes: np.ndarray, fit: np.ndarray, test: np.ndarray,
                          k: int = THESIS_K, embeddings: str = "raw") -> Dict[str, Any]:
    """Logistic regression and k-NN accuracy (on `embeddings`) and cosine nearest-centroid
    accuracy of one representation."""
    if embeddings not in EMBEDDINGS:
        raise ValueError(f"embeddings must be one of {EMBEDDINGS}, got {embeddings!r}")
    parts = (x[fit], codes[fit], x[test], codes[test])
    normalise = embeddings == "normalised"
    logreg = classifier_probes.logistic_regression(*parts, max_iter=classifier_probes.INVARIANCE_MAX_ITER,
                                                   normalise=normalise)
    return {"logreg_accuracy": logreg["accuracy"], "logreg_converged": logreg["converged"],
            f"{k}nn_accuracy": classifier_probes.knn_accuracy(*parts, k=k, normalise=normalise),
            "cosine_centroid_accuracy": classifier_probes.nearest_centroid_accuracy(*parts)}


def evaluate_invariance(path: str, embed: EmbedRepresentations, sampling: str = "released",
                        test_fraction: float = DEFAULT_TEST_FRACTION, seed: int = 0,
                        k: int = THESIS_K, embeddings: str = "raw", length_filter=None) -> Dict[str, Any]:
    """{"split", "metrics"} of the augmentation-type probes and the original-view cosines on
    every representation; `embed` is called once, on the probed views and the (original, view)
    pairs, each dialogue once; the dialogues `length_filter` (a
    `tfdialemb.data.length_filter.TokenLengthFilter`) drops take no part."""
    views = read_views(path, length_filter)
    dialogues, names, sources = sample_views(views, sampling, seed)
    pairs = view_pairs(views)
    rows: Dict[int, int] = {}
    embedded: List[Dialogue] = []
    for dialogue in dialogues + [d for pair in pairs.values() for original_view in pair for d in original_view]:
        if id(dialogue) not in rows:
            rows[id(dialogue)] = len(embedded)
            embedded.append(dialogue)
    probed = np.array([rows[id(d)] for d in dialogues], np.int64)
    paired = [(rows[id(original)], rows[id(view)], name) for name, pair in pairs.items() for original, view in pair]
    codes = np.array([views.classes.index(name) for name in names], np.int64)
    fit, test = held_out_split(len(dialogues), test_fraction, seed,
                               groups=sources if sampling == "all_views" else None)
    representations = checked_views(embed(embedded), len(embedded))
    held_out = np.bincount(codes[test], minlength=len(views.classes))
    originals, augmented, pair_classes = (np.array(column) for column in zip(*paired))

    def probes(x: np.ndarray) -> Dict[str, Any]:
        x = np.asarray(x, np.float64)
        return {**representation_probes(x[probed], codes, fit, test, k, embeddings),
                "view_cosine": mean_view_cosines(x[originals], x[augmented], pair_classes)}

    return {
        "split": {"sampling": sampling, "test_fraction": test_fraction, "seed": seed},
        "metrics": {
            "classes": {name: int((codes == i).sum()) for i, name in enumerate(views.classes)},
            "left_out": views.left_out, "sources": len(views.complete),
            "over_length": sum(length_filter.dropped.values()) if length_filter else 0,
            "incomplete_sources": views.incomplete_sources,
            "fit_views": len(fit), "test_views": len(test),
            "view_pairs": {name: len(pair) for name, pair in pairs.items()},
            "embeddings": embeddings,
            "majority_accuracy": float(held_out.max() / len(test)),
            "representations": {name: probes(x) for name, x in representations.items()},
        },
    }


def knn_key(metrics: Mapping[str, Any]) -> Optional[str]:
    """The k-NN accuracy's key in an invariance report's metrics of one representation
    ("5nn_accuracy" for --invariance_knn=5), or None."""
    return next((key for key in metrics if key.endswith("nn_accuracy")), None)


def probed_layers(values: Sequence[str]) -> List[int]:
    """--hidden_layers as negative ints, or a ValueError naming the bad value."""
    try:
        layers = [int(value) for value in values]
    except ValueError:
        raise ValueError(f"--hidden_layers must be negative integers such as -2,-3,-4, got {values}") from None
    if any(layer >= 0 for layer in layers):
        raise ValueError(f"--hidden_layers counts from the top: -1 is the last layer, got {values}")
    return layers


@register_evaluator
class InvarianceEvaluator(ProbeTaskEvaluator):
    """`invariance`: each view's augmentation predicted from the final embedding (the --probe_view)
    and the hidden states --hidden_layers; lower accuracy is more invariant."""

    name = "invariance"
    kind = "dialogue"
    reads = "augmented_file"
    reads_description = "originals and their views"
    options = ProbeTaskEvaluator.options + (
        PROBE_VIEW,
        Option("augmented_file", None, "Canonical JSONL of originals and their augmented views "
               "(`python -m tfdialemb.augment`).", kind=str),
        Option("hidden_layers", ("-2", "-3", "-4"), "The lower layers probed besides the final embedding, counted "
               "from the top (-1 the last; thesis Table 5: -2,-3,-4); empty: none.", kind=list),
        Option("hidden_state_pooling", "mean", "Pool a hidden layer by mean whatever the view (the released "
               "embed_domain_dataset.py's hidden_state[k]), or as --probe_view does the last (view).",
               choices=HIDDEN_STATE_POOLINGS),
        Option("invariance_embeddings", "raw", "Fit logistic regression and k-NN on the raw embeddings (released "
               "scatter-analysis.py dump_scores) or on L2-normalised ones.", choices=EMBEDDINGS),
        Option("invariance_sampling", "released", "released (one view drawn per source dialogue, "
               "scatter-analysis.py aug_prediction) or all_views (every view, split by source); both use only "
               "sources with a view of every class.", choices=SAMPLINGS),
        Option("invariance_knn", THESIS_K, "Neighbours of the k-NN probe (thesis Tables 4-5: 5).", lower_bound=1),
        Option("invariance_max_tokens", RELEASED_MAX_TOKENS, "Leave out a dialogue (original or view) longer "
               "than this many tokens as the thesis' encoder reads it, with the model's tokenizer, before sources "
               "are matched (the released scatter-analysis.sh: filter_dataset_by_length.py, 512, after embedding); "
               "0: keep every one.", lower_bound=0))
    setting_hints = {"pooling": ": pick the dialogue's pooling with --probe_view"}
    primary_metric = "logreg_accuracy"
    greater_is_better = False
    lower_is_better = ("*_accuracy",)
    """Telling the augmentation apart (logistic regression, k-NN, centroids): lower is more invariant."""
    headline = (("logreg_accuracy", "LogReg"), ("cosine_centroid_accuracy", "centroid"))
    per_view = "representations"

    def columns(self, metrics):
        """LogReg, the --invariance_knn k-NN accuracy, the centroid's."""
        knn = knn_key(metrics)
        return [self.headline[0]] + ([(knn, knn.replace("nn_accuracy", "-NN"))] if knn else []) + [self.headline[1]]

    def check(self, options):
        probed_layers(options.hidden_layers)

    def probe(self, source, eval_file, options):
        layers = probed_layers(options.hidden_layers)
        length_filter = None
        if options.invariance_max_tokens:
            model = getattr(source, "model", None)
            if model is None or options.saved_model:
                raise ValueError(f"--invariance_max_tokens counts the tokens of the encoder's tokenizer, which "
                                 f"--embedding={source.name} does not give here: give --invariance_max_tokens=0")
            from tfdialemb.data.length_filter import TokenLengthFilter  # pylint: disable=import-outside-toplevel

            length_filter = TokenLengthFilter(model.pretrained.tokenizer,
                                              max_dialogue_tokens=options.invariance_max_tokens)
        embed_views = source.dialogue_views(hidden_layers=layers)
        view = probe_view(options, source.settings)
        source.embedding.update(view=view, hidden_layers=layers,
                                hidden_state_pooling=layer_pooling(view, options.hidden_state_pooling))
        evaluated = []

        def embed_representations(dialogues):
            probed = representations(embed_views(dialogues), view, layers, options.hidden_state_pooling)
            evaluated.append((probed["embedding"], [view_class(d) for d in dialogues]))
            return probed

        result = evaluate_invariance(eval_file, embed_representations, sampling=options.invariance_sampling,
                                     test_fraction=options.probe_test_fraction, seed=options.probe_seed,
                                     k=options.invariance_knn, embeddings=options.invariance_embeddings,
                                     length_filter=length_filter)
        return {"embedding": source.embedding, **result}, evaluated[0]
