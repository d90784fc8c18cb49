"""Evaluation reports as text tables: one row per model (and view), the task's headline metrics
under the names their papers use, each with its direction (↑ higher is better, ↓ lower), so runs
compare at a glance in a terminal.

`results_table(reports)` reads the JSON reports `python -m tfdialemb.evaluate` writes (one per
model), under the columns each task's evaluator names (`Evaluator.headline`) and in the directions
it declares (`Evaluator.metric_greater_is_better`); `format_table` lays out any rows of numbers
(the demo's tables too) within TABLE_WIDTH columns.
"""
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tfdialemb.eval.evaluator import get_evaluator

TABLE_WIDTH = 100
"""Columns a table fits in: the row names give way (cut at their start) when the numbers need room."""
MIN_NAME_WIDTH = 12
MARK = "†"
"""Marks a row evaluated with other inference settings than the first row's (named under the table)."""
FOLDERS_NAMED_BY_ROLE = ("best", "model")
"""Last components that say what a folder holds rather than which model it is (a training run's
MODEL_DIR/best, a packaged model's `model` folder): the parent's name comes with them."""


def format_table(columns: Sequence[str], rows: Mapping[str, Sequence[Any]], title: Optional[str] = None,
                 width: int = TABLE_WIDTH) -> str:
    """Rows of numbers under right-aligned columns, 4 decimals, each column 2 wider than its widest
    entry; a value that is missing (None) or not finite shows as "-". The row names take what
    `width` leaves (at least MIN_NAME_WIDTH); a longer name loses its start to "…". Columns that do
    not fit beside the names in `width` go on to a block of their own below, the row names
    repeated (sequence modelling reports ten)."""
    shown = {name: [_number(value) for value in values] for name, values in rows.items()}
    widths = [max([len(column)] + [len(values[index]) for values in shown.values()]) + 2
              for index, column in enumerate(columns)]
    longest = max([0] + [len(name) for name in shown])
    blocks: List[List[int]] = [[]]
    for index, column_width in enumerate(widths):
        block_width = sum(widths[i] for i in blocks[-1]) + column_width
        if blocks[-1] and min(longest, MIN_NAME_WIDTH) + block_width > width:
            blocks.append([])
        blocks[-1].append(index)
    names = min(longest, max(MIN_NAME_WIDTH, min(width - sum(widths[i] for i in block) for block in blocks)))
    lines = [title] if title else []
    for number, block in enumerate(blocks):
        lines += [""] if number else []
        lines.append(" " * names + "".join(f"{columns[i]:>{widths[i]}}" for i in block))
        for name, values in shown.items():
            lines.append(f"{_cut(name, names):{names}}" + "".join(f"{values[i]:>{widths[i]}}" for i in block))
    return "\n".join(lines)


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else "…" + name[len(name) - width + 1:]


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return f"{value:.4f}"


def model_names(reports: Sequence[Mapping[str, Any]]) -> List[str]:
    """A short name per report: its checkpoint directory's last component (with the parent's for
    FOLDERS_NAMED_BY_ROLE, and with as many more as tell two directories apart), or the
    embedding's kind for a baseline without a checkpoint; a directory named twice gets its
    position in the list after its name ("a (2)"), so no row replaces another."""
    parts = [os.path.normpath(str(report["checkpoint"])).split(os.sep) if report.get("checkpoint")
             else [report["embedding"]["kind"]] for report in reports]
    kept = [2 if len(p) > 1 and p[-1] in FOLDERS_NAMED_BY_ROLE else 1 for p in parts]
    while True:
        names = ["/".join(p[-k:]) for p, k in zip(parts, kept)]
        clashing = [i for i, name in enumerate(names)
                    if any(names[j] == name and parts[j] != parts[i] for j in range(len(parts)))]
        if not any(kept[i] < len(parts[i]) for i in clashing):
            break
        for i in clashing:
            kept[i] = min(kept[i] + 1, len(parts[i]))
    unique: List[str] = []
    for position, name in enumerate(names, start=1):
        unique.append(f"{name} ({position})" if name in names[:position - 1] else name)
    return unique


def results_table(reports: Sequence[Mapping[str, Any]]) -> str:
    """One table of the reports of one task, a row per model (`model_names`) and per view, for
    tasks that report views, a column per headline metric with its direction, titled with the
    task and the evaluated file."""
    task = reports[0]["task"]
    evaluator = get_evaluator(task)
    differing = settings_differences(reports)
    rows: Dict[str, Dict[str, Any]] = {}
    for index, (name, report) in enumerate(zip(model_names(reports), reports)):
        name += MARK if index in differing else ""
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
    table = format_table([f"{name} {'↑' if evaluator.metric_greater_is_better(key) else '↓'}" for key, name in columns],
                         {name: [values.get(key) for key, _ in columns] for name, values in rows.items()},
                         title=f"{task} on {source}")
    names = model_names(reports)
    notes = [f"{MARK} {names[index]}: {text}" for index, text in differing.items()]
    return "\n".join([table] + notes)


def settings_differences(reports: Sequence[Mapping[str, Any]]) -> Dict[int, str]:
    """Report index → how its inference settings (`settings`: max length, pooling, ...) differ
    from the first row's, for every report that has settings and differs: metrics taken at another
    max length or pooling do not compare as they stand."""
    first = reports[0].get("settings") or {}
    differing = {}
    for index, report in enumerate(reports[1:], start=1):
        own = report.get("settings") or {}
        changed = [name for name in sorted(set(first) & set(own)) if first[name] != own[name]]
        if changed:
            differing[index] = ", ".join(f"{name} {own[name]} (first row: {first[name]})" for name in changed)
    return differing
