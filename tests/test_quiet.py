"""Quiet start-up: TensorFlow's two start-up notices that its log level cannot reach are filtered
from a command's standard error; everything else passes unchanged."""
import os
import subprocess
import sys
import threading

from tfdialemb import quiet

CUINIT = (b"2026-11-27 02:22:39.471607: E external/local_xla/xla/stream_executor/cuda/cuda_platform.cc:51] "
          b"failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)")
ONEDNN = (b"2026-11-27 02:22:43.580789: E tensorflow/core/util/util.cc:131] oneDNN supports DT_INT64 only on "
          b"platforms with AVX-512. Falling back to the default Eigen-based implementation if present.")
REAL_ERROR = b"2026-11-27 02:22:44.000001: E tensorflow/core/framework/op_kernel.cc:1] something real failed"


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


def test_only_the_two_known_lines_are_dropped_even_when_split_across_writes():
    mention = b"our own line quoting 'failed call to cuInit' is kept"
    output = _forwarded(CUINIT[:30], CUINIT[30:] + b"\nI1127 loaded checkpoint\n" + ONEDNN[:70],
                        ONEDNN[70:] + b"\n" + REAL_ERROR + b"\n" + mention + b"\n")
    assert output == b"I1127 loaded checkpoint\n" + REAL_ERROR + b"\n" + mention + b"\n"


def test_a_partial_line_such_as_a_progress_bar_passes_at_once():
    source_read, source_write = os.pipe()
    target_read, target_write = os.pipe()
    thread = threading.Thread(target=quiet.forward, args=(source_read, target_write))
    thread.start()
    os.write(source_write, b"\r[=====.....] 1/2 steps")
    # Read before the writer closes: the bar must not wait for a newline that never comes.
    assert os.read(target_read, 100) == b"\r[=====.....] 1/2 steps"
    os.close(source_write)
    thread.join(timeout=10)
    for fd in (source_read, target_read, target_write):
        os.close(fd)


def test_commands_are_recognised_and_verbose_keeps_the_log_level(monkeypatch):
    assert quiet.command_arguments(["python", "-m", "tfdialemb.encode", "--input=x"]) == ["--input=x"]
    assert quiet.command_arguments(["python", "-m", "data_prep.build_sr_set"]) == []
    assert quiet.command_arguments(["python", "/venv/bin/tfdialemb-export", "-v"]) == ["-v"]
    assert quiet.command_arguments(["python", "-m", "pytest", "tests"]) is None
    assert quiet.command_arguments(["python", "-c", "import tfdialemb"]) is None
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    quiet.configure(["python", "-m", "tfdialemb.encode", "-v"])  # verbose: no level, no filter
    assert "TF_CPP_MIN_LOG_LEVEL" not in os.environ
    quiet.configure(["python", "-m", "pytest"])  # a library import: only the level
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "2"


def test_a_command_prints_neither_notice(tmp_path, hf_safetensors_dir):
    (tmp_path / "in.txt").write_text("hello world\nfine thanks\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, "-m", "tfdialemb.encode", f"--init_checkpoint={hf_safetensors_dir}",
                             f"--input={tmp_path / 'in.txt'}", f"--output={tmp_path / 'out.npy'}"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "cuInit" not in result.stderr and "oneDNN" not in result.stderr
    assert "2/2 sentences" in result.stderr  # the command's own progress passes
