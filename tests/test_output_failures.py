"""Outputs that cannot be written, interruptions and what killed runs leave: a full disk (a tmpfs
filled up, where the test may mount one) or a read-only output ends every command before its work
with one line naming the path and exit status 2; Ctrl-C ends it with one line and exit status
130; the next run of a command removes the staging entries an earlier run of its own left when
it was killed, and nothing else."""
import errno
import io
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import tensorflow as tf

from tiny_corpus import corpus
from tfdialemb.core import cli
from tfdialemb.core.progress import Progress
from tfdialemb.dialogue import write_dialogues
from tfdialemb.core.files import (OutputError, atomic_directory, atomic_open, check_writable, prepare_output,
                             remove_stale_staging)

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def _mount_tmpfs(place, options):
    place.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(place)],
                          capture_output=True, check=False).returncode == 0


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs filled to the last byte; skipped where no tmpfs can be mounted (not root)."""
    place = tmp_path / "full"
    if not _mount_tmpfs(place, "size=64k"):
        pytest.skip("mounting a tmpfs needs root")
    try:
        _fill(place)
        yield place
    finally:
        subprocess.run(["umount", "-l", str(place)], check=False)


def _fill(place):
    """Writes a file into `place` until its file system is full."""
    handle = os.open(place / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(handle, bytes(4096))
    except OSError:
        pass
    finally:
        os.close(handle)


@pytest.fixture
def read_only(tmp_path):
    """A read-only tmpfs, else (no mount without root) a directory without write permission."""
    place = tmp_path / "read_only"
    if _mount_tmpfs(place, "ro,size=64k"):
        yield place
        subprocess.run(["umount", "-l", str(place)], check=False)
    else:
        place.chmod(0o555)
        yield place
        place.chmod(0o755)


READ_ONLY_REASONS = ("read-only file system", "permission denied")


def test_a_full_disk_is_refused_naming_the_path_and_the_reason(full_disk):
    with pytest.raises(OutputError) as full:
        check_writable(str(full_disk / "new" / "out.npy"))
    assert str(full.value) == f"{full_disk / 'new' / 'out.npy'}: cannot write there: no space left on device"
    assert os.listdir(full_disk) == ["filler"]
    check_writable(str(full_disk.parent / "elsewhere" / "out.npy"))  # a writable place passes
    (full_disk.parent / "existing.npy").write_bytes(b"")
    check_writable(str(full_disk.parent / "existing.npy"))  # an existing output's place is its directory
    with pytest.raises(OutputError, match="existing.npy is not a directory"):
        check_writable(str(full_disk.parent / "existing.npy" / "below.npy"))


def test_a_read_only_output_is_refused_naming_the_path_and_the_reason(read_only):
    with pytest.raises(OutputError) as refused:
        prepare_output(str(read_only / "report.json"))
    assert str(refused.value).startswith(f"{read_only / 'report.json'}: cannot write there: ")
    assert str(refused.value).endswith(READ_ONLY_REASONS)


def test_a_command_ends_write_errors_and_ctrl_c_with_one_line(full_disk, capsys):
    """`cli.guarded`: TensorFlow's error for a full disk met during the work, an OSError of a
    read-only place, and Ctrl-C over an open progress bar; any other error is raised as it was."""
    def write_records(argv):
        del argv
        with tf.io.TFRecordWriter(str(full_disk / "records")) as writer:
            writer.write(bytes(1 << 20))
        return 0

    assert cli.guarded(write_records)([]) == 2
    assert capsys.readouterr().err == f"error: {full_disk / 'records'}: cannot write there: no space left on device\n"

    def interrupted(argv):
        del argv
        Progress(10, "sentences", interval=0.0, terminal=True).advance(3)
        raise KeyboardInterrupt("saved step 3 to model; the same command resumes from it")

    assert cli.guarded(interrupted)([]) == cli.INTERRUPTED == 130
    bar, message, rest = capsys.readouterr().err.split("\n")
    assert bar.startswith("\r[=========") and "3/10 sentences" in bar
    assert (message, rest) == ("interrupted: saved step 3 to model; the same command resumes from it", "")

    def unrelated(argv):
        raise RuntimeError("not an output error")

    with pytest.raises(RuntimeError, match="not an output error"):
        cli.guarded(unrelated)([])


def test_a_disk_that_fills_during_the_write_is_refused_naming_the_output(tmp_path, monkeypatch):
    """A write that fails midway, past `check_writable`: numpy's short write (an OSError without
    errno) and a full disk met by a text write (an OSError naming no file) each end as one line
    naming the output, and leave nothing behind."""
    from tfdialemb.inference.embedding_files import write_embeddings

    def short_write(file, array):
        file.write(b"x" * 100)
        raise OSError("33792 requested and 18400 written")

    monkeypatch.setattr("tfdialemb.core.files.np.save", short_write)
    with pytest.raises(OutputError) as error:
        write_embeddings(str(tmp_path / "e.npy"), ["hello"], np.zeros([1, 4], np.float32))
    assert str(error.value) == (f"{tmp_path / 'e.npy'}: cannot write there: the write stopped short "
                                "(33792 requested and 18400 written; is the disk full?)")
    assert cli.guarded(lambda argv: write_embeddings(str(tmp_path / "e.npy"), ["hello"],
                                                     np.zeros([1, 4], np.float32)))([]) == 2

    class FullFile(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("tfdialemb.core.files.os.fdopen", lambda handle, *args, **kwargs: (os.close(handle), FullFile())[1])
    with pytest.raises(OutputError) as error:
        write_embeddings(str(tmp_path / "e.jsonl"), ["hello"], np.zeros([1, 4], np.float32))
    assert str(error.value) == f"{tmp_path / 'e.jsonl'}: cannot write there: no space left on device"
    assert os.listdir(tmp_path) == []


@pytest.fixture
def corpus_file(tmp_path):
    write_dialogues(corpus(n=12, seed=1), str(tmp_path / "train.jsonl"))
    (tmp_path / "lines.txt").write_text("hello world\n" * 5, encoding="utf-8")
    return tmp_path / "train.jsonl"


def _commands(tmp_path, hf_dir, place):
    """train, export, evaluate and encode writing into `place`."""
    return {
        "train": ("-m", "tfdialemb.train", "--method=mge", f"--train_file={tmp_path / 'train.jsonl'}",
                  f"--model_dir={place / 'model'}", f"--init_checkpoint={hf_dir}", "--max_steps=2", "--batch_size=4",
                  "--max_length=16", "--freeze_layers=0", "--turns=1", "--negatives=2", "--num_shards=1"),
        "export": ("-m", "tfdialemb.export", f"--init_checkpoint={hf_dir}", f"--export_dir={place / 'export'}"),
        "evaluate": ("-m", "tfdialemb.evaluate", "--task=dialogue", f"--eval_file={tmp_path / 'train.jsonl'}",
                     "--label_key=domain", f"--init_checkpoint={hf_dir}", f"--output={place / 'report.json'}"),
        "encode": ("-m", "tfdialemb.encode", f"--init_checkpoint={hf_dir}", f"--input={tmp_path / 'lines.txt'}",
                   f"--output={place / 'embeddings.npy'}"),
    }


def _run_all(commands):
    processes = {name: subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=ENV) for name, args in commands.items()}
    return {name: (p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for name, p in processes.items()}


def _output_flag(args):
    return next(a.split("=", 1)[1] for a in args if a.startswith(("--model_dir", "--export_dir", "--output")))


@pytest.fixture
def unwritable(tmp_path):
    """(a place, the reason a write there fails): a full tmpfs where the test may mount one, else a
    directory without write permission (which stops every user but root)."""
    place = tmp_path / "unwritable"
    if _mount_tmpfs(place, "size=64k"):
        _fill(place)
        yield place, ("no space left on device",)
        subprocess.run(["umount", "-l", str(place)], check=False)
    else:
        place.chmod(0o555)
        yield place, READ_ONLY_REASONS
        place.chmod(0o755)


def test_commands_on_a_full_disk_exit_2_with_one_line_before_working(tmp_path, corpus_file, hf_safetensors_dir,
                                                                     unwritable):
    place, reasons = unwritable
    before = os.listdir(place)
    commands = _commands(tmp_path, hf_safetensors_dir, place)
    for name, (status, _, err) in _run_all(commands).items():
        assert status == 2, (name, err[-2000:])
        assert "Traceback" not in err, (name, err[-2000:])
        last = err.splitlines()[-1]
        assert last.startswith(f"error: {_output_flag(commands[name])}: cannot write there: "), (name, last)
        assert last.endswith(reasons), (name, last)
    assert os.listdir(place) == before


def _interrupt_when(process, seen, timeout=300.0):
    """SIGINTs `process` once `seen(stderr so far)` holds; (exit status, stderr)."""
    chunks = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: process.stderr.read(1), "")), daemon=True)
    reader.start()
    deadline = time.time() + timeout
    while time.time() < deadline and process.poll() is None and not seen("".join(chunks)):
        time.sleep(0.05)
    assert process.poll() is None, "".join(chunks)[-2000:]
    process.send_signal(signal.SIGINT)
    status = process.wait(timeout=300)
    reader.join(timeout=10)
    return status, "".join(chunks)


@pytest.mark.slow
def test_ctrl_c_ends_a_command_with_one_line_and_exit_130(tmp_path, corpus_file, hf_safetensors_dir):
    (tmp_path / "lines.txt").write_text("".join(f"sentence number {i} of many\n" for i in range(200_000)),
                                        encoding="utf-8")
    model = tmp_path / "model"
    commands = _commands(tmp_path, hf_safetensors_dir, tmp_path)
    train_args = [a for a in commands["train"] if not a.startswith("--max_steps")] + [
        "--max_steps=100000", "--checkpoint_every=2"]
    train = subprocess.Popen([sys.executable, *train_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=ENV)
    encode = subprocess.Popen([sys.executable, *commands["encode"], "--batch_size=8"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=ENV)
    status, err = _interrupt_when(encode, lambda err: "sentences" in err and "/s" in err)
    assert status == 130 and "Traceback" not in err, err[-2000:]
    assert err.splitlines()[-1] == "interrupted" and not (tmp_path / "embeddings.npy").exists()
    status, err = _interrupt_when(train, lambda err: os.path.exists(model / "ckpt-2.index"))
    assert status == 130 and "Traceback" not in err, err[-2000:]
    last = err.splitlines()[-1]
    assert last.startswith("interrupted: saved step ") and last.endswith(
        f" to {model}; the same command resumes from it")
    step = int(last.split("saved step ")[1].split()[0])
    assert tf.train.latest_checkpoint(str(model)).endswith(f"ckpt-{step}")
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")]


FINALISER_INTERRUPTED = """
import time
from tfdialemb.core.cli import end_quietly_on_interrupt
end_quietly_on_interrupt()
class Finalised:
    def __del__(self):
        raise KeyboardInterrupt
Finalised()
time.sleep(30)
print("not interrupted")
"""


@pytest.mark.slow
def test_ctrl_c_while_a_command_loads_or_in_a_finaliser_ends_it_with_one_line(tmp_path, corpus_file,
                                                                               hf_safetensors_dir):
    """Before `guarded` runs: Ctrl-C during TensorFlow's import ends the process by SIGINT (130 to
    a shell) with one line; one Python cannot raise (in a finaliser) is delivered afterwards."""
    loading = subprocess.Popen([sys.executable, *_commands(tmp_path, hf_safetensors_dir, tmp_path)["encode"]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    time.sleep(2.0)  # tfdialemb's import of TensorFlow takes longer
    loading.send_signal(signal.SIGINT)
    _, err = loading.communicate(timeout=300)
    assert loading.returncode in (-signal.SIGINT, cli.INTERRUPTED) and "Traceback" not in err, err[-3000:]
    assert err.splitlines()[-1] == "interrupted"
    finaliser = subprocess.run([sys.executable, "-c", FINALISER_INTERRUPTED], capture_output=True, text=True,
                               env=ENV, timeout=300)
    assert finaliser.returncode == -signal.SIGINT and "not interrupted" not in finaliser.stdout
    assert finaliser.stderr.splitlines()[-1] == "interrupted" and "Traceback" not in finaliser.stderr


def test_a_later_run_removes_only_the_dead_staging_entries_of_its_own_targets(tmp_path):
    dead_file = tmp_path / ".tmp-k2j4x9_a-out.jsonl"  # atomic_open's name for out.jsonl
    dead_directory = tmp_path / f".tmp-7-{'0' * 32}"  # atomic_directory's for version 7
    other_target = tmp_path / ".tmp-k2j4x9_a-other.jsonl"
    for entry in (dead_file, other_target):
        entry.write_text("half")
    dead_directory.mkdir()
    (dead_directory / "saved_model.pb").write_text("half")
    with atomic_open(str(tmp_path / "out.jsonl")) as live, atomic_directory(str(tmp_path / "8")) as staging:
        live.write("being written")
        assert remove_stale_staging(str(tmp_path), "out\\.jsonl") == [dead_file.name]
        assert remove_stale_staging(str(tmp_path), "[0-9]+") == [dead_directory.name]
        assert os.path.isdir(staging) and os.path.exists(live.name)  # held by this run: kept
    assert sorted(os.listdir(tmp_path)) == [other_target.name, "8", "out.jsonl"]
    (tmp_path / f".tmp-8-{'1' * 32}").mkdir()  # a killed writer of 8: the next one removes it
    with atomic_directory(str(tmp_path / "8"), replace=True) as staging:
        assert sorted(os.listdir(tmp_path)) == [os.path.basename(staging), other_target.name, "8", "out.jsonl"]


def test_the_next_export_removes_the_staging_directory_a_killed_one_left(tmp_path, hf_safetensors_dir):
    export_dir = tmp_path / "export"
    args = [sys.executable, "-m", "tfdialemb.export", f"--init_checkpoint={hf_safetensors_dir}",
            f"--export_dir={export_dir}"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    deadline = time.time() + 300
    staged = []
    while time.time() < deadline and process.poll() is None and not staged:
        staged = [n for n in os.listdir(export_dir) if n.startswith(".tmp-1-")] if export_dir.is_dir() else []
        time.sleep(0.01)
    assert staged, "the export ended before it staged its version"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert os.listdir(export_dir) == staged
    again = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"removed {staged[0]}, left in {export_dir} by an interrupted run" in again.stderr
    assert os.listdir(export_dir) == ["1"]
