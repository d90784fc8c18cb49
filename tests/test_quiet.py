"""Quiet start-up: TensorFlow's notices that its log level cannot reach (cuInit, oneDNN) are filtered
from a command's standard error; everything else passes unchanged, in order, and whatever happens
to the filter or the command.

The process-level tests run small scripts that load tfdialemb/core/quiet.py by its path (no TensorFlow)
and start the filter as a command's import would."""
import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time

import pytest
from absl import flags

from tfdialemb.core import quiet
from tfdialemb.core.cli import parse_flags

CUINIT = (b"2026-11-27 02:22:39.471607: E external/local_xla/xla/stream_executor/cuda/cuda_platform.cc:51] "
          b"failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)")
ONEDNN = (b"2026-11-27 02:22:43.580789: E tensorflow/core/util/util.cc:131] oneDNN supports DT_INT64 only on "
          b"platforms with AVX-512. Falling back to the default Eigen-based implementation if present.")
ONEDNN_INT32 = (b"2026-11-28 14:02:11.104522: E tensorflow/core/util/util.cc:131] oneDNN supports DT_INT32 only on "
                b"platforms with AVX-512. Falling back to the default Eigen-based implementation if present.")
REAL_ERROR = b"2026-11-27 02:22:44.000001: E tensorflow/core/framework/op_kernel.cc:1] something real failed"

SCRIPT_START = (
    "import importlib.util, os, signal, subprocess, sys, time\n"
    f"spec = importlib.util.spec_from_file_location('quiet', {quiet.__file__!r})\n"
    "quiet = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(quiet)\n"
)
AS_A_COMMAND = "quiet.configure(['python', '-m', 'tfdialemb.encode'])\n"
ALTERNATING = (  # 300 lines, even ones on stdout, odd ones on stderr, each flushed; a notice at 100
    "for i in range(300):\n"
    "    if i == 100:\n"
    f"        os.write(2, {CUINIT!r} + b'\\n')\n"
    "    print(('OUT' if i % 2 == 0 else 'ERR') + f' {i}', file=sys.stderr if i % 2 else sys.stdout, flush=True)\n"
)
ALTERNATING_LINES = [f"OUT {i}" if i % 2 == 0 else f"ERR {i}" for i in range(300)]


def _run_script(body, filtered=True, **kwargs):
    source = SCRIPT_START + (AS_A_COMMAND if filtered else "") + body
    return subprocess.run([sys.executable, "-c", source], timeout=60, check=False, **kwargs)


def _forwarded(*writes):
    """What `quiet.forward` passes on when `writes` arrive one after another."""
    source_read, source_write = os.pipe()
    target_read, target_write = os.pipe()
    thread = threading.Thread(target=quiet.forward, args=(source_read, target_write))
    thread.start()
    for data in writes:
        os.write(source_write, data)
    os.close(source_write)
    thread.join(timeout=10)
    os.close(target_write)
    with os.fdopen(target_read, "rb") as f:
        output = f.read()
    os.close(source_read)
    return output


def test_only_the_known_lines_are_dropped_even_when_split_across_writes():
    mention = b"our own line quoting 'failed call to cuInit' is kept"
    output = _forwarded(CUINIT[:30], CUINIT[30:] + b"\nI1127 loaded checkpoint\n" + ONEDNN[:70],
                        ONEDNN[70:] + b"\n" + REAL_ERROR + b"\n" + ONEDNN_INT32 + b"\n" + mention + b"\n")
    assert output == b"I1127 loaded checkpoint\n" + REAL_ERROR + b"\n" + mention + b"\n"


def test_a_partial_line_passes_at_once_or_after_the_hold_when_it_starts_with_a_digit():
    source_read, source_write = os.pipe()
    target_read, target_write = os.pipe()
    thread = threading.Thread(target=quiet.forward, args=(source_read, target_write))
    thread.start()
    # Read before the writer closes: neither partial line may wait for a newline that never comes.
    os.write(source_write, b"\r[=====.....] 1/2 steps")
    assert os.read(target_read, 100) == b"\r[=====.....] 1/2 steps"
    os.write(source_write, b"\n7")
    shown = b""
    while len(shown) < 2:  # "7" is released when its hold is up, with no more data or end of file
        shown += os.read(target_read, 100)
    assert shown == b"\n7"
    os.close(source_write)
    thread.join(timeout=10)
    for fd in (source_read, target_read, target_write):
        os.close(fd)


def test_a_held_line_waits_at_most_the_hold_from_its_first_byte_however_often_bytes_come():
    hold = quiet.HOLD_SECONDS
    lines = quiet.LineFilter()
    assert lines.feed(b"1", 0.0) == b""
    assert lines.seconds_left(0.25 * hold) == pytest.approx(0.75 * hold)
    assert lines.feed(b"2", 0.5 * hold) == b""
    assert lines.seconds_left(0.5 * hold) == pytest.approx(0.5 * hold)  # not restarted by the new byte
    assert lines.feed(b"3", hold) == b"123"
    assert lines.feed(b"4", 1.01 * hold) == b"4"  # the rest of a line whose start has gone on
    assert lines.feed(b"\n5", 1.02 * hold) == b"\n"  # a new line starting with a digit is held again
    assert lines.feed(b"\n", 1.03 * hold) == b"5\n"
    assert lines.feed(b"9" * (quiet.HOLD_BYTES + 1), 2 * hold) == b"9" * (quiet.HOLD_BYTES + 1)
    # A notice trickling in byte by byte within the hold is still recognised and dropped.
    lines = quiet.LineFilter()
    notice = CUINIT + b"\n"
    assert b"".join(lines.feed(notice[i:i + 1], i * hold / (2 * len(notice))) for i in range(len(notice))) == b""


def _written_in_background(fd, data):
    """A daemon thread that writes `data` to `fd` and closes it, so that a filter that stops
    reading fails the test instead of hanging it."""
    thread = threading.Thread(target=lambda: (os.write(fd, data), os.close(fd)), daemon=True)
    thread.start()
    return thread


def test_the_filter_keeps_draining_when_its_output_fails():
    """A closed pipe as the filter's output: the command's writes neither block nor fail."""
    source_read, source_write = os.pipe()
    target_read, target_write = os.pipe()
    os.close(target_read)
    errors = []

    def run():
        try:
            quiet.forward(source_read, target_write)
        except Exception as e:  # pylint: disable=broad-except
            errors.append(e)

    filter_thread = threading.Thread(target=run, daemon=True)
    filter_thread.start()
    writer = _written_in_background(source_write, b"line of output\n" * 100000)  # 1.5 MB, more than a pipe holds
    writer.join(timeout=10)
    filter_thread.join(timeout=10)
    assert not writer.is_alive() and not filter_thread.is_alive() and not errors
    for fd in (source_read, target_write):
        os.close(fd)


def test_a_non_blocking_output_that_is_full_is_waited_for():
    source_read, source_write = os.pipe()
    target_read, target_write = os.pipe()
    fcntl.fcntl(target_write, fcntl.F_SETFL, fcntl.fcntl(target_write, fcntl.F_GETFL) | os.O_NONBLOCK)
    filter_thread = threading.Thread(target=quiet.forward, args=(source_read, target_write), daemon=True)
    filter_thread.start()
    sent = b"".join(b"%d: a line of progress\n" % i for i in range(20000))  # 0.5 MB
    received = []

    def slow_reader():
        while True:
            data = os.read(target_read, 4096)
            if not data:
                return
            received.append(data)
            time.sleep(0.0005)

    reader = threading.Thread(target=slow_reader, daemon=True)
    reader.start()
    _written_in_background(source_write, sent).join(timeout=30)
    filter_thread.join(timeout=30)
    os.close(target_write)
    reader.join(timeout=30)
    assert b"".join(received) == sent
    for fd in (source_read, target_read):
        os.close(fd)


def test_a_fault_in_the_filter_costs_the_filtering_not_the_output(monkeypatch):
    def broken(line):
        raise RuntimeError(f"fault on {line[:10]!r}")

    monkeypatch.setattr(quiet, "is_noise", broken)
    sent = [b"first\n", CUINIT[:40], CUINIT[40:] + b"\n", b"last\n"]
    assert _forwarded(*sent) == b"".join(sent)


def test_a_command_runs_without_the_filter_when_it_cannot_be_started(monkeypatch):
    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    descriptors = sorted(os.listdir("/proc/self/fd"))
    stderr_before = os.fstat(2)
    quiet.configure(["python", "-m", "tfdialemb.encode"])
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "2"
    assert os.path.samestat(os.fstat(2), stderr_before)
    assert sorted(os.listdir("/proc/self/fd")) == descriptors  # nothing left open


@pytest.mark.parametrize("destination", ["file", "pipe"])
def test_stdout_and_stderr_to_one_place_keep_their_order(tmp_path, destination):
    """`cmd > log 2>&1` and `cmd 2>&1 | tee log`: the order written, as without the filter."""
    expected = "\n".join(ALTERNATING_LINES) + "\n"
    for filtered in (False, True):
        if destination == "file":
            with open(tmp_path / "log", "wb") as log:
                _run_script(ALTERNATING, filtered, stdout=log, stderr=subprocess.STDOUT)
            output = (tmp_path / "log").read_text()
        else:
            output = _run_script(ALTERNATING, filtered, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True).stdout
        notice = CUINIT.decode() + "\n"
        assert output == (expected if filtered else expected.replace("OUT 100\n", notice + "OUT 100\n"))


def _read_until_closed(controller):
    """What the processes writing to a pseudo-terminal showed on it, once all have closed it."""
    shown = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        assert ready, "the terminal went silent"
        try:
            data = os.read(controller, 65536)
        except OSError:  # every writer has closed the terminal
            break
        if not data:
            break
        shown += data
    os.close(controller)
    return shown


def test_stdout_and_stderr_on_one_terminal_keep_their_order():
    """A terminal opened twice (two open files, one device): one pipe through the filter."""
    controller, terminal = os.openpty()
    terminal_again = os.open(os.ttyname(terminal), os.O_RDWR | os.O_NOCTTY)
    process = subprocess.Popen([sys.executable, "-c", SCRIPT_START + AS_A_COMMAND + ALTERNATING],
                               stdout=terminal, stderr=terminal_again)
    os.close(terminal)
    os.close(terminal_again)
    shown = _read_until_closed(controller)
    assert process.wait(timeout=60) == 0
    assert shown.decode().replace("\r\n", "\n") == "\n".join(ALTERNATING_LINES) + "\n"


def test_stderr_alone_is_filtered_and_stdout_left_as_it_is(tmp_path):
    source = (SCRIPT_START + "stdout_before = os.fstat(1)\n" + AS_A_COMMAND + ALTERNATING
              + "print('stdout untouched:', os.path.samestat(os.fstat(1), stdout_before))\n")
    with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
        subprocess.run([sys.executable, "-c", source], stdout=out, stderr=err, timeout=60, check=True)
    assert (tmp_path / "out").read_text().split("\n") == [*ALTERNATING_LINES[::2], "stdout untouched: True", ""]
    assert (tmp_path / "err").read_text().split("\n") == [*ALTERNATING_LINES[1::2], ""]


def _interruptible():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_exit_status_kill_and_ctrl_c_pass_through_and_lose_no_output():
    lines = "".join(f"line {i}\n" for i in range(2000))
    exits = _run_script(f"sys.stderr.write({lines!r})\nsys.exit(3)\n", capture_output=True, text=True)
    assert (exits.returncode, exits.stderr) == (3, lines)
    killed = _run_script(f"sys.stderr.write({lines!r})\nsys.stderr.flush()\nos.kill(os.getpid(), signal.SIGKILL)\n",
                         capture_output=True, text=True)
    assert (killed.returncode, killed.stderr) == (-signal.SIGKILL, lines)
    # Ctrl-C reaches the terminal's whole process group, the filter too: it writes the traceback.
    # The command starts as from a shell, SIGINT neither ignored nor blocked, whatever this test
    # process was left with (both are inherited through exec).
    interrupted = subprocess.Popen(
        [sys.executable, "-c", SCRIPT_START + AS_A_COMMAND + "print('ready', flush=True)\ntime.sleep(60)\n"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True,
        preexec_fn=_interruptible)
    assert interrupted.stdout.readline() == "ready\n"
    os.killpg(interrupted.pid, signal.SIGINT)
    _, stderr = interrupted.communicate(timeout=60)
    assert interrupted.returncode == -signal.SIGINT  # the shell's 130
    assert stderr.rstrip().endswith("KeyboardInterrupt")


def test_exit_waits_for_the_filter_not_for_children_holding_stderr(tmp_path):
    """A child still holding standard error: the command's last line is written when it exits,
    and the exit does not wait for the child (the wait bound is raised to 60 s to show it)."""
    body = ("quiet.DRAIN_WAIT_SECONDS = 60\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            "print(child.pid, flush=True)\n"
            "sys.stderr.write('the last line\\n')\n")
    with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
        started = time.monotonic()
        result = _run_script(body, stdout=out, stderr=err)
        waited = time.monotonic() - started
    child = int((tmp_path / "out").read_text())
    try:
        assert result.returncode == 0
        assert waited < 30
        assert (tmp_path / "err").read_text() == "the last line\n"
    finally:
        os.kill(child, signal.SIGKILL)


def test_verbose_is_read_as_absl_reads_it_flagfiles_included(tmp_path):
    flagfile = tmp_path / "verbose.cfg"
    flagfile.write_text("--verbose\n", encoding="utf-8")
    cases = {
        ("-v",): True, ("--verbose",): True, ("-verbose",): True, ("--verbose=t",): True, ("--verbose=1",): True,
        ("--verbose=false",): False, ("-v", "--noverbose"): False, ("--input=x", "--", "-v"): False,
        ("--input=x",): False, (f"--flagfile={flagfile}",): True, (f"--flagfile={flagfile}", "--noverbose"): False,
        ("--flagfile", str(flagfile)): True,
    }
    assert {case: quiet.verbose_requested(case) for case in cases} == cases
    for arguments, verbose in cases.items():  # the command's own parse agrees
        values = flags.FlagValues()
        flags.DEFINE_string("input", None, "", flag_values=values)
        parse_flags(["command", *arguments], values)
        assert values.verbose is verbose, arguments


def test_a_flagfile_that_reading_uses_up_is_left_to_the_command(tmp_path):
    """A pipe (bash's `--flagfile=<(...)`) is not read before the command parses its flags: with
    no writer, opening it would not even return."""
    fifo = tmp_path / "flags.fifo"
    os.mkfifo(fifo)
    answers = []
    reader = threading.Thread(target=lambda: answers.append(quiet.verbose_requested([f"--flagfile={fifo}", "-v"])),
                              daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert answers == [True]
    assert quiet.verbose_requested(["--flagfile=/no/such/file", "-v"])  # the command reports the missing file


def test_a_verbose_flagfile_keeps_tensorflows_logging(tmp_path, monkeypatch):
    flagfile = tmp_path / "verbose.cfg"
    flagfile.write_text("--verbose\n", encoding="utf-8")

    def no_filter():
        raise AssertionError("the filter was started for a verbose run")

    monkeypatch.setattr(quiet, "start_filter", no_filter)
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    quiet.configure(["python", "-m", "tfdialemb.encode", f"--flagfile={flagfile}"])
    quiet.configure(["python", "/venv/bin/tfdialemb-export", "-v"])
    assert "TF_CPP_MIN_LOG_LEVEL" not in os.environ
    quiet.configure(["python", "-m", "pytest"])  # a library import: only the level
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "2"


@pytest.mark.parametrize("arguments", [["-v", "3"], ["-v=3"], ["-v", "-1"]])
def test_absl_short_verbosity_is_refused_with_its_long_name(arguments, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_flags(["command", *arguments], flags.FlagValues())
    assert exit_.value.code == 2
    assert "-v is short for --verbose and takes no value; for absl's log verbosity use --verbosity=N" in \
        capsys.readouterr().err


def test_commands_are_recognised():
    assert quiet.command_arguments(["python", "-m", "tfdialemb.encode", "--input=x"]) == ["--input=x"]
    assert quiet.command_arguments(["python", "-m", "data_prep.build_sr_set"]) == []
    assert quiet.command_arguments(["python", "/venv/bin/tfdialemb-export", "-v"]) == ["-v"]
    assert quiet.command_arguments(["python", "-m", "pytest", "tests"]) is None
    assert quiet.command_arguments(["python", "-c", "import tfdialemb"]) is None


def test_a_command_prints_neither_notice(tmp_path, hf_safetensors_dir):
    (tmp_path / "in.txt").write_text("hello world\nfine thanks\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, "-m", "tfdialemb.encode", f"--init_checkpoint={hf_safetensors_dir}",
                             f"--input={tmp_path / 'in.txt'}", f"--output={tmp_path / 'out.npy'}"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "cuInit" not in result.stderr and "oneDNN" not in result.stderr
    assert "2/2 sentences" in result.stderr  # the command's own progress passes


def test_a_terminal_behind_the_filter_is_still_known_as_one(tmp_path):
    """A progress bar redraws its line only on a terminal: the filter's pipe must not hide it."""
    report = SCRIPT_START + AS_A_COMMAND + "print(os.isatty(2), quiet.stderr_is_terminal(), file=sys.stderr)\n"
    step = ("sys.stderr.flush()\n"  # a step the command runs (the demo's, the grid's) writes through its filter
            f"subprocess.run([sys.executable, '-c', {report!r}], check=True)\n")
    controller, terminal = os.openpty()
    process = subprocess.Popen([sys.executable, "-c", report + step], stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    shown = _read_until_closed(controller)
    assert process.wait(timeout=60) == 0
    # fd 2 is the filter's pipe, the terminal behind it, in the command and in the step it runs
    assert shown.decode().split() == ["False", "True", "False", "True"]
    with open(tmp_path / "err", "wb") as err:
        subprocess.run([sys.executable, "-c", report + step], stdout=subprocess.DEVNULL, stderr=err, timeout=60,
                       check=True)
    assert (tmp_path / "err").read_text().split() == ["False", "False", "False", "False"]
