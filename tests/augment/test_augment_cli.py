"""The augmented file: its layout, resuming after an interruption (in process, and a SIGKILLed
`python -m tfdialemb.augment` rerun), and the refusals that keep a file from mixing runs."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from absl import flags

from tfdialemb.augment import augmented_file, command, presets
from tfdialemb.augment.augmented_file import Plan, augment_file, scan_input, view_seed
from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.operations import OperationSet
from tfdialemb.augment.shuffle import StageShuffle
from tfdialemb.augment.similarity_sources import UtteranceSimilarity
from tfdialemb.dialogue import read_dialogues, write_dialogues
from topic_source import TEST_SET, TopicSource, topic_dialogue

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SEED, VIEWS, BATCH, CHUNK = 3, 2, 2, 3


def corpus(count=14):
    """Dialogues of 4 (neither operation), 8 (crop only) and 13-16 utterances (both)."""
    shapes = [[("hotel", 2), ("taxi", 2)],
              [("food", 3), ("bank", 5)],
              [("hotel", 4), ("taxi", 3), ("food", 4), ("music", 2)],
              [("train", 5), ("bank", 3), ("hotel", 3), ("taxi", 5)]]
    return [topic_dialogue(f"d{k}", shapes[k % 4], {"domain": shapes[k % 4][0][0]}) for k in range(count)]


def stage_operations(seed=SEED, fail_after=None):
    similarity = UtteranceSimilarity(TopicSource())
    shuffle = StageShuffle(similarity, seed)
    if fail_after is not None:
        calls = []
        real = shuffle.augment

        def augment(dialogues):
            calls.append(1)
            if len(calls) > fail_after:
                raise KeyboardInterrupt("interrupted")
            return real(dialogues)

        shuffle.augment = augment
    return OperationSet((StageCrop(similarity, seed), shuffle), similarity)


def plan(tmp_path, output="out.jsonl", seed=SEED):
    return Plan(str(tmp_path / "in.jsonl"), str(tmp_path / output), ("crop", "shuffle"), views=VIEWS, seed=seed,
                batch_size=BATCH, chunk_size=CHUNK, settings={"set": "test-stages"})


@pytest.fixture
def source(tmp_path):
    dialogues = corpus()
    write_dialogues(dialogues, str(tmp_path / "in.jsonl"))
    return dialogues


def test_layout_originals_then_views_each_as_the_operation_alone(tmp_path, source):
    counts = augment_file(plan(tmp_path), stage_operations)
    written = list(read_dialogues(str(tmp_path / "out.jsonl")))  # valid canonical JSONL, ids unique
    similarity = UtteranceSimilarity(TopicSource())
    expected = []
    for dialogue in source:
        expected.append((dialogue.id, dialogue.turns, {**dialogue.labels, "source_id": dialogue.id,
                                                        "augmentations": []}))
        for cls in (StageCrop, StageShuffle):
            for view in range(VIEWS):
                [alone] = cls(similarity, view_seed(SEED, view)).augment([dialogue])
                if alone is not None:
                    expected.append((f"{dialogue.id}/{cls.name}/{view}", alone.turns,
                                     {**dialogue.labels, "source_id": dialogue.id, "augmentations": [cls.name]}))
    assert [(d.id, d.turns, dict(d.labels)) for d in written] == expected
    # 4-utterance dialogues (4 of them) get no view, 8 (4) only crop, 13 and 16 (6) both; 2 views.
    assert counts == {"original": 14, "crop": 2 * 10, "shuffle": 2 * 6}
    assert view_seed(SEED, 0) == SEED and view_seed(SEED, 1) != SEED
    shuffled = {d.id: d.turns for d in written if "/shuffle/" in d.id}
    assert any(shuffled[f"d{k}/shuffle/0"] != shuffled[f"d{k}/shuffle/1"] for k in (2, 3, 6, 7))
    assert not os.path.exists(tmp_path / "out.jsonl.partial")


def test_one_view_ids_name_the_operation(tmp_path, source):
    single = Plan(str(tmp_path / "in.jsonl"), str(tmp_path / "one.jsonl"), ("crop", "shuffle"), seed=SEED)
    augment_file(single, stage_operations)
    ids = [json.loads(line)["id"] for line in open(tmp_path / "one.jsonl", encoding="utf-8")]
    assert ids[:4] == ["d0", "d1", "d1/crop", "d2"] and "d2/shuffle" in ids


def test_an_interrupted_run_resumes_to_the_same_bytes(tmp_path, source):
    augment_file(plan(tmp_path, "reference.jsonl"), stage_operations)
    with pytest.raises(KeyboardInterrupt):
        augment_file(plan(tmp_path), lambda: stage_operations(fail_after=9))  # in its third chunk (4 calls each)
    partial = tmp_path / "out.jsonl.partial"
    assert sorted(name for name in os.listdir(partial) if name.startswith("chunk")) == [
        "chunk-000000.jsonl", "chunk-000001.jsonl"]
    assert not (tmp_path / "out.jsonl").exists()
    (partial / ".tmp-torn-chunk-000002.jsonl").write_text('{"id": "d6", "tu')  # a write cut short
    augment_file(plan(tmp_path), stage_operations)
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    assert not partial.exists()


def _kill_a_run(tmp_path, monkeypatch, owner, name, replacement):
    """Writes reference.jsonl uninterrupted, then runs the same plan into out.jsonl with
    `owner.name` replaced by `replacement` (which raises KeyboardInterrupt); returns the sidecar."""
    augment_file(plan(tmp_path, "reference.jsonl"), stage_operations)
    monkeypatch.setattr(owner, name, replacement)
    with pytest.raises(KeyboardInterrupt):
        augment_file(plan(tmp_path), stage_operations)
    monkeypatch.undo()
    return tmp_path / "out.jsonl.partial"


def test_a_run_killed_after_writing_the_output_is_finished_by_the_same_command(tmp_path, source, monkeypatch):
    def killed(directory):
        raise KeyboardInterrupt(f"killed before {directory} was removed")

    partial = _kill_a_run(tmp_path, monkeypatch, augmented_file, "_remove_partial", killed)
    assert partial.is_dir() and (tmp_path / "out.jsonl").exists()
    built = []
    counts = augment_file(plan(tmp_path), lambda: built.append(1))  # finishing loads no model
    assert built == [] and not partial.exists()
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    assert counts == {"original": 14, "crop": 2 * 10, "shuffle": 2 * 6}
    with pytest.raises(FileExistsError, match="already exists"):  # finished, with no chunks left: refused
        augment_file(plan(tmp_path), stage_operations)


def test_a_run_killed_while_removing_its_chunks_is_finished_by_the_same_command(tmp_path, source, monkeypatch):
    remove = os.remove

    def remove_one_then_die(path):
        remove(path)
        raise KeyboardInterrupt(f"killed after removing {path}")

    partial = _kill_a_run(tmp_path, monkeypatch, os, "remove", remove_one_then_die)
    assert sorted(name for name in os.listdir(partial) if name.startswith("chunk")) == [  # the last chunk went first
        "chunk-000000.jsonl", "chunk-000001.jsonl", "chunk-000002.jsonl", "chunk-000003.jsonl"]
    augment_file(plan(tmp_path), stage_operations)  # recomputes the removed chunk
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    assert not partial.exists()


def test_a_partial_run_is_not_mixed_with_other_flags_or_input(tmp_path, source):
    with pytest.raises(KeyboardInterrupt):
        augment_file(plan(tmp_path), lambda: stage_operations(fail_after=5))  # in its second chunk
    built = []  # refused before any model is loaded
    with pytest.raises(ValueError, match=r"out.jsonl.partial: holds a partial run with another seed \(seed=3\)"):
        augment_file(plan(tmp_path, seed=4), lambda: built.append(1))
    write_dialogues(corpus(13), str(tmp_path / "in.jsonl"))
    with pytest.raises(ValueError, match="another input"):
        augment_file(plan(tmp_path), lambda: built.append(1))
    assert built == []
    augment_file(plan(tmp_path, seed=4), lambda: stage_operations(4), overwrite=True)
    augment_file(plan(tmp_path, "reference.jsonl", seed=4), lambda: stage_operations(4))
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()


def test_inputs_that_would_mix_originals_and_views_are_refused(tmp_path):
    dialogues = corpus(2)
    built = []
    for ordered in (dialogues + [topic_dialogue("d1/crop/1", [("hotel", 2)])],
                    [topic_dialogue("d1/crop/1", [("hotel", 2)])] + dialogues):
        write_dialogues(ordered, str(tmp_path / "in.jsonl"))
        with pytest.raises(ValueError, match="'d1/crop/1' of an input dialogue is the id the crop view of 'd1'"):
            augment_file(plan(tmp_path), lambda: built.append(1))
    write_dialogues(dialogues + [topic_dialogue("x/crop/1", [("hotel", 2)])], str(tmp_path / "in.jsonl"))
    assert scan_input(plan(tmp_path)) == len(dialogues) + 1  # no input dialogue "x" to take that id
    write_dialogues([topic_dialogue("a", [("hotel", 2)], {"augmentations": ["insert"]})], str(tmp_path / "in.jsonl"))
    with pytest.raises(ValueError, match="dialogue 'a' is already augmented \\(insert\\)"):
        augment_file(plan(tmp_path), lambda: built.append(1))
    write_dialogues([topic_dialogue("a", [("hotel", 2)], {"augmentations": "insert"})], str(tmp_path / "in.jsonl"))
    with pytest.raises(ValueError, match="dialogue 'a': labels.augmentations must be a list of operation names"):
        augment_file(plan(tmp_path), lambda: built.append(1))
    (tmp_path / "out.jsonl").write_text("")
    with pytest.raises(FileExistsError, match="pass --overwrite"):
        augment_file(plan(tmp_path), lambda: built.append(1))
    assert built == []  # no model is loaded for a run that cannot start


@pytest.fixture
def command_line(monkeypatch, capsys):
    """`python -m tfdialemb.augment ARGS` in process (its flags on their own FlagValues), the
    test set registered and the context-response model the topic source unless `load_model` opens
    another: (status, out, err)."""
    monkeypatch.setitem(presets.PRESETS, TEST_SET.name, TEST_SET)

    def call(*args, load_model=lambda path, kind: TopicSource()):
        values = flags.FlagValues()
        command.define_flags(values)
        values(["augment", *args])
        status = command.main(load_model, values)
        out, err = capsys.readouterr()
        return status, out, err

    return call


def test_missing_models_fail_before_any_work(tmp_path, command_line):
    status, _, err = command_line("--set=a-l-m", f"--input={tmp_path}/absent.jsonl", f"--output={tmp_path}/o.jsonl")
    assert status == 2
    assert "--fill_mask_model is missing" in err and "--context_response_model is missing" in err
    assert os.listdir(tmp_path) == []


def test_sigkill_then_rerun_writes_the_uninterrupted_file(tmp_path, source, command_line):
    augment_file(plan(tmp_path, "reference.jsonl"), stage_operations)
    (tmp_path / "model").mkdir()
    partial = tmp_path / "out.jsonl.partial"
    args = (f"--set={TEST_SET.name}", f"--input={tmp_path}/in.jsonl", f"--output={tmp_path}/out.jsonl",
            f"--context_response_model={tmp_path}/model", f"--seed={SEED}", f"--views={VIEWS}",
            f"--batch_size={BATCH}", f"--chunk_size={CHUNK}")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]),
                       AUGMENT_STALL_DIR=str(partial), AUGMENT_STALL_AFTER="2")
    process = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_augment_cli.py"), *args],
                               env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if partial.is_dir() and len([n for n in os.listdir(partial) if n.startswith("chunk-")]) >= 2:
            break
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()[1].decode()[-2000:]
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (tmp_path / "out.jsonl").exists() and (partial / "chunk-000001.jsonl").exists()

    status, out, err = command_line(*args)  # the same command again, finishing the killed run
    assert status == 0, err
    assert "out.jsonl.partial: 6 of 14 dialogues already done" in err and "8/8 dialogues" in err
    assert "14 originals, 20 crop, 12 shuffle" in out
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    assert not partial.exists()


def _write_checkpoint(directory, step, weights):
    """A TensorFlow checkpoint directory as training leaves it: `checkpoint` names ckpt-STEP, whose
    index (standing for its weights) holds `weights`."""
    directory.mkdir(exist_ok=True)
    (directory / f"ckpt-{step}.index").write_bytes(weights)
    (directory / f"ckpt-{step}.data-00000-of-00001").write_bytes(b"shard")
    (directory / "checkpoint").write_text(f'model_checkpoint_path: "ckpt-{step}"\n'
                                          f'all_model_checkpoint_paths: "ckpt-{step}"\n')


def _interrupted_after_one_chunk(command_line, monkeypatch, args):
    """Runs the command until its first chunk is written, then interrupts it."""
    real = augmented_file.augment_chunk
    calls = []

    def augment_chunk(*arguments, **keywords):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt("interrupted in the second chunk")
        return real(*arguments, **keywords)

    monkeypatch.setattr(augmented_file, "augment_chunk", augment_chunk)
    with pytest.raises(KeyboardInterrupt):
        command_line(*args)
    monkeypatch.setattr(augmented_file, "augment_chunk", real)


def test_a_run_is_not_resumed_over_a_retrained_model(tmp_path, source, command_line, monkeypatch):
    """The model is fingerprinted by its weights: retrained in place, under the same path, it is
    another model; named as `model`, `model/` or its absolute path, the same one."""
    augment_file(plan(tmp_path, "reference.jsonl"), stage_operations)
    _write_checkpoint(tmp_path / "model", 3, b"weights after step 3")
    monkeypatch.chdir(tmp_path)
    common = (f"--set={TEST_SET.name}", f"--input={tmp_path}/in.jsonl", f"--output={tmp_path}/out.jsonl",
              f"--seed={SEED}", f"--views={VIEWS}", f"--batch_size={BATCH}", f"--chunk_size={CHUNK}")
    _interrupted_after_one_chunk(command_line, monkeypatch, (*common, "--context_response_model=model"))
    partial = tmp_path / "out.jsonl.partial"
    assert (partial / "chunk-000000.jsonl").exists()

    _write_checkpoint(tmp_path / "model", 6, b"weights after step 6")  # trained on, in place
    status, _, err = command_line(*common, "--context_response_model=model")
    assert status == 2 and not (tmp_path / "out.jsonl").exists()
    assert (f"{partial}: holds a partial run with another --context_response_model (the --context_response_model "
            "weights it started with differ from these)") in err
    _write_checkpoint(tmp_path / "model", 3, b"weights after step 3")  # the model it started with, restored
    status, _, err = command_line(*common, "--context_response_model=model/")
    assert status == 0, err
    assert "3 of 14 dialogues already done" in err
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()

    _interrupted_after_one_chunk(command_line, monkeypatch, (*common, "--output=" + str(tmp_path / "again.jsonl"),
                                                             "--context_response_model=model"))
    status, _, err = command_line(*common, f"--output={tmp_path}/again.jsonl",
                                  f"--context_response_model={tmp_path}/model")
    assert status == 0, err
    assert "3 of 14 dialogues already done" in err


def test_a_run_refused_before_its_first_chunk_leaves_nothing_that_blocks_the_next(tmp_path, source, command_line):
    (tmp_path / "wrong").mkdir()
    _write_checkpoint(tmp_path / "model", 3, b"weights")
    common = (f"--set={TEST_SET.name}", f"--input={tmp_path}/in.jsonl", f"--output={tmp_path}/out.jsonl",
              f"--seed={SEED}", f"--views={VIEWS}", f"--batch_size={BATCH}", f"--chunk_size={CHUNK}")

    def refuse(path, kind):
        raise ValueError(f"{path}: not a {kind} model")

    status, _, err = command_line(*common, f"--context_response_model={tmp_path}/wrong", load_model=refuse)
    assert status == 2 and "wrong: not a context_response model" in err
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "model", "wrong"]
    status, out, err = command_line(*common, f"--context_response_model={tmp_path}/model")
    assert status == 0, err
    assert "14 originals" in out and not (tmp_path / "out.jsonl.partial").exists()


def test_a_run_killed_at_its_final_rename_leaves_a_file_the_next_run_removes(tmp_path, source, command_line):
    augment_file(plan(tmp_path, "reference.jsonl"), stage_operations)
    (tmp_path / "model").mkdir()
    args = (f"--set={TEST_SET.name}", f"--input={tmp_path}/in.jsonl", f"--output={tmp_path}/out.jsonl",
            f"--context_response_model={tmp_path}/model", f"--seed={SEED}", f"--views={VIEWS}",
            f"--batch_size={BATCH}", f"--chunk_size={CHUNK}")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]),
                       AUGMENT_KILLED_AT=str(tmp_path / "out.jsonl"))
    killed = subprocess.run([sys.executable, os.path.join(HERE, "fake_augment_cli.py"), *args], env=environment,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    left = [name for name in os.listdir(tmp_path) if name.startswith(".tmp-") and name.endswith("-out.jsonl")]
    assert len(left) == 1 and not (tmp_path / "out.jsonl").exists()
    assert (tmp_path / left[0]).read_bytes() == (tmp_path / "reference.jsonl").read_bytes()  # complete, unrenamed

    status, out, err = command_line(*args)  # the same command again
    assert status == 0, err
    assert f"removed {left[0]}, left in {tmp_path} by an interrupted run" in err
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "model", "out.jsonl", "reference.jsonl"]
