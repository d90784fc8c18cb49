"""Evaluation reports as text tables: one row per model (and view), the task's headline metrics
under the names their papers use, so runs compare at a glance.

`results_table(reports)` reads the JSON reports `python -m tfdialemb.evaluate` writes (one per
model), under the columns each task's evaluator names (`Evaluator.headline`); `format_table` lays
out any rows of numbers (the demo's tables too).
"""
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tfdialemb.eval.evaluator import get_evaluator

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


def results_table(reports: Sequence[Mapping[str, Any]]) -> str:
    """One table of the reports of one task, a row per model (and per view, for tasks that
    report views), titled with the task and the evaluated file; a model named twice gets its
    position in the list after its name ("runs/a (2)"), so no row replaces another."""
    task = reports[0]["task"]
    evaluator = get_evaluator(task)
    rows: Dict[str, Dict[str, Any]] = {}
    names: List[str] = []
    for position, report in enumerate(reports, start=1):
        name = str(report.get("checkpoint") or report["embedding"]["kind"])
        name = f"{name} ({position})" if name in names else name
        names.append(name)
        metrics = report["metrics"]
        if evaluator.per_view:
            for view, values in metrics[evaluator.per_view].items():
                rows[f"{name} [{view}]"] = values
        else:
            rows[name] = metrics
    columns: List[Tuple[str, str]] = []
    for values in rows.values():
        columns += [column for column in evaluator.columns(values) if column not in columns]
    source = reports[0].get("eval_file") or reports[0].get("augmented_file")
    return format_table([name for _, name in columns],
                        {name: [values.get(key) for key, _ in columns] for name, values in rows.items()},
                        title=f"{task} on {source}")
