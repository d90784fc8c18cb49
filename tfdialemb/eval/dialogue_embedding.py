"""dial2vec's dialogue-embedding evaluation of a labelled canonical JSONL file (dial2vec paper Sec. 4).

Every view an embedder returns (e.g. "interlocutor", "mean", "cls", "p1", "p2") gets every metric
of `tfdialemb.eval.dialogue_metrics`: domain categorization (purity, ARI, NMI, accuracy), semantic
relatedness (the paper's random-pair Spearman and the released all-pairs one), dialogue retrieval
(MAP, MRR) and alignment / uniformity (Eq. 7-9). A method that assigns each dialogue a cluster
instead of embedding it (the paper's LDA, Sec. 4.3) gets domain categorization only
(`evaluate_dialogue_assignments`).
"""
import dataclasses
import json
import os
from typing import Any, Callable, Dict, Hashable, List, Mapping, Sequence, Union

import numpy as np

from tfdialemb.dialogue import Dialogue, read_dialogues
from tfdialemb.eval import dialogue_metrics
from tfdialemb.eval.evaluator import ASSIGNMENTS, DIALOGUE_VIEWS, Evaluator, register_evaluator
from tfdialemb.eval.task_options import LABEL_KEY, PLOT_DIR
from tfdialemb.method_record import VALIDATION_HISTORY
from tfdialemb.core.options import Option

EmbedViews = Callable[[Sequence[Dialogue]], Mapping[str, np.ndarray]]
"""Dialogues in, {view name: float [N, H]} out, one row per dialogue in input order."""
AssignViews = Callable[[Sequence[Dialogue]], Mapping[str, Sequence[Sequence[Hashable]]]]
"""Dialogues in, {view name: runs of cluster assignments [N]} out, in input order."""


@dataclasses.dataclass(frozen=True)
class LabelledDialogues:
    dialogues: List[Dialogue]
    labels: List[Hashable]
    skipped_unlabelled: int


def read_labelled_dialogues(path: str, label_key: str) -> LabelledDialogues:
    """The dialogues of `path` that have `labels[label_key]`, their labels, and how many had none.

    A label must be a string, number or boolean: it is compared for equality only, and one file
    uses one kind (3 and "3" are refused rather than counted as two classes).
    """
    dialogues, labels, skipped, first_of_kind = [], [], 0, {}
    for dialogue in read_dialogues(path):
        if label_key not in dialogue.labels:
            skipped += 1
            continue
        label = checked_label(path, dialogue.id, label_key, dialogue.labels[label_key])
        first_of_kind.setdefault(dialogue_metrics.label_kind(label), (dialogue.id, label))
        if len(first_of_kind) > 1:
            raise ValueError(f"{path}: label {label_key!r} is " + " but ".join(
                f"a {kind} in dialogue {id_!r} ({value!r})" for kind, (id_, value) in first_of_kind.items())
                + "; a class is spelled one way (these would count as different classes)")
        dialogues.append(dialogue)
        labels.append(label)
    distinct = len(set(labels))
    if distinct < 2:
        raise ValueError(f"{path}: {len(dialogues)} dialogues carry label {label_key!r} with "
                         f"{distinct} distinct value(s) ({skipped} have none); need at least 2")
    return LabelledDialogues(dialogues, labels, skipped)


def checked_label(path: str, dialogue_id: str, label_key: str, label: Any) -> Hashable:
    """`label` when it is a string, number or boolean (compared for equality only), else a
    ValueError naming the dialogue; NaN is refused."""
    if not isinstance(label, (str, int, float, bool)) or label != label:  # NaN != NaN
        raise ValueError(f"{path}: dialogue {dialogue_id!r}: label {label_key!r} must be a "
                         f"string, number or boolean, got {label!r}")
    return label


def checked_views(views: Any, n: int) -> Dict[str, np.ndarray]:
    """The embedder's views as float32 arrays [n, H], or a ValueError naming the bad view."""
    if not isinstance(views, Mapping) or not views:
        raise ValueError("embed_views must return a non-empty dict of views, got "
                         f"{type(views).__name__}")
    checked = {}
    for name, embeddings in views.items():
        array = np.asarray(embeddings, np.float32)
        if array.ndim != 2 or len(array) != n:
            raise ValueError(f"view {name!r} has shape {array.shape}; expected [{n}, H]")
        checked[name] = array
    return checked


def view_metrics(embeddings: np.ndarray, labels: Sequence[Hashable],
                 runs: Union[int, str] = dialogue_metrics.PAPER_RUNS, seed: int = 0, spearman_repeats: int = dialogue_metrics.PAPER_RUNS,
                 alignment_variant: str = "paper") -> Dict[str, float]:
    """Every dial2vec metric of one view, keyed as in the paper's tables."""
    clustering = dialogue_metrics.domain_categorization(embeddings, labels, runs=runs, seed=seed)
    retrieval = dialogue_metrics.dialogue_retrieval(embeddings, labels)
    # A zero row (e.g. p2 of a monologue, or of a dialogue whose second speaker was cut off) has
    # no direction on the hypersphere: alignment and uniformity use the other rows and say so
    # (`zero_rows`); they are NaN when fewer than two rows, or no same-label pair, remain.
    nonzero = np.linalg.norm(embeddings, axis=1) > 0
    directed = embeddings[nonzero]
    directed_labels = [label for label, keep in zip(labels, nonzero) if keep]
    try:
        aligned = dialogue_metrics.alignment(directed, directed_labels, variant=alignment_variant)
        uniformity = dialogue_metrics.uniformity(directed)
    except ValueError:
        aligned, uniformity = {"alignment": float("nan"), "adjusted_alignment": float("nan")}, float("nan")
    return {
        "purity": clustering["purity"], "purity_std": clustering["purity_std"],
        "ari": clustering["ari"], "nmi": clustering["nmi"], "accuracy": clustering["accuracy"],
        "spearman": dialogue_metrics.spearman_random_pairs(embeddings, labels, seed=seed,
                                                           repeats=spearman_repeats),
        "spearman_all_pairs": dialogue_metrics.spearman_all_pairs(embeddings, labels),
        "map": retrieval["map"], "mrr": retrieval["mrr"],
        "alignment": aligned["alignment"], "adjusted_alignment": aligned["adjusted_alignment"],
        "uniformity": uniformity, "zero_rows": int((~nonzero).sum()),
    }


def _summary(data: LabelledDialogues) -> Dict[str, Any]:
    codes = dialogue_metrics.label_codes(data.labels)
    return {"dialogues": len(data.dialogues), "labels": int(codes.max()) + 1,
            "skipped_unlabelled": data.skipped_unlabelled}


def evaluate_dialogue_assignments(path: str, label_key: str, assign_views: AssignViews) -> Dict[str, Any]:
    """Domain categorization of cluster assignments: per view, each run's assignment of the
    labelled dialogues of `path` scored (`categorization_of_assignments`) and averaged."""
    data = read_labelled_dialogues(path, label_key)
    views = assign_views(data.dialogues)
    for name, runs in views.items():
        for clusters in runs:
            if len(clusters) != len(data.dialogues):
                raise ValueError(f"view {name!r} assigns {len(clusters)} clusters to "
                                 f"{len(data.dialogues)} dialogues")
    return {**_summary(data),
            "views": {name: dialogue_metrics.categorization_of_assignments(data.labels, runs)
                      for name, runs in views.items()}}


def evaluate_dialogue_embeddings(path: str, label_key: str, embed_views: EmbedViews,
                                 runs: Union[int, str] = dialogue_metrics.PAPER_RUNS, seed: int = 0,
                                 spearman_repeats: int = dialogue_metrics.PAPER_RUNS,
                                 alignment_variant: str = "paper") -> Dict[str, Any]:
    """Embeds the labelled dialogues of `path` once and scores every view.

    `runs` is the number of KMeans runs (paper: 10) or "released"; `spearman_repeats` the number of
    random pairings of the paper's semantic relatedness; `alignment_variant` "paper" or "released".
    `queries_without_relevant` counts the dialogues whose label no other dialogue shares: they
    are left out of MAP and MRR.
    """
    data = read_labelled_dialogues(path, label_key)
    views = checked_views(embed_views(data.dialogues), len(data.dialogues))
    codes = dialogue_metrics.label_codes(data.labels)
    return {
        **_summary(data),
        "queries_without_relevant": int((np.bincount(codes)[codes] == 1).sum()),
        "views": {name: view_metrics(embeddings, data.labels, runs=runs, seed=seed,
                                     spearman_repeats=spearman_repeats,
                                     alignment_variant=alignment_variant)
                  for name, embeddings in views.items()},
    }


@register_evaluator
class DialogueEvaluator(Evaluator):
    """`dialogue`: dial2vec's metrics of every view of the dialogue embedding (or LDA's topic
    assignments), plus a 2-D projection per view under --plot_dir and, for a model directory
    holding a validation history with alignment and uniformity, its trajectory over training."""

    name = "dialogue"
    kind = "dialogue"
    inputs = (DIALOGUE_VIEWS, ASSIGNMENTS)
    options = (LABEL_KEY, PLOT_DIR, Option("runs", 10, "Seeded KMeans runs (lda: LDA fits) and random pairings "
                                           "averaged.", lower_bound=1))
    primary_metric = "purity"
    lower_is_better = ("alignment", "adjusted_alignment", "uniformity")
    headline = (("purity", "DC purity"), ("spearman", "SR Spearman"), ("map", "DR MAP"),
                ("adjusted_alignment", "alignment"), ("uniformity", "uniformity"))
    """dial2vec Table 2: domain categorization purity, semantic relatedness Spearman, dialogue retrieval MAP."""
    per_view = "views"

    def check(self, options):
        if not options.label_key:
            raise ValueError(f"--task={self.name} needs --label_key (the key of `labels` naming the domain)")

    def __call__(self, source, eval_file, options):
        captured = {}

        def keep_labels(dialogues):
            captured["labels"] = [d.labels[options.label_key] for d in dialogues]

        if ASSIGNMENTS in source.provided(options):
            assign_views = source.assign_views(captured)

            def assign_and_keep(dialogues):
                keep_labels(dialogues)
                return assign_views(dialogues)

            metrics = evaluate_dialogue_assignments(eval_file, options.label_key, assign_and_keep)
        else:
            embed_views = source.dialogue_views()

            def embed_and_keep(dialogues):
                captured["views"] = embed_views(dialogues)
                keep_labels(dialogues)
                return captured["views"]

            metrics = evaluate_dialogue_embeddings(eval_file, options.label_key, embed_and_keep,
                                                   runs=options.runs, spearman_repeats=options.runs)
        report = {"label_key": options.label_key, "embedding": source.embedding, "metrics": metrics}
        if options.plot_dir:
            report["plots"] = self.plots(source, captured, metrics, options)
        return report

    @staticmethod
    def plots(source, captured: dict, metrics: dict, options) -> List[str]:
        """The projection of each view and the alignment-uniformity trajectory; the paths written."""
        from tfdialemb.eval import plots  # pylint: disable=import-outside-toplevel  (matplotlib)

        written = []
        for view, vectors in captured["views"].items():
            path = os.path.join(options.plot_dir, f"projection-{view}.png")
            plots.plot_projection(vectors, captured["labels"], path, title=f"{view} ({source.name})")
            written.append(path)
        history = os.path.join(source.model.directory, VALIDATION_HISTORY) if source.model else ""
        if options.model_dir and os.path.isfile(history):
            with open(history, encoding="utf-8") as f:
                points = [row for row in map(json.loads, f)  # an undefined value is null
                          if row.get("adjusted_alignment") is not None and row.get("uniformity") is not None]
            if points:
                path = os.path.join(options.plot_dir, "alignment_uniformity.png")
                # The trajectory follows the embedding the model serves (the validation's).
                final = [{"label": f"final {view}", **values} for view, values in metrics["views"].items()
                         if view == source.settings.get("dialogue_pooling")]
                plots.plot_alignment_uniformity(points, path, labelled_points=final)
                written.append(path)
        return written

    def validation(self, eval_file, settings, options):
        read_labelled_dialogues(eval_file, options.label_key)
        pooling = settings["dialogue_pooling"]

        def score(runtime):
            report = evaluate_dialogue_embeddings(
                eval_file, options.label_key, lambda dialogues: {pooling: runtime.embed(dialogues)[pooling]}, runs=3)
            return report["views"][pooling]

        return score
