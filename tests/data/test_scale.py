"""Converting and building 100,000 dialogues: bounded peak memory, and a killed build leaves
nothing a reader would take as complete. Slow (minutes); run with `bash run_tests.sh --runslow`.

Memory is compared with a run ten times smaller, measured the same way: a streaming pipeline
peaks at about the same resident size for both.
"""
import os
import signal
import subprocess
import sys
import time

import pytest

from tfdialemb.data.records import IncompleteBuildError, read_manifest

WORDS = ("hello how are you fine thanks book a taxi hotel please need help good morning the "
         "to and of is not work").split()
PEAK = ("import resource, runpy, sys; sys.argv = ['tfdialemb.data'] + sys.argv[1:]\n"
        "try:\n    runpy.run_module('tfdialemb.data', run_name='__main__')\n"
        "finally:\n    print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")


def write_native(path, dialogues):
    """dial2vec raw sessions (`session_id \\t role \\t text \\t topic`), 2-8 turns each."""
    with open(path, "w", encoding="utf-8") as f:
        for d in range(dialogues):
            for t in range(2 + d % 7):
                words = " ".join(WORDS[(d * 7 + t * 3 + k) % len(WORDS)] for k in range(3 + (d + t) % 9))
                f.write(f"s{d}\t{t % 2}\t{words}\ttopic{d % 5}\n")


def run_data(*args):
    result = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    peak = [line for line in result.stderr.splitlines() if line.startswith("PEAK_KB")][-1]
    return int(peak.split()[1]) / 1024.0


def convert_and_build(tmp_path, dialogues, checkpoint):
    native = tmp_path / f"native{dialogues}.tsv"
    write_native(native, dialogues)
    jsonl = tmp_path / f"corpus{dialogues}.jsonl"
    convert_mb = run_data("convert", "--format=dial2vec_sessions", f"--input={native}", f"--output={jsonl}")
    build_mb = run_data("build", "--method=mlm", f"--input={jsonl}", f"--output_dir={tmp_path}/build{dialogues}",
                        f"--init_checkpoint={checkpoint}", "--max_length=32", "--num_shards=8")
    return jsonl, convert_mb, build_mb


@pytest.mark.slow
def test_memory_stays_bounded_and_a_killed_build_is_never_complete(tmp_path, hf_safetensors_dir):
    _, small_convert, small_build = convert_and_build(tmp_path, 10_000, hf_safetensors_dir)
    jsonl, big_convert, big_build = convert_and_build(tmp_path, 100_000, hf_safetensors_dir)
    print(f"\npeak RSS convert: {small_convert:.0f} MB (10k) vs {big_convert:.0f} MB (100k); "
          f"build: {small_build:.0f} MB (10k) vs {big_build:.0f} MB (100k)")
    assert big_convert < small_convert * 1.25 + 50
    assert big_build < small_build * 1.25 + 50
    assert read_manifest(str(tmp_path / "build100000"))["counts"]["dialogues"] == 100_000

    target = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-m", "tfdialemb.data", "build", "--method=mlm",
                                f"--input={jsonl}", f"--output_dir={target}",
                                f"--init_checkpoint={hf_safetensors_dir}", "--max_length=32"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline:  # kill once shards are being written
        staging = [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-killed")]
        if staging and any(f.stat().st_size > 1_000_000 for f in staging[0].iterdir()):
            break
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not target.exists()
    with pytest.raises(IncompleteBuildError):
        read_manifest(str(staging[0]))
