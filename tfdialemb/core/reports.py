"""JSON reports in strict JSON: one rule for every report a command writes or prints.

JSON (RFC 8259) has no NaN or Infinity, and Python's `json` writes them as bare literals that
other readers reject or, worse, that read as a figure. A value that is not a finite number is
written as null instead, and a warning on stderr names it (`metrics.spearman is nan, written as
null`), so a report always parses and an undefined figure is never mistaken for a number.
"""
import json
import math
import sys
from typing import Any, List, Tuple

from tfdialemb.core.files import atomic_open


def finite_or_null(value: Any, name: str = "") -> Tuple[Any, List[str]]:
    """(`value` with every non-finite float replaced by None, the dotted names of those floats)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None, [f"{name or 'value'} is {value}"]
    if isinstance(value, dict):
        cleaned, replaced = {}, []
        for key, item in value.items():
            cleaned[key], found = finite_or_null(item, f"{name}.{key}" if name else str(key))
            replaced += found
        return cleaned, replaced
    if isinstance(value, (list, tuple)):
        pairs = [finite_or_null(item, f"{name}[{index}]") for index, item in enumerate(value)]
        return [item for item, _ in pairs], [text for _, found in pairs for text in found]
    return value, []


def report_json(report: Any, indent: int = 2) -> str:
    """`report` as strict JSON text; each non-finite number becomes null, with a warning."""
    cleaned, replaced = finite_or_null(report)
    for text in replaced:
        print(f"warning: {text}, written as null", file=sys.stderr)
    return json.dumps(cleaned, indent=indent, ensure_ascii=False, allow_nan=False)


def write_report(path: str, report: Any) -> str:
    """Writes `report` (strict JSON, `report_json`) atomically to `path`; returns the text."""
    text = report_json(report)
    with atomic_open(path) as f:
        f.write(text + "\n")
    return text
