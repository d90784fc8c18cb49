"""`python -m tfdialemb.data`: every command, its messages and exit statuses (run in-process)."""
import json
import os
import subprocess
import sys

import pytest
from absl import flags

from tfdialemb.converters import converters
import tfdialemb.data.__main__ as data_cli
from tfdialemb.data.records import read_manifest
from tfdialemb.dialogue import read_dialogues

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "converters", "fixtures")


@pytest.fixture
def run(capsys):
    def call(*args):
        flags.FLAGS.unparse_flags()
        argv = flags.FLAGS(["tfdialemb.data", *args])
        status = data_cli.main(argv)
        out, err = capsys.readouterr()
        return status, out, err

    yield call
    flags.FLAGS.unparse_flags()


def _jsonl(tmp_path, records, name="d.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def _dialogue(i, texts, **labels):
    return {"id": f"d{i}", "turns": [{"speaker": "ab"[k % 2], "text": t} for k, t in enumerate(texts)],
            "labels": labels}


def test_convert_then_validate(run, tmp_path):
    out = str(tmp_path / "ubuntu.jsonl")
    status, stdout, _ = run("convert", "--format=ubuntu", f"--input={FIXTURES}/ubuntu/test.txt",
                            f"--output={out}")
    assert status == 0 and stdout.startswith("wrote 30 dialogues")
    assert [d.labels["context_id"] for d in read_dialogues(out)] == [0] * 10 + [1] * 10 + [2] * 10
    status, stdout, _ = run("validate", f"--input={out}")
    assert status == 0 and "30 valid dialogues, 0 bad line(s)" in stdout


def test_convert_refuses_an_output_inside_the_input_folder(run, tmp_path):
    # Written there, the output (and on a rerun with --overwrite, the last one) is read as input.
    folder = tmp_path / "chats"
    folder.mkdir()
    _jsonl(folder, [{"turns": ["hello", "hi"]}], name="a.jsonl")
    for output in (folder / "out.jsonl", folder / "sub" / "out.jsonl"):
        status, _, stderr = run("convert", "--format=jsonl", f"--input={folder}", f"--output={output}")
        assert status == 2 and stderr == (f"error: {output}: inside the input folder {folder}, whose files are read "
                                          "as input (the output among them); write it elsewhere\n")
    assert sorted(os.listdir(folder)) == ["a.jsonl"]
    status, stdout, _ = run("convert", "--format=jsonl", f"--input={folder}", f"--output={tmp_path}/out.jsonl")
    assert status == 0 and stdout.startswith("wrote 1 dialogues")


def test_convert_and_split_remove_what_a_killed_run_left(run, tmp_path):
    # atomic_open's staging names, unlocked as a killed writer leaves them; another target's stays.
    source = _jsonl(tmp_path, [_dialogue(i, ["hello", "hi"]) for i in range(4)])
    (tmp_path / "out").mkdir()
    left = ["out/.tmp-abcd1234-c.jsonl", "out/.tmp-efgh5678-train.jsonl", "out/.tmp-ijkl9012-other.jsonl"]
    for name in left:
        (tmp_path / name).write_text('{"id": "half', encoding="utf-8")
    status, stdout, stderr = run("convert", "--format=jsonl", f"--input={source}", f"--output={tmp_path}/out/c.jsonl")
    assert status == 0 and stdout.startswith("wrote 4 dialogues")
    assert f"removed .tmp-abcd1234-c.jsonl, left in {tmp_path}/out by an interrupted run" in stderr
    status, _, stderr = run("split", f"--input={source}", f"--output_dir={tmp_path}/out")
    assert status == 0 and f"removed .tmp-efgh5678-train.jsonl, left in {tmp_path}/out" in stderr
    assert sorted(os.listdir(tmp_path / "out")) == [".tmp-ijkl9012-other.jsonl", "c.jsonl", "dev.jsonl",
                                                    "test.jsonl", "train.jsonl"]


def test_convert_takes_the_block_size_of_a_training_file(run, tmp_path):
    source = f"{FIXTURES}/ubuntu/train.txt"
    status, _, stderr = run("convert", "--format=ubuntu", f"--input={source}", f"--output={tmp_path}/a.jsonl")
    assert status == 1 and f"{source}:1-10: the file ends after 4 line(s) of this block" in stderr
    status, stdout, _ = run("convert", "--format=ubuntu", f"--input={source}", f"--output={tmp_path}/b.jsonl",
                            "--block_size=2")
    assert status == 0 and stdout.startswith("wrote 4 dialogues")
    status, _, stderr = run("convert", "--format=dailydialog", f"--input={source}", f"--output={tmp_path}/c.jsonl",
                            "--block_size=2")
    assert status == 2 and "--block_size does not apply to --format=dailydialog" in stderr


def test_convert_bad_native_lines_fail_or_skip(run, tmp_path):
    bad = os.path.join(FIXTURES, "ubuntu", "bad")
    source = os.path.join(bad, sorted(os.listdir(bad))[0])
    status, _, stderr = run("convert", "--format=ubuntu", f"--input={source}", f"--output={tmp_path}/x.jsonl",
                            "--block_size=2")
    assert status == 1 and f"{source}:" in stderr and "--on_error=skip" in stderr
    assert not os.path.exists(tmp_path / "x.jsonl")
    status, _, stderr = run("convert", "--format=ubuntu", f"--input={source}", f"--output={tmp_path}/x.jsonl",
                            "--block_size=2", "--on_error=skip")
    assert status == 0 and "skipped" in stderr and os.path.exists(tmp_path / "x.jsonl")


def test_convert_your_own_yaml_and_refuse_options_of_other_formats(run, tmp_path):
    out = str(tmp_path / "chatterbot.jsonl")
    status, stdout, stderr = run("convert", "--format=yaml", f"--input={FIXTURES}/generic/chatterbot",
                                 "--label_key=categories", f"--output={out}", "--on_error=skip")
    assert status == 0 and "wrote 4 dialogues" in stdout
    assert "ai.yml:dialogue 4: the turns must be a list, got str" in stderr
    assert [d.labels["categories"] for d in read_dialogues(out)] == ["AI", "AI", "AI", "food"]
    status, _, stderr = run("convert", "--format=ubuntu", "--text_key=says", f"--input={FIXTURES}/ubuntu/train.txt",
                            f"--output={tmp_path}/u.jsonl")
    assert status == 2 and "--text_key does not apply to --format=ubuntu" in stderr


def test_validate_lists_every_bad_line(run, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_dialogue(0, ["hi"])) + "\n{oops\n" + '{"id": "x", "turns": []}\n')
    status, stdout, stderr = run("validate", f"--input={path}")
    assert status == 1
    assert f"bad line {path}:2: malformed JSON" in stderr and f"bad line {path}:3: no turns" in stderr
    assert "skipped" not in stderr  # validate reports bad lines; it skips nothing
    assert "1 valid dialogues, 2 bad line(s)" in stdout


def test_usage_errors_exit_2(run, tmp_path):
    assert run("frobnicate")[0] == 2
    status, _, stderr = run("convert", "--format=nope", "--input=a", "--output=b")
    assert status == 2 and "unknown --format=nope; known: banking77, dailydialog" in stderr
    status, stdout, _ = run("convert", "--format=help")
    listed = stdout.splitlines()[1:]  # under "formats:", each a name and its line
    assert status == 0 and len(listed) == len(converters()) and all(len(line.split(None, 1)) == 2 for line in listed)
    assert any(line.split() == ["multiwoz22", "MultiWOZ", "2.2", "dialogues_*.json,", "a", "file", "or", "a",
                                "split", "folder"] for line in listed)
    status, _, stderr = run("validate", f"--input={tmp_path}/missing.jsonl")
    assert status == 2 and "does not exist" in stderr
    assert run("split", f"--input={tmp_path}/x.jsonl")[0] == 2  # no --output_dir


def test_stats_hand_worked(run, tmp_path):
    # Basic words per turn: "hello there !" = 3, "hi" = 1, "book a taxi please" = 4, "你好" = 2, "ok" = 1.
    path = _jsonl(tmp_path, [_dialogue(0, ["hello there!", "hi"], domain="x"),
                             _dialogue(1, ["book a taxi please", "你好", "ok"], domain="y"),
                             _dialogue(2, ["ok", "ok"], domain="x")])
    status, stdout, _ = run("stats", f"--input={path}", f"--output={tmp_path}/s.json")
    report = json.loads(stdout)
    assert status == 0 and report == json.loads((tmp_path / "s.json").read_text())
    assert (report["dialogues"], report["turns"], report["distinct_speakers"]) == (3, 7, 2)
    # Turn lengths sorted: 1 1 1 1 2 3 4 -> p50 = 4th value = 1, p90 = 7th = 4.
    assert report["tokens_per_turn"] == {"p50": 1, "p90": 4, "p95": 4, "p99": 4, "p100": 4}
    # Dialogue lengths: 4, 7, 2 -> p50 = 4.
    assert report["tokens_per_dialogue"]["p50"] == 4 and report["tokens_per_dialogue"]["p100"] == 7
    assert report["labels"] == {"domain": {"distinct": 2, "dialogues": {"x": 2, "y": 1}}}
    assert report["turns_by_speaker"] == {"a": 4, "b": 3}  # turns, not dialogues
    assert report["turns_per_dialogue"]["p100"] == 3


def test_stats_keeps_label_values_of_other_kinds_apart(run, tmp_path):
    # 3 and "3", true and "True" are four values; a float label is counted too.
    path = _jsonl(tmp_path, [_dialogue(0, ["hi"], intent=3), _dialogue(1, ["hi"], intent="3"),
                             _dialogue(2, ["hi"], intent=True), _dialogue(3, ["hi"], intent="True"),
                             _dialogue(4, ["hi"], intent="3", score=4.5)])
    status, stdout, _ = run("stats", f"--input={path}")
    report = json.loads(stdout)
    assert status == 0 and report["labels"] == {
        "intent": {"distinct": 4, "dialogues": {'"3"': 2, "3": 1, "true": 1, '"True"': 1}},
        "score": {"distinct": 1, "dialogues": {"4.5": 1}}}


def test_split_is_deterministic(run, tmp_path):
    path = _jsonl(tmp_path, [_dialogue(i, ["hello", "hi"]) for i in range(200)])
    assert run("split", f"--input={path}", f"--output_dir={tmp_path}/a", "--seed=1")[0] == 0
    assert run("split", f"--input={path}", f"--output_dir={tmp_path}/b", "--seed=1")[0] == 0
    for name in ("train", "dev", "test"):
        assert (tmp_path / "a" / f"{name}.jsonl").read_bytes() == (tmp_path / "b" / f"{name}.jsonl").read_bytes()
    total = sum(len(list(read_dialogues(str(tmp_path / "a" / f"{n}.jsonl")))) for n in ("train", "dev", "test"))
    assert total == 200


def test_build_and_its_errors(run, tmp_path, hf_safetensors_dir):
    path = _jsonl(tmp_path, [_dialogue(i, ["hello world", "good morning", "fine thanks"]) for i in range(6)])
    args = ["build", "--method=mge", f"--input={path}", f"--output_dir={tmp_path}/out",
            f"--init_checkpoint={hf_safetensors_dir}", "--builder_param=negatives=2", "--num_shards=2",
            "--max_length=16"]
    status, stdout, stderr = run(*args)
    assert status == 0, stderr
    assert "built 18 mge examples from 6 dialogues into 2 shards" in stdout
    assert "6 dialogues" in stderr  # the progress line
    assert read_manifest(str(tmp_path / "out"))["builder"]["params"]["negatives"] == 2
    status, _, stderr = run(*args)
    assert status == 2 and "already exists" in stderr
    # One dialogue of a single turn and one whose two turns of one speaker merge into one: two
    # dropped under --min_turns=2, said on the build line.
    short = _jsonl(tmp_path, [_dialogue(i, ["hello world", "good morning", "fine thanks"]) for i in range(6)]
                   + [_dialogue(6, ["hello"]), {"id": "m", "turns": [{"speaker": "a", "text": "good"},
                                                                      {"speaker": "a", "text": "morning"}]}],
                   name="short.jsonl")
    status, stdout, stderr = run(*args[:2], f"--input={short}", f"--output_dir={tmp_path}/short", *args[4:])
    assert status == 0, stderr
    assert ("built 18 mge examples from 6 dialogues into 2 shards in "
            f"{tmp_path}/short; dropped 2 dialogue(s) of fewer than 2 turns after merging consecutive turns") in stdout
    status, _, stderr = run(*args[:2], f"--input={short}", f"--output_dir={tmp_path}", *args[4:], "--overwrite")
    assert status == 2 and f"error: {tmp_path}: the output would replace the input {short}" in stderr
    assert os.path.exists(short)
    status, _, stderr = run(*args[:1], "--method=nope", *args[2:])
    assert status == 2 and "no example builder for method 'nope'" in stderr
    status, _, stderr = run(*args, "--builder_param=oops")
    assert status == 2 and "key=value" in stderr


def test_module_entry_point():
    result = subprocess.run([sys.executable, "-m", "tfdialemb.data", "convert", "--format=help"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "dialoguecse_sr" in result.stdout
