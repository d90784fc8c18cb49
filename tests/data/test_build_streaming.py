"""What a build holds and leaves: memory that does not grow with the corpus, the same bytes in every
process, no staging directory left for ever by a killed run, and an unwritable target refused
before any work."""
import contextlib
import os
import signal
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from absl import flags

import tfdialemb.data.__main__ as data_cli
from tfdialemb.core import files
from tfdialemb.data import build as build_module
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import ExampleBuilder, make_builder, register, unregister
from tfdialemb.data.example_codec import serialize_example
from tfdialemb.data.records import SEQUENCE, read_manifest
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tiny_corpus import TOKENIZER, WORDS


def _long_turn_corpus(count, seed=0):
    """`count` dialogues of 4 alternating turns of 100 words."""
    rng = np.random.default_rng(seed)
    return [Dialogue(f"d{i}", tuple(Turn("ab"[t % 2], " ".join(rng.choice(WORDS, size=100))) for t in range(4)))
            for i in range(count)]


def _build(path, output, method):
    return build(path, output, make_builder(method, {"negatives": 2}), TOKENIZER,
                 BuildOptions(max_length=16, num_shards=2))


@pytest.mark.parametrize("method", ["mge", pytest.param("dial2vec", marks=pytest.mark.slow)])
def test_what_a_build_holds_does_not_grow_with_the_corpus(tmp_path, monkeypatch, method):
    """Chunks of at most 64 texts: the Python heap's peak building 200 dialogues (each turn 100
    words, 420 KB of text) stays within 10% of building 25; a pool that kept its dialogues' texts,
    or a chunk counted in examples, would hold more than that at 200. A first build loads what
    every build shares (modules, TensorFlow's caches)."""
    monkeypatch.setattr(build_module, "CHUNK_TEXTS", 64)
    peaks = {}
    for count in (5, 25, 200):
        path = str(tmp_path / f"corpus{count}.jsonl")
        write_dialogues(_long_turn_corpus(count), path)
        tracemalloc.start()
        try:
            _build(path, str(tmp_path / f"built{count}"), method)
            peaks[count] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert read_manifest(str(tmp_path / f"built{count}"))["counts"]["dialogues"] == count
    assert peaks[200] < 1.1 * peaks[25], peaks


def test_a_chunk_holds_a_bounded_number_of_texts_however_large_the_examples(tmp_path, monkeypatch):
    """dial2vec examples are 3 dialogues of 4 turns here (12 texts): with chunks of 64 texts every
    tokenizer call gets fewer than 64 + 12 texts, and all examples are written."""
    monkeypatch.setattr(build_module, "CHUNK_TEXTS", 64)
    calls = []
    tokenize = build_module._Tokenizing.__call__  # pylint: disable=protected-access

    def counting(self, examples):
        calls.append(sum(self.texts_in(example)[0] for example in examples))
        return tokenize(self, examples)

    monkeypatch.setattr(build_module._Tokenizing, "__call__", counting)  # pylint: disable=protected-access
    path = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(40), path)
    manifest = _build(path, str(tmp_path / "built"), "dial2vec")
    assert manifest["counts"]["examples"] == 40 and sum(calls) == 40 * 3 * 4
    assert max(calls) < 64 + 12 and len(calls) >= 40 * 12 // (64 + 12)


def test_a_chunk_holds_a_bounded_number_of_characters_and_the_build_is_the_same(tmp_path, monkeypatch):
    """Chunks of at most 3,000 characters (an example of 3 dialogues of 4 turns of 100 words is
    about 7,000: each is a chunk of its own) give every tokenizer call one example, and the shards
    hold the same bytes as a build in chunks of 2,048 texts: where a chunk ends changes no id."""
    path = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(12), path)
    _build(path, str(tmp_path / "whole"), "dial2vec")
    monkeypatch.setattr(build_module, "CHUNK_CHARACTERS", 3000)
    calls = []
    tokenize = build_module._Tokenizing.__call__  # pylint: disable=protected-access

    def counting(self, examples):
        calls.append([self.texts_in(example) for example in examples])
        return tokenize(self, examples)

    monkeypatch.setattr(build_module._Tokenizing, "__call__", counting)  # pylint: disable=protected-access
    _build(path, str(tmp_path / "chunked"), "dial2vec")
    assert [len(call) for call in calls] == [1] * 12 and min(chars for (_, chars), in calls) > 3000
    for name in sorted(os.listdir(tmp_path / "whole")):
        assert (tmp_path / "whole" / name).read_bytes() == (tmp_path / "chunked" / name).read_bytes(), name


def _feature_keys_on_the_wire(record: bytes):
    """The feature names of a serialized tf.train.Example in the order its bytes list them,
    read from the protobuf wire format (Example.features = field 1, Features.feature = map
    field 1, each entry's key = field 1), independently of the protobuf library."""
    def varint(data, at):
        value = shift = 0
        while True:
            byte = data[at]
            value |= (byte & 0x7F) << shift
            at += 1
            if byte < 0x80:
                return value, at
            shift += 7

    def fields(data):
        at = 0
        while at < len(data):
            tag, at = varint(data, at)
            assert tag & 7 == 2  # every field here is length-delimited
            size, at = varint(data, at)
            yield tag >> 3, data[at:at + size]
            at += size

    (_, features), = fields(record)
    keys = []
    for number, entry in fields(features):
        assert number == 1
        keys.append(next(value for field, value in fields(entry) if field == 1).decode())
    return keys


def test_a_serialized_example_lists_its_features_in_key_order():
    """Protobuf writes a map in the order of its hash table, which follows the process's string
    hash seed; in key order, two builds of the same input and seed are byte-identical."""
    schema = {"z_last": "sequence", "candidates": "sequence_list", "a_first": "int", "m_mid": "float",
              "context": "sequence_list"}
    record = serialize_example({"z_last": [5, 6], "candidates": [[1], [2, 3]], "a_first": 4, "m_mid": 0.5,
                                "context": [[7]]}, schema)
    assert _feature_keys_on_the_wire(record) == sorted(
        ["z_last", "candidates/values", "candidates/row_lengths", "a_first", "m_mid", "context/values",
         "context/row_lengths"])


BUILD_IN_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tiny_corpus import TOKENIZER
build(sys.argv[2], sys.argv[3], make_builder(sys.argv[4]), TOKENIZER, BuildOptions(max_length=16, seed=3))
"""


@pytest.mark.slow
def test_builds_in_two_processes_are_byte_identical(tmp_path, method="mge"):
    """The same input and seed built by two processes with different string hash seeds."""
    path = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(30), path)
    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support")
    contents = []
    for hash_seed in ("1", "2"):
        output = str(tmp_path / f"built{hash_seed}")
        subprocess.run([sys.executable, "-c", BUILD_IN_CHILD, tests, path, output, method], check=True,
                       env=dict(os.environ, PYTHONHASHSEED=hash_seed), timeout=600)
        contents.append({name: open(os.path.join(output, name), "rb").read() for name in sorted(os.listdir(output))})
    assert contents[0] == contents[1]


HOLD_STAGING = """
import importlib.util, sys, time
# files.py alone, without the package (which imports TensorFlow): the child starts in a blink.
spec = importlib.util.spec_from_file_location("files", sys.argv[1])
files = importlib.util.module_from_spec(spec)
spec.loader.exec_module(files)
with files.atomic_directory(sys.argv[2]) as staging:
    open(staging + "/examples-00000-of-00001.tfrecord", "wb").write(b"partial")
    print(staging, flush=True)
    time.sleep(600)
"""


@contextlib.contextmanager
def _staging_held_by_a_child(target):
    """A child process inside `atomic_directory(target)`; yields it and its staging directory."""
    child = subprocess.Popen([sys.executable, "-c", HOLD_STAGING, files.__file__, target], stdout=subprocess.PIPE,
                             text=True)
    try:
        yield child, child.stdout.readline().strip()
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()


def _leftovers(directory):
    return sorted(name for name in os.listdir(directory) if name.startswith(".tmp-"))


def test_the_next_build_removes_what_a_killed_build_left_and_spares_a_live_one(tmp_path):
    corpus = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(6), corpus)
    target = str(tmp_path / "built")
    with _staging_held_by_a_child(target) as (_, live), \
            _staging_held_by_a_child(str(tmp_path / "other")) as (_, other_target):
        with _staging_held_by_a_child(target) as (killed, left):
            os.kill(killed.pid, signal.SIGKILL)
            killed.wait()
        names = [os.path.basename(path) for path in (live, other_target, left)]
        assert _leftovers(tmp_path) == sorted(names)
        build(corpus, target, make_builder("mlm"), TOKENIZER, BuildOptions(max_length=16))
        # The killed run's staging is gone; a live run's, and another target's, are not touched.
        assert _leftovers(tmp_path) == sorted(names[:2])
    assert read_manifest(target)["counts"]["dialogues"] == 6


@contextlib.contextmanager
def _mounted_tmpfs(directory, options):
    os.makedirs(directory)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", directory], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "--lazy", directory], check=True)


@contextlib.contextmanager
def _read_only_directory(directory):
    """A directory this process cannot write in: chmod 0555, or for root (whom permissions do not
    stop) a read-only tmpfs."""
    if os.geteuid() == 0:
        with _mounted_tmpfs(directory, "ro,size=64k") as mounted:
            yield mounted
        return
    os.makedirs(directory)
    os.chmod(directory, 0o555)
    try:
        yield directory
    finally:
        os.chmod(directory, 0o755)


@contextlib.contextmanager
def _full_directory(directory):
    """A tmpfs with no space left (skipped where mounting is not allowed)."""
    with _mounted_tmpfs(directory, "size=64k") as mounted:
        with open(os.path.join(mounted, "filler"), "wb") as f:
            with contextlib.suppress(OSError):
                f.write(bytes(1 << 20))
        yield mounted


@pytest.mark.parametrize("target", [_read_only_directory, _full_directory])
def test_an_unwritable_target_is_refused_before_any_work_naming_it(tmp_path, target):
    corpus = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(6), corpus)
    read = []
    with target(str(tmp_path / "target")) as directory:
        output = os.path.join(directory, "built")
        with pytest.raises(OSError) as raised:
            build(corpus, output, make_builder("mge", {"negatives": 2}), TOKENIZER, BuildOptions(max_length=16),
                  on_dialogue=read.append)
        assert str(raised.value).startswith(f"{output}: cannot write")
        assert "\n" not in str(raised.value)
        assert read == []  # no dialogue was built
        assert _leftovers(directory) == [] and not os.path.exists(output)


def test_a_disk_that_fills_up_during_the_build_ends_in_one_line_naming_the_target(tmp_path):
    """128 KB free: the probe passes, the shards (about 210 KB) do not fit."""
    corpus = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(400), corpus)
    with _mounted_tmpfs(str(tmp_path / "target"), "size=128k") as directory:
        output = os.path.join(directory, "built")
        with pytest.raises(OSError) as raised:
            build(corpus, output, make_builder("mlm"), TOKENIZER, BuildOptions(max_length=128))
        assert str(raised.value) == (f"{output}: no space left on the device while writing the build; "
                                     "nothing was written")
        assert os.listdir(directory) == []


def _run_data_cli(*args):
    flags.FLAGS.unparse_flags()
    try:
        return data_cli.main(flags.FLAGS(["tfdialemb.data", *args]))
    finally:
        flags.FLAGS.unparse_flags()


def test_the_command_names_an_unwritable_target_in_one_line_and_exits_2(tmp_path, capsys, hf_safetensors_dir):
    corpus = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(6), corpus)
    with _read_only_directory(str(tmp_path / "target")) as directory:
        output = os.path.join(directory, "built")
        status = _run_data_cli("build", "--method=mlm", f"--input={corpus}", f"--output_dir={output}",
                               f"--init_checkpoint={hf_safetensors_dir}")
    _, stderr = capsys.readouterr()
    assert status == 2
    reason = "read-only file system" if os.geteuid() == 0 else "permission denied"
    assert stderr.splitlines() == [f"error: {output}: cannot write there: {reason}"]


class _InterruptedBuilder(ExampleBuilder):
    """Stands for a user pressing Ctrl-C during the third dialogue."""

    name = "interrupted_for_test"
    schema = {"input_word_ids": SEQUENCE}

    def examples(self, dialogue, index, rng, pool):
        if index == 2:
            raise KeyboardInterrupt
        yield {"input_word_ids": dialogue.turns[0].text}


def test_ctrl_c_ends_the_command_with_one_line_exit_130_and_nothing_written(tmp_path, capsys, hf_safetensors_dir):
    corpus = str(tmp_path / "corpus.jsonl")
    write_dialogues(_long_turn_corpus(6), corpus)
    register(_InterruptedBuilder)
    try:
        status = _run_data_cli("build", f"--method={_InterruptedBuilder.name}", f"--input={corpus}",
                               f"--output_dir={tmp_path}/built", f"--init_checkpoint={hf_safetensors_dir}")
    finally:
        unregister(_InterruptedBuilder.name)
    _, stderr = capsys.readouterr()
    assert status == 130
    assert [line for line in stderr.splitlines() if line.startswith("error")] == [
        "error: interrupted; no output was written"]
    assert "Traceback" not in stderr
    assert sorted(os.listdir(tmp_path)) == ["corpus.jsonl"]
