"""What a hostile user tries, each failure reproduced and now refused or survived: devices that do
not exist, two trainings on one model directory, a training file replaced under its name, outputs
that would overwrite inputs or other outputs, damaged checkpoints, bad flag values, silently wrong
inputs, huge lines and misleading messages."""
import json
import os
import signal
import subprocess
import sys

import pytest
import tensorflow as tf

from tiny_corpus import TOKENIZER, corpus
from tfdialemb.data.build import BuildOptions, build
from tfdialemb.data.examples import make_builder
from tfdialemb.dialogue import Dialogue, Turn, parse_dialogue, read_dialogues, write_dialogues
from tfdialemb.core.distribute import check_devices
from tfdialemb.encoders import CheckpointError, load_pretrained
from tfdialemb.core.files import atomic_open, directory_lock

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def _start(*args, cwd=None):
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV, cwd=cwd)


def _finish(*processes):
    outputs = [p.communicate(timeout=300) for p in processes]
    return [subprocess.CompletedProcess(p.args, p.returncode, *out) for p, out in zip(processes, outputs)]


def _train_command(tmp_path, hf_dir, model="model", *extra):
    return ("-m", "tfdialemb.train", "--method=mge", f"--train_file={tmp_path / 'train.jsonl'}",
            f"--model_dir={tmp_path / model}", f"--init_checkpoint={hf_dir}", "--max_steps=2", "--batch_size=4",
            "--max_length=16", "--freeze_layers=0", "--turns=1", "--negatives=2", "--num_shards=1", *extra)


@pytest.fixture
def corpus_file(tmp_path):
    write_dialogues(corpus(n=12, seed=1), str(tmp_path / "train.jsonl"))
    return tmp_path / "train.jsonl"


# 1. Devices that do not exist: refused at once, not a hang in the first all-reduce.

def test_devices_this_machine_lacks_are_refused():
    with pytest.raises(ValueError, match=r"/gpu:0, /gpu:1 not on this machine, which has /cpu:0"):
        check_devices(["/gpu:0", "/gpu:1"])
    check_devices(["/cpu:0", "/cpu:1"])  # the two logical CPUs of the test session


def test_training_on_missing_gpus_exits_2_within_seconds(tmp_path, corpus_file, hf_safetensors_dir):
    result, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir, "model", "--strategy=mirrored",
                                             "--devices=/gpu:0,/gpu:1")))
    assert result.returncode == 2 and "not on this machine" in result.stderr
    assert not os.path.exists(tmp_path / "model" / "data")


# 2. One training run per model directory; a killed holder leaves no stale lock.

@pytest.mark.slow
def test_a_second_training_on_a_locked_directory_is_refused(tmp_path, corpus_file, hf_safetensors_dir):
    with directory_lock(str(tmp_path / "model"), "training run"):
        refused, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir)))
    assert refused.returncode == 2
    assert f"in use by another training run (pid {os.getpid()}" in refused.stderr
    holder = _start("-c", "import sys, time; from tfdialemb.core.files import directory_lock\n"
                          f"with directory_lock({str(tmp_path / 'model')!r}):\n"
                          "    print('held', flush=True); time.sleep(600)")
    assert holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    trained, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir)))
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "trained to step 2 of 2" in trained.stdout


# 3. A training file replaced under its name is not resumed on the old build.

def test_a_replaced_training_file_is_refused_on_resume(tmp_path, corpus_file, hf_safetensors_dir):
    first, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir)))
    assert first.returncode == 0, first.stderr[-3000:]
    write_dialogues(corpus(n=12, seed=2), str(corpus_file))
    second, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir, "model", "--max_steps=3")))
    assert second.returncode == 2
    assert "changed since" in second.stderr and second.stderr.count("sha256") == 2


# 4. Outputs: never an input, never an existing file without --overwrite, the process's umask.

def test_outputs_never_replace_inputs_or_existing_files(tmp_path, corpus_file):
    split_dir = tmp_path / "sp"
    split_dir.mkdir()
    own = split_dir / "train.jsonl"
    own.write_bytes(corpus_file.read_bytes())
    before = corpus_file.read_bytes()
    same, into_itself, existing, replaced = _finish(
        _start("-m", "tfdialemb.data", "convert", "--format=dialoguecse_sts", f"--input={corpus_file}",
               f"--output={corpus_file}"),
        _start("-m", "tfdialemb.data", "split", f"--input={own}", f"--output_dir={split_dir}"),
        _start("-m", "tfdialemb.data", "stats", f"--input={corpus_file}", f"--output={own}"),
        _start("-m", "tfdialemb.data", "stats", f"--input={corpus_file}", f"--output={tmp_path / 'new.json'}"))
    assert same.returncode == 2 and "would replace the input" in same.stderr
    assert into_itself.returncode == 2 and "would replace the input" in into_itself.stderr
    assert existing.returncode == 2 and "already exists (pass --overwrite to replace it)" in existing.stderr
    assert replaced.returncode == 0
    assert corpus_file.read_bytes() == before and own.read_bytes() == before
    again, = _finish(_start("-m", "tfdialemb.data", "stats", f"--input={corpus_file}",
                            f"--output={tmp_path / 'new.json'}", "--overwrite"))
    assert again.returncode == 0


def test_written_files_get_the_mode_of_the_process_umask(tmp_path):
    previous = os.umask(0o022)
    try:
        with atomic_open(str(tmp_path / "vocab.txt")) as f:
            f.write("x\n")
    finally:
        os.umask(previous)
    assert oct(os.stat(tmp_path / "vocab.txt").st_mode & 0o777) == oct(0o644)


# 5. Damaged files: one message, a fall-back on resume, no leftovers.

@pytest.mark.parametrize("keep", [0, 100])
def test_a_damaged_safetensors_file_is_one_checkpoint_error(tmp_path, hf_safetensors_dir, keep):
    import shutil

    damaged = tmp_path / "hf"
    shutil.copytree(hf_safetensors_dir, damaged)
    data = (damaged / "model.safetensors").read_bytes()
    (damaged / "model.safetensors").write_bytes(data[:keep])
    with pytest.raises(CheckpointError, match="cannot read its weights .* damaged or incomplete"):
        load_pretrained(str(damaged))


def test_a_truncated_init_checkpoint_is_refused_before_the_data_build(tmp_path, monkeypatch, capsys, corpus_file,
                                                                      hf_safetensors_dir):
    import shutil

    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    shutil.copytree(hf_safetensors_dir, tmp_path / "hf")
    size = os.path.getsize(tmp_path / "hf" / "model.safetensors")
    os.truncate(tmp_path / "hf" / "model.safetensors", size - 1000)
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(corpus_file), model_dir=str(tmp_path / "model"),
                                                     init_checkpoint=str(tmp_path / "hf")))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({})) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {tmp_path / 'hf'}: cannot read its weights ({tmp_path / 'hf' / 'model.safetensors'}: cut short: its "
        f"header places tensors up to byte {size}, and the file has {size - 1000} bytes); the file is damaged or "
        "incomplete: copy it again")
    assert not os.path.exists(tmp_path / "model")  # no lock, no data built


def test_a_run_refused_after_taking_a_new_model_directory_leaves_none(tmp_path, monkeypatch, capsys, corpus_file,
                                                                      hf_safetensors_dir):
    """Shards built for another method are refused once the run holds the directory's lock."""
    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    shards = tmp_path / "siamese-shards"
    build(str(corpus_file), str(shards), make_builder("siamese"), TOKENIZER, BuildOptions(max_length=16, num_shards=1))
    spec = get_method("mge")
    for model, existed in (("model", False), ("kept", True)):
        if existed:
            (tmp_path / model).mkdir()
        monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(shards), model_dir=str(tmp_path / model),
                                                         init_checkpoint=str(hf_safetensors_dir), max_length=16))
        assert cli.run(spec, spec.resolve({"turns": 1})) == 2
        assert capsys.readouterr().err.strip().endswith(f"error: {shards}: built for method 'siamese', not 'mge'")
        assert os.path.exists(tmp_path / model) == existed  # one the run did not create is kept


@pytest.mark.slow
def test_resume_falls_back_from_a_damaged_checkpoint_and_removes_leftovers(tmp_path, corpus_file,
                                                                           hf_safetensors_dir):
    first, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir, "model", "--max_steps=4",
                                            "--checkpoint_every=2")))
    assert first.returncode == 0, first.stderr[-3000:]
    model = tmp_path / "model"
    data_file, = [name for name in os.listdir(model) if name.startswith("ckpt-4.data")]
    content = (model / data_file).read_bytes()
    (model / data_file).write_bytes(content[: len(content) // 2])
    (model / "ckpt-6_temp").mkdir()
    (model / ".tmp-data-123").mkdir()
    second, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir, "model", "--max_steps=6",
                                             "--checkpoint_every=2", "--log_every=1")))
    assert second.returncode == 0, second.stderr[-3000:]
    assert "ckpt-4 is damaged" in second.stderr
    assert f"resumed from {model / 'ckpt-2'} at step 2" in second.stderr
    assert "trained to step 6 of 6" in second.stdout
    names = os.listdir(model)
    assert "ckpt-6_temp" not in names and ".tmp-data-123" not in names
    assert tf.train.latest_checkpoint(str(model)).endswith("ckpt-6")
    assert any(name.endswith(".damaged") for name in names)


def test_a_damaged_trained_checkpoint_is_one_checkpoint_error(tmp_path, corpus_file, hf_safetensors_dir):
    from tfdialemb.model_dir import load_method

    trained, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir)))
    assert trained.returncode == 0, trained.stderr[-3000:]
    data_file, = [name for name in os.listdir(tmp_path / "model") if name.startswith("ckpt-2.data")]
    content = (tmp_path / "model" / data_file).read_bytes()
    (tmp_path / "model" / data_file).write_bytes(content[: len(content) // 2])
    for load in (load_pretrained, load_method):
        with pytest.raises(CheckpointError, match=r"ckpt-2: damaged"):
            load(str(tmp_path / "model"))


def test_outputs_are_checked_before_the_work(tmp_path, hf_safetensors_dir):
    (tmp_path / "in.txt").write_text("hello world\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    encode, = _finish(_start("-m", "tfdialemb.encode", f"--init_checkpoint={hf_safetensors_dir}",
                             f"--input={tmp_path / 'in.txt'}", f"--output={tmp_path / 'out'}"))
    assert encode.returncode == 2 and "is a directory" in encode.stderr
    assert "loaded" not in encode.stderr  # refused before the checkpoint was read


# 6. Bad flag values fail at parse time with exit 2; one max-length rule.

@pytest.mark.parametrize("module,flag", [
    ("tfdialemb.train", "--batch_size=-2"), ("tfdialemb.train", "--batch_size=0"),
    ("tfdialemb.train", "--max_steps=0"), ("tfdialemb.train", "--num_epochs=0"),
    ("tfdialemb.encode", "--batch_size=0"), ("tfdialemb.encode", "--max_length=1"),
    ("tfdialemb.train", "--learning_rate=nan"), ("tfdialemb.train", "--warmup_fraction=1.5"),
])
def test_bad_numbers_exit_2_at_parse_time(module, flag):
    result, = _finish(_start("-m", module, flag))
    assert result.returncode == 2
    assert flag.split("=")[0] in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("flags,message", [
    (("--method=context_response", "--lr_schedule=constant", "--warmup_fraction=0.2"),
     "error: --lr_schedule, --warmup_fraction do(es) not apply to --method=context_response with these options, "
     "whose optimizer fixes schedule one_cycle, warmup_steps 0, amsgrad True, no_decay ('bias',)"),
    (("--method=augcl", "--augcl_optimizer=released", "--learning_rate=3e-6", "--weight_decay=0.01"),
     "error: --learning_rate do(es) not apply to --method=augcl with these options, whose optimizer fixes "
     "schedule one_cycle, warmup_steps 0, amsgrad True, no_decay ('bias',), learning_rate 1e-05"),
])
def test_optimizer_flags_a_released_optimizer_would_ignore_exit_2(flags, message):
    result, = _finish(_start("-m", "tfdialemb.train", *flags))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == message


def test_an_optimizer_flag_given_the_released_optimizers_own_value_is_accepted():
    """A flagfile's --learning_rate is overridden by the released optimizer's own 1e-5 on the command line."""
    result, = _finish(_start("-m", "tfdialemb.train", "--method=augcl", "--augcl_optimizer=released",
                             "--learning_rate=2e-5", "--learning_rate=1e-5"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == "error: missing --train_file, --model_dir, --init_checkpoint"


@pytest.mark.slow
def test_a_diverging_run_exits_2_naming_the_step_and_the_last_good_checkpoint(tmp_path, corpus_file,
                                                                             hf_safetensors_dir):
    """A learning rate of 1e30 overflows the weights in one step: the next loss is NaN."""
    result, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir, "model", "--learning_rate=1e30",
                                             "--checkpoint_every=1")))
    assert result.returncode == 2, result.stderr[-3000:]
    assert (f"error: step 2: the loss is nan; training stopped without saving this step. The last good "
            f"checkpoint is {tmp_path / 'model' / 'ckpt-1'}") in result.stderr
    assert "Traceback" not in result.stderr and "trained to step" not in result.stdout
    assert sorted(n for n in os.listdir(tmp_path / "model") if n.endswith(".index")) == ["ckpt-1.index"]


def test_training_past_the_position_embeddings_is_capped_like_every_command(tmp_path, corpus_file,
                                                                             hf_safetensors_dir):
    result, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir, "model", "--max_length=600")))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "max_length 600 exceeds the encoder's 64 positions; using 64" in result.stderr
    with open(tmp_path / "model" / "method.json", encoding="utf-8") as f:
        assert json.load(f)["preprocessing"]["max_length"] == 64


# 7. Silently wrong inputs are rejected or warned about.

@pytest.mark.parametrize("score", ["NaN", "true", "7", "0.5"])
def test_dsts_scores_must_be_numbers_from_1_to_5(tmp_path, score):
    from tfdialemb.dialogue import DialogueFormatError
    from tfdialemb.eval.dialogue_sts import read_pairs

    line = ('{"id": "p", "turns": [{"speaker": "s1", "text": "a"}, {"speaker": "s2", "text": "b"}], '
            f'"labels": {{"score": {score}}}}}')
    (tmp_path / "sts.jsonl").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(DialogueFormatError, match="sts.jsonl:1"):
        read_pairs(str(tmp_path / "sts.jsonl"))


def test_nan_is_not_a_domain_label(tmp_path):
    """A bare NaN is refused as the line is read, by `validate` as by `evaluate`; one that reaches
    the labels otherwise (a Python caller's dialogue) is refused by the evaluation."""
    from tfdialemb.dialogue import DialogueFormatError
    from tfdialemb.eval.dialogue_embedding import checked_label, read_labelled_dialogues

    lines = ['{"id": "a", "turns": [{"speaker": "x", "text": "hi"}], "labels": {"domain": NaN}}',
             '{"id": "b", "turns": [{"speaker": "x", "text": "ho"}], "labels": {"domain": "taxi"}}']
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DialogueFormatError, match=r"d.jsonl:1: NaN is not JSON \(write a number, or null\)"):
        read_labelled_dialogues(str(tmp_path / "d.jsonl"), "domain")
    with pytest.raises(ValueError, match="label 'domain' must be a string, number or boolean, got nan"):
        checked_label("d.jsonl", "a", "domain", float("nan"))


def test_text_of_invisible_characters_is_rejected():
    with pytest.raises(ValueError, match=r"only invisible characters \(U\+200B, U\+200D\)"):
        parse_dialogue({"id": "z", "turns": [{"speaker": "a", "text": "\u200b\u200d\u200b"}]})
    parse_dialogue({"id": "z", "turns": [{"speaker": "a", "text": "\u200bhi"}]})


def test_a_batch_larger_than_the_data_is_warned_about(tmp_path, hf_safetensors_dir):
    write_dialogues(corpus(n=2, seed=1), str(tmp_path / "train.jsonl"))
    result, = _finish(_start(*_train_command(tmp_path, hf_safetensors_dir, "model", "--batch_size=64",
                                             "--max_steps=1")))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "--batch_size=64 exceeds the" in result.stderr and "every batch repeats examples" in result.stderr


# 8. A huge line costs what --max_length allows, not what the line holds.

def test_bounded_texts_keep_the_first_tokens():
    texts = ["hello \t\n  world " * 3 + "good morning", "book a taxi please " * 200, "a" * 500 + " taxi"]
    bounded = TOKENIZER.bound_texts(texts, 5)
    assert all(len(t.decode("utf-8")) <= 5 * (TOKENIZER.max_chars_per_word + 1) for t in bounded.numpy())
    full, cut = TOKENIZER.tokenize(texts).to_list(), TOKENIZER.tokenize(texts, max_tokens=5).to_list()
    for a, b in zip(full, cut):
        assert b[:5] == a[:5]


def test_a_huge_turn_builds_what_its_first_tokens_build(tmp_path):
    huge = Dialogue("huge", (Turn("a", "book a taxi please " * 100_000), Turn("b", "hello world")))
    small = Dialogue("huge", (Turn("a", "book a taxi please " * 10), Turn("b", "hello world")))
    built = []
    for name, dialogue in (("huge", huge), ("small", small)):
        write_dialogues([dialogue], str(tmp_path / f"{name}.jsonl"))
        build(str(tmp_path / f"{name}.jsonl"), str(tmp_path / f"{name}-built"), make_builder("mlm"), TOKENIZER,
              BuildOptions(max_length=12, num_shards=1, min_turns=1))
        built.append([record.numpy() for record in tf.data.TFRecordDataset(
            str(tmp_path / f"{name}-built" / "examples-00000-of-00001.tfrecord"))])
    assert built[0] == built[1]


# 9. Messages that say what happened.

def test_messages_say_what_happened(tmp_path, hf_safetensors_dir):
    from tfdialemb.dialogue import ErrorPolicy, split_dialogues

    write_dialogues(corpus(n=6, seed=1), str(tmp_path / "short.jsonl"))
    with pytest.raises(ValueError, match="6 dialogues passed pre-processing but the ccl builder made no example"):
        build(str(tmp_path / "short.jsonl"), str(tmp_path / "b1"), make_builder("ccl", {"window": 9}), TOKENIZER,
              BuildOptions(max_length=12, num_shards=1))
    with pytest.raises(ValueError, match="no dialogue passed pre-processing"):
        build(str(tmp_path / "short.jsonl"), str(tmp_path / "b2"), make_builder("mlm"), TOKENIZER,
              BuildOptions(max_length=12, num_shards=1, min_turns=50))
    with pytest.raises(IsADirectoryError, match="is a directory; the input file must be a file"):
        list(read_dialogues(str(tmp_path)))
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "short.jsonl").read_bytes())
    assert len(list(read_dialogues(str(tmp_path / "bom.jsonl")))) == 6
    (tmp_path / "bad.jsonl").write_text((tmp_path / "short.jsonl").read_text(encoding="utf-8") + "{not json\n",
                                        encoding="utf-8")
    with pytest.raises(ValueError, match="malformed JSON"):
        split_dialogues(str(tmp_path / "bad.jsonl"), str(tmp_path / "never"), seed=0, errors=ErrorPolicy("fail"))
    assert not os.path.exists(tmp_path / "never")


def test_training_into_the_init_checkpoint_is_refused_before_any_work(tmp_path, monkeypatch, capsys, corpus_file,
                                                                     hf_safetensors_dir):
    import shutil

    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    shutil.copytree(hf_safetensors_dir, tmp_path / "bert")
    before = sorted(os.listdir(tmp_path / "bert"))
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(corpus_file), model_dir=str(tmp_path / "bert"),
                                                     init_checkpoint=str(tmp_path / "bert") + "/"))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({})) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: --model_dir is --init_checkpoint ({tmp_path / 'bert'}): the run's checkpoints would take the place "
        "of the encoder it starts from; give another --model_dir")
    assert sorted(os.listdir(tmp_path / "bert")) == before


@pytest.mark.parametrize("given,message", [
    (dict(validate_file="dev.tsv"), "error: --validate_file needs --validate_every=N (the steps between "
                                    "validations; 0 trains without validating)"),
    (dict(validate_every=5), "error: --validate_every=5 needs --validate_file; without it no validation runs"),
    (dict(validate_file="missing.tsv", validate_every=5), "error: missing.tsv: validation file does not exist"),
])
def test_a_validation_that_would_not_run_is_refused_before_any_work(tmp_path, monkeypatch, capsys, corpus_file,
                                                                    given, message):
    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(corpus_file), model_dir=str(tmp_path / "model"),
                                                     init_checkpoint=str(tmp_path / "no-checkpoint"), **given))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({})) == 2
    assert capsys.readouterr().err.strip() == message
    assert not os.path.exists(tmp_path / "model")  # refused before the data build


def test_a_validation_file_that_is_a_fifo_is_refused_saying_so(tmp_path, monkeypatch, capsys, corpus_file):
    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    os.mkfifo(tmp_path / "dev.jsonl")
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(corpus_file), model_dir=str(tmp_path / "model"),
                                                     init_checkpoint=str(tmp_path / "no-checkpoint"),
                                                     validate_file=str(tmp_path / "dev.jsonl"), validate_every=5))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({})) == 2
    assert capsys.readouterr().err.strip() == (f"error: {tmp_path / 'dev.jsonl'}: is a named pipe (FIFO); the "
                                               "validation file must be a regular file")


def test_validate_every_0_turns_off_a_validation_file_a_flagfile_gives(tmp_path, monkeypatch, capsys, corpus_file):
    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(corpus_file), model_dir=str(tmp_path / "model"),
                                                     init_checkpoint=str(tmp_path / "no-checkpoint"),
                                                     validate_file="missing.tsv", validate_every=0))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({})) == 2
    error = capsys.readouterr().err
    assert "no-checkpoint: checkpoint directory does not exist" in error  # past the validation checks
    assert "--validate" not in error and "missing.tsv" not in error


def test_a_model_or_export_directory_that_is_a_file_is_refused_naming_it(tmp_path, monkeypatch, capsys, corpus_file,
                                                                         hf_safetensors_dir):
    from training_flags import training_flags

    from tfdialemb.core.files import OutputError, check_writable
    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    (tmp_path / "model").write_text("notes\n")
    message = f"{tmp_path / 'model'}: is a file, not a directory; give a directory (or a path that does not exist yet)"
    with pytest.raises(OutputError, match="is a file, not a directory"):
        check_writable(str(tmp_path / "model"), directory_output=True)  # export's --export_dir check
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(corpus_file), model_dir=str(tmp_path / "model"),
                                                     init_checkpoint=str(hf_safetensors_dir)))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({})) == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"
    assert (tmp_path / "model").read_text() == "notes\n"


def test_shards_built_at_another_max_length_are_refused(tmp_path, monkeypatch, capsys, corpus_file, hf_safetensors_dir):
    """The shards' length is the one trained on and recorded: a run asking for another would print
    and record a max_length it does not use."""
    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli

    shards = tmp_path / "shards"
    build(str(corpus_file), str(shards), make_builder("mge", {"negatives": 2}), TOKENIZER,
          BuildOptions(max_length=16, num_shards=1))
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(shards), model_dir=str(tmp_path / "model"),
                                                     init_checkpoint=str(hf_safetensors_dir), max_length=32))
    spec = get_method("mge")
    assert cli.run(spec, spec.resolve({"turns": 1, "negatives": 2})) == 2
    assert capsys.readouterr().err.strip().endswith(
        f"error: {shards}: built with max_length 16, not the 32 this run uses; pass --max_length=16, or rebuild it")
    assert not os.path.exists(tmp_path / "model")


def test_sigterm_as_the_last_step_finishes_still_ends_with_a_line(tmp_path, monkeypatch, corpus_file,
                                                                  hf_safetensors_dir):
    """SIGTERM once the loop saved its last step, while it winds down: the run says what it saved
    (`guarded` prints it after "interrupted: "), rather than SIGTERM's default action ending the
    process with status 143 and no line; here a handler of the test's own stands for that action."""
    from training_flags import training_flags

    from tfdialemb.methods.spec import get_method
    from tfdialemb.training import cli
    from tfdialemb.training.loop import TrainingLoop

    class DefaultAction(Exception):
        pass

    def default_action(signum, frame):
        raise DefaultAction()

    monkeypatch.setattr(TrainingLoop, "_clean_worker_dir", lambda self: os.kill(os.getpid(), signal.SIGTERM))
    monkeypatch.setattr(cli, "FLAGS", training_flags(train_file=str(corpus_file), model_dir=str(tmp_path / "model"),
                                                     init_checkpoint=str(hf_safetensors_dir), max_length=16))
    previous = signal.signal(signal.SIGTERM, default_action)
    try:
        spec = get_method("mge")
        with pytest.raises(KeyboardInterrupt) as interrupted:
            cli.run(spec, spec.resolve({"turns": 1, "negatives": 2}))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert str(interrupted.value) == f"saved step 2 to {tmp_path / 'model'}, the last: training is complete"
