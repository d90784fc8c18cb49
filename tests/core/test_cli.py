"""Shared CLI and file-writing pieces, on hand-worked cases."""
import io
import json
import os

import numpy as np
import pytest

from absl import flags

from tfdialemb.core.cli import ARGUMENTS, parse_flags, read_lines
from tfdialemb.core.progress import Progress
from tfdialemb.core.files import save_npy_atomic
from tfdialemb.core.options import Option, current_flag_names
from tfdialemb.core.reports import report_json, write_report


def test_read_lines_skips_blank_lines_and_explains_bad_files(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("one\n\n  \ntwo\r\n", encoding="utf-8")
    assert read_lines(str(good)) == ["one", "two"]
    (tmp_path / "blank.txt").write_text("\n \n")
    with pytest.raises(ValueError, match="has no non-empty lines"):
        read_lines(str(tmp_path / "blank.txt"))
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8 text"):
        read_lines(str(tmp_path / "latin1.txt"))
    with pytest.raises(FileNotFoundError, match="input file does not exist"):
        read_lines(str(tmp_path / "missing.txt"))


def test_standard_input_and_a_file_split_lines_by_the_same_rule(tmp_path, monkeypatch):
    """\\n, \\r\\n and a lone \\r (old Mac) each end a line, whether the bytes come from a file or
    from standard input."""
    data = "one\rtwo\r\nthree\n\r\nfour".encode("utf-8")
    (tmp_path / "mixed.txt").write_bytes(data)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    assert read_lines("-") == read_lines(str(tmp_path / "mixed.txt")) == ["one", "two", "three", "four"]


def test_atomic_save_writes_only_the_final_file(tmp_path):
    path = tmp_path / "deep" / "out.npy"
    save_npy_atomic(str(path), np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(np.load(path), [0, 1, 2])
    assert os.listdir(path.parent) == ["out.npy"]
    with pytest.raises(RuntimeError, match="cannot be saved"):
        save_npy_atomic(str(tmp_path / "bad.npy"), _Unsaveable())
    assert not [n for n in os.listdir(tmp_path) if n != "deep"]


class _Unsaveable:
    def __array__(self, *args, **kwargs):
        raise RuntimeError("cannot be saved")


def test_progress_counts_to_the_total():
    stream = io.StringIO()
    progress = Progress(5, "sentences", stream=stream, terminal=True)
    progress.advance(3)
    progress.advance(2)
    assert "5/5 sentences" in stream.getvalue() and stream.getvalue().endswith("\n")
    assert ", done in " in stream.getvalue().splitlines()[-1]  # the elapsed time, not a time left
    progress.finish()
    assert stream.getvalue().count("\n") == 1


def test_progress_without_a_total_counts_until_finished():
    stream = io.StringIO()
    progress = Progress(None, "dialogues", stream=stream, interval=0.0, terminal=True)
    for _ in range(4):
        progress.advance(1)
    progress.finish()
    # a shorter line than the one before it is padded with spaces to overwrite it on the terminal
    assert stream.getvalue().rstrip().endswith("/s") and "\r4 dialogues" in stream.getvalue()


def test_progress_names_the_items_in_a_rate_that_keeps_its_unit_when_it_passes_one_per_second(monkeypatch):
    clock = iter([0.0, 1.0, 5.0, 5.5, 6.0])  # start; the first dialogue, 4 s for the second, then faster
    monkeypatch.setattr("tfdialemb.core.progress.time.perf_counter", lambda: next(clock))
    stream = io.StringIO()
    progress = Progress(None, "dialogues read into mge examples", stream=stream, interval=0.0, terminal=True)
    progress.advance(1)
    progress.advance(1)
    assert stream.getvalue().endswith("2 dialogues read into mge examples 0.25 dialogues/s")
    progress.advance(9)  # 10 after the first in 4.5 s
    assert stream.getvalue().endswith("11 dialogues read into mge examples 2.2 dialogues/s")
    progress.advance(49)  # 59 in 5 s
    assert stream.getvalue().rstrip(" ").endswith("60 dialogues read into mge examples 12 dialogues/s")


def test_progress_measures_time_left_after_the_first_item_and_prints_messages_on_their_own_line(monkeypatch):
    clock = iter([0.0, 30.0, 32.0, 33.0, 34.0])  # start; item 1 takes 30 s (a trace), then 2 s each
    monkeypatch.setattr("tfdialemb.core.progress.time.perf_counter", lambda: next(clock))
    stream = io.StringIO()
    progress = Progress(10, "steps", stream=stream, interval=0.0, terminal=True)
    progress.advance(1, "loss 2.0000")
    assert stream.getvalue().endswith("1/10 steps, time left unknown, loss 2.0000")
    progress.advance(1, "loss 1.5000")
    # 1 step in the 2 s after the first, 8 to go: 16 s, not the 72 s the first step's pace gives.
    assert stream.getvalue().endswith("2/10 steps 0.5 steps/s, 16s left, loss 1.5000")
    progress.message("step 2: validation spearman 0.5")
    lines = stream.getvalue().split("\r")
    assert lines[-2].endswith("step 2: validation spearman 0.5\n")  # after the bar was blanked
    assert lines[-3].strip() == "" and lines[-1].startswith("[======") and "\n" not in lines[-1]  # redrawn
    progress.advance(1)
    assert stream.getvalue().rstrip(" ").endswith("3/10 steps 0.5 steps/s, 14s left, loss 1.5000")  # padded over the last


def test_progress_written_to_a_log_is_whole_lines_at_most_every_log_interval(monkeypatch):
    clock = iter([0.0, 1.0, 2.0, 40.0, 41.0, 75.0, 80.0, 81.0])  # start; steps at 1, 2, 40, 41, 75, 80 s; finish
    monkeypatch.setattr("tfdialemb.core.progress.time.perf_counter", lambda: next(clock))
    stream = io.StringIO()
    progress = Progress(None, "steps", stream=stream, log_interval=30.0)
    assert not progress.terminal  # a StringIO is not a terminal
    progress.advance(1, "loss 2.0")  # 1 s: the first line
    progress.advance(1, "loss 1.9")  # 2 s: within 30 s of it, not written
    progress.message("step 2: validation 0.5")
    progress.advance(1, "loss 1.8")  # 40 s: written
    progress.advance(1, "loss 1.7")  # 41 s: not written
    progress.advance(1, "loss 1.6")  # 75 s: written
    progress.advance(1, "loss 1.5")  # 80 s: not written, until the finish
    progress.finish()
    assert "\r" not in stream.getvalue()
    assert stream.getvalue().splitlines() == [
        "1 steps, loss 2.0", "step 2: validation 0.5",
        "3 steps 0.051 steps/s, loss 1.8",  # 2 steps in the 39 s after the first
        "5 steps 0.054 steps/s, loss 1.6",  # 4 in 74 s
        "6 steps 0.062 steps/s, loss 1.5"]  # the finish: 5 in 80 s


def test_progress_in_a_log_does_not_repeat_the_line_just_written_when_it_finishes():
    stream = io.StringIO()
    progress = Progress(3, "sentences", stream=stream, log_interval=30.0)
    progress.advance(3)  # the total: finishes, writing the last line once
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[==============================] 3/3 sentences")


def test_atomic_directory_appears_complete_or_not_at_all(tmp_path):
    from tfdialemb.core.files import atomic_directory

    target = tmp_path / "out"
    with atomic_directory(str(target)) as staging:
        (tmp_path / staging / "a").write_text("1")
        assert not target.exists()
    assert sorted(os.listdir(target)) == ["a"]
    with pytest.raises(FileExistsError):
        with atomic_directory(str(target)) as staging:
            pass
    with pytest.raises(RuntimeError):
        with atomic_directory(str(target), replace=True) as staging:
            (tmp_path / staging / "b").write_text("2")
            raise RuntimeError("interrupted")
    assert sorted(os.listdir(target)) == ["a"]
    with atomic_directory(str(target), replace=True) as staging:
        (tmp_path / staging / "b").write_text("2")
    assert sorted(os.listdir(target)) == ["b"] and sorted(os.listdir(tmp_path)) == ["out"]


def _float_flags():
    """A float Option with bounds, a plain float flag and a multi-float flag, as commands define them."""
    flag_values = flags.FlagValues()
    Option("temperature", 0.05, "τ", lower_bound=0.0).define(flag_values=flag_values)
    flags.DEFINE_float("learning_rate", None, "peak", lower_bound=0.0, flag_values=flag_values)
    flags.DEFINE_multi_float("weights", [], "per task", flag_values=flag_values)
    return flag_values


@pytest.mark.parametrize("argument", ["--temperature=nan", "--temperature=inf", "--learning_rate=NaN",
                                      "--weights=0.5 --weights=nan"])
def test_every_float_flag_refuses_nan_and_the_infinities_at_parse_time(argument, capsys):
    with pytest.raises(SystemExit) as exited:
        parse_flags(["command", *argument.split()], _float_flags())
    assert exited.value.code == 2
    refused = argument.split()[-1].split("=")[0]
    assert capsys.readouterr().err.startswith(f"error: {refused}=")


def test_finite_float_flags_parse(capsys):
    flag_values = _float_flags()
    parse_flags(["command", "--temperature=0.1", "--learning_rate=1e-5", "--weights=0.5"], flag_values)
    assert (flag_values.temperature, flag_values.learning_rate, flag_values.weights) == (0.1, 1e-5, [0.5])
    assert capsys.readouterr().err == ""
    assert ARGUMENTS == ["--temperature=0.1", "--learning_rate=1e-5", "--weights=0.5"]  # what a report records


def _layout_flags():
    flag_values = flags.FlagValues()
    Option("pair_layout", "paper", "layout", choices=("paper", "ums")).define(flag_values=flag_values)
    flags.DEFINE_string("name", None, "a string flag", flag_values=flag_values)
    return flag_values


@pytest.mark.parametrize("arguments", [["--fgc_input=ums"], ["--fgc_input", "ums"], ["-fgc_input=ums"]])
def test_a_former_flag_name_sets_the_new_flag_with_one_warning(arguments, capsys):
    flag_values = _layout_flags()
    parse_flags(["command", *arguments, "--name=--fgc_input"], flag_values)
    assert flag_values.pair_layout == "ums" and flag_values["pair_layout"].present
    assert flag_values.name == "--fgc_input"  # a value, not a flag
    assert capsys.readouterr().err == ("warning: --fgc_input is now --pair_layout; the old name will be refused "
                                       "in the next release\n")
    assert ARGUMENTS == [*arguments, "--name=--fgc_input"]  # the report records the command as given


def test_a_former_flag_name_in_a_flagfile_sets_the_new_flag(tmp_path, capsys):
    flagfile = tmp_path / "old.cfg"
    flagfile.write_text("--fgc_input=ums\n--name=x\n", encoding="utf-8")
    flag_values = _layout_flags()
    parse_flags(["command", f"--flagfile={flagfile}"], flag_values)
    assert (flag_values.pair_layout, flag_values.name) == ("ums", "x")
    assert "--fgc_input is now --pair_layout" in capsys.readouterr().err


def test_arguments_after_the_end_of_flags_are_not_renamed():
    assert current_flag_names(["--fgc_input=ums", "--", "--fgc_input=paper"], {"pair_layout"}) == (
        ["--pair_layout=ums", "--", "--fgc_input=paper"], ["fgc_input"])


def test_a_former_flag_name_is_unknown_to_a_command_without_the_new_flag(capsys):
    with pytest.raises(SystemExit) as exited:
        parse_flags(["command", "--fgc_input=ums"], _float_flags())
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "fgc_input" in err and "pair_layout" not in err


def test_reports_are_strict_json_with_undefined_values_null_and_named(tmp_path, capsys):
    report = {"task": "dsts", "metrics": {"spearman": float("nan"), "pairs": 3,
                                          "views": {"mean": {"map": float("inf"), "mrr": 0.5}}},
              "curve": [1.0, float("-inf")]}
    text = write_report(str(tmp_path / "report.json"), report)
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in a report")) == {
        "task": "dsts", "metrics": {"spearman": None, "pairs": 3, "views": {"mean": {"map": None, "mrr": 0.5}}},
        "curve": [1.0, None]}
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == text + "\n"
    assert capsys.readouterr().err.splitlines() == [
        "warning: metrics.spearman is nan, written as null", "warning: metrics.views.mean.map is inf, written as null",
        "warning: curve[1] is -inf, written as null"]
    assert report_json({"a": 1.5}, indent=None) == '{"a": 1.5}'
