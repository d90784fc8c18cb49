"""Evaluation reports as text tables: one row per model (and view), the task's headline metrics
under the names their papers use, so runs compare at a glance.

`results_table(reports)` reads the JSON reports `python -m tfdialemb.evaluate` writes (one per
model); `format_table` lays out any rows of numbers (the demo's tables too).
"""
import math
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

Columns = Sequence[Tuple[str, str]]
"""(metric key in the report, column name) pairs."""

HEADLINE: Dict[str, Columns] = {
    "sr": (("map", "MAP"), ("mrr", "MRR"), ("p@1", "P@1"), ("p@5", "P@5"), ("r@10", "R@10")),
    "dsts": (("spearman", "Spearman"), ("pearson", "Pearson")),
    "dialogue": (("purity", "DC purity"), ("spearman", "SR Spearman"), ("map", "DR MAP"),
                 ("adjusted_alignment", "alignment"), ("uniformity", "uniformity")),
    "stp": (("hits@5", "hits@5"), ("hits@10", "hits@10"), ("hits@25", "hits@25"), ("hits@50", "hits@50"),
            ("avg_rank", "avg. rank")),
    "response_selection": (("r10@1", "R10@1"), ("r10@2", "R10@2"), ("r10@5", "R10@5"), ("r2@1", "R2@1"),
                           ("map", "MAP"), ("mrr", "MRR"), ("p@1", "P@1")),
    "fgc_similarity": (("ins_similarity", "Ins"), ("cat_similarity", "Cat")),
    "probes": (("accuracy", "accuracy"), ("macro_f1", "macro F1"), ("purity", "purity"),
               ("v_measure", "V-measure")),
    "intent": (("accuracy", "accuracy"), ("macro_f1", "macro F1")),
    "invariance": (("logreg_accuracy", "LogReg"), ("cosine_centroid_accuracy", "centroid")),
    "context_response": (("accuracy@1", "accuracy@1"), ("accuracy@5", "accuracy@5")),
}
"""Per task, the metrics the papers report (DialogueCSE Table 2: MAP, MRR, P@k; dial2vec Table 2:
domain categorization purity, semantic relatedness Spearman, dialogue retrieval MAP; FGC: R10@k;
triple-encoders: average rank, hits@k; the augmentation thesis: probe accuracy, nDCG, k-NN)."""
NESTED = {"dialogue": "views", "fgc_similarity": "views", "invariance": "representations"}
"""Tasks whose metrics come per view (or representation): one row per model and view."""
NAME_WIDTH = 34


def format_table(columns: Sequence[str], rows: Mapping[str, Sequence[Any]], title: Optional[str] = None) -> str:
    """Rows of numbers under right-aligned columns, 4 decimals; a value that is missing (None) or
    not finite shows as "-"."""
    widths = [max(10, len(column)) + 2 for column in columns]
    names = max([NAME_WIDTH] + [len(name) + 2 for name in rows])
    lines = [title] if title else []
    lines.append(" " * names + "".join(f"{column:>{width}}" for column, width in zip(columns, widths)))
    for name, values in rows.items():
        lines.append(f"{name:{names}}" + "".join(f"{_number(value):>{width}}" for value, width in zip(values, widths)))
    return "\n".join(lines)


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return f"{value:.4f}"


def knn_key(metrics: Mapping[str, Any]) -> Optional[str]:
    """The k-NN accuracy's key in an invariance report's metrics of one representation
    ("5nn_accuracy" for --invariance_knn=5), or None."""
    return next((key for key in metrics if key.endswith("nn_accuracy")), None)


def task_columns(task: str, metrics: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """The headline columns of `task` for a report's metrics (those with keys set by flags, the
    history lengths, nDCG's k and k-NN's k, read from the metrics themselves)."""
    if task == "sequence_modeling":
        lengths = sorted(int(m.group(1)) for m in map(re.compile(r"avg_rank_h(\d+)$").match, metrics) if m)
        return [(f"avg_rank_h{h}", f"avg. rank h={h}") for h in lengths] + [("avg_rank", "avg. rank")]
    columns = list(HEADLINE[task])
    if task == "probes":
        columns += [(key, key.replace("ndcg", "nDCG")) for key in metrics if key.startswith("ndcg@")]
    if task == "invariance":
        columns[1:1] = [(key, key.replace("nn_accuracy", "-NN")) for key in [knn_key(metrics)] if key]
    return columns


def results_table(reports: Sequence[Mapping[str, Any]]) -> str:
    """One table of the reports of one task, a row per model (and per view, for tasks that
    report views), titled with the task and the evaluated file; a model named twice gets its
    position in the list after its name ("runs/a (2)"), so no row replaces another."""
    task = reports[0]["task"]
    rows: Dict[str, Dict[str, Any]] = {}
    names: List[str] = []
    for position, report in enumerate(reports, start=1):
        name = str(report.get("checkpoint") or report["embedding"]["kind"])
        name = f"{name} ({position})" if name in names else name
        names.append(name)
        metrics = report["metrics"]
        if task in NESTED:
            for view, values in metrics[NESTED[task]].items():
                rows[f"{name} [{view}]"] = values
        else:
            rows[name] = metrics
    columns: List[Tuple[str, str]] = []
    for values in rows.values():
        columns += [column for column in task_columns(task, values) if column not in columns]
    source = reports[0].get("eval_file") or reports[0].get("augmented_file")
    return format_table([name for _, name in columns],
                        {name: [values.get(key) for key, _ in columns] for name, values in rows.items()},
                        title=f"{task} on {source}")
