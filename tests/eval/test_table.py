"""Results tables from hand-made evaluation reports: the papers' metric names, a row per model and
view, columns read from the metrics where flags name them, missing values as "-"."""
import re

from tfdialemb.eval.table import format_table, results_table


def _right(text, width):
    return " " * (width - len(text)) + text


def test_dialogue_reports_give_a_row_per_model_and_view():
    reports = [{"task": "dialogue", "eval_file": "test.jsonl", "checkpoint": "minilm",
                "metrics": {"views": {"mean": {"purity": 0.5, "spearman": 0.25, "map": 0.75, "adjusted_alignment": -1.0,
                                               "uniformity": -2.0}}}},
               {"task": "dialogue", "eval_file": "test.jsonl", "checkpoint": None, "embedding": {"kind": "lda"},
                "metrics": {"views": {"lda": {"purity": 0.125}}}}]
    # Columns are 2 wider than their name, at least 12; "SR Spearman" (11 letters) takes 13.
    widths = [12, 13, 12, 12, 12]
    assert results_table(reports).splitlines() == [
        "dialogue on test.jsonl",
        " " * 34 + "".join(_right(name, w) for name, w in zip(
            ["DC purity", "SR Spearman", "DR MAP", "alignment", "uniformity"], widths)),
        "minilm [mean]".ljust(34) + "".join(_right(v, w) for v, w in zip(
            ["0.5000", "0.2500", "0.7500", "-1.0000", "-2.0000"], widths)),
        "lda [lda]".ljust(34) + "".join(_right(v, w) for v, w in zip(["0.1250", "-", "-", "-", "-"], widths)),
    ]


def test_columns_named_by_flags_come_from_the_metrics():
    sequence = {"task": "sequence_modeling", "eval_file": "d.jsonl", "checkpoint": "c3l",
                "metrics": {"avg_rank_h10": 3.0, "avg_rank_h2": 2.0, "candidates_h2": 9, "avg_rank": 2.5}}
    lines = results_table([sequence]).splitlines()
    assert re.split(r"\s{2,}", lines[1].strip()) == ["avg. rank h=2", "avg. rank h=10", "avg. rank"]
    assert lines[2].split() == ["c3l", "2.0000", "3.0000", "2.5000"]
    invariance = {"task": "invariance", "augmented_file": "aug.jsonl", "checkpoint": "augcl",
                  "metrics": {"representations": {"embedding": {"logreg_accuracy": 0.4, "7nn_accuracy": 0.3,
                                                                "cosine_centroid_accuracy": float("nan")}}}}
    lines = results_table([invariance]).splitlines()
    assert lines[0] == "invariance on aug.jsonl"
    assert lines[1].split() == ["LogReg", "7-NN", "centroid"]
    assert lines[2].split() == ["augcl", "[embedding]", "0.4000", "0.3000", "-"]  # NaN is no number


def test_long_row_names_widen_the_first_column():
    table = format_table(["MAP"], {"x" * 40: [0.5]}).splitlines()
    assert table[1] == "x" * 40 + "  " + _right("0.5000", 12)


def test_a_model_named_twice_gets_two_rows():
    reports = [{"task": "sr", "eval_file": "select.txt", "checkpoint": "runs/a", "metrics": {"map": map_}}
               for map_ in (0.5, 0.25)]
    reports.append({"task": "sr", "eval_file": "select.txt", "checkpoint": "runs/b", "metrics": {"map": 0.125}})
    reports.append({"task": "sr", "eval_file": "select.txt", "checkpoint": "runs/a", "metrics": {"map": 1.0}})
    lines = results_table(reports).splitlines()
    assert [(line[:34].strip(), line.split()[-5]) for line in lines[2:]] == [
        ("runs/a", "0.5000"), ("runs/a (2)", "0.2500"), ("runs/b", "0.1250"), ("runs/a (4)", "1.0000")]
