"""The shipped flagfiles carry the papers' data preparation, and their recipes run as written."""
import os
import shlex
import shutil

import pytest
from absl import flags

import tfdialemb.data.__main__ as data_cli
import tiny_bert
from tfdialemb.dialogue import read_dialogues

FLAGS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "flags")
DIAL2VEC_FILES = os.path.join(os.path.dirname(__file__), "converters", "fixtures", "dial2vec")
"""train.tsv, clustering_dev.tsv and clustering_test.tsv in the released layout."""


def _flagfile_names() -> list:
    """Every shipped flagfile as NAME of FLAGS_DIR/NAME.cfg, those of subfolders (ablations/) too."""
    return sorted(os.path.relpath(os.path.join(folder, file), FLAGS_DIR)[:-4]
                  for folder, _, files in os.walk(FLAGS_DIR) for file in files if file.endswith(".cfg"))


def _flag_values(name: str) -> dict:
    with open(os.path.join(FLAGS_DIR, f"{name}.cfg"), encoding="utf-8") as f:
        pairs = [line.strip()[2:].split("=", 1) for line in f if line.startswith("--")]
    return {key: value for key, value in pairs}


@pytest.mark.parametrize("name", ["jddc", "ecd", "mge_jddc", "mge_ecd"])
def test_jddc_and_ecd_recipes_drop_dialogues_under_four_turns(name):
    """DialogueCSE Sec. 5.1.1: dialogues of fewer than 4 turns are dropped from JDDC and ECD, in
    continued pre-training and in the contrastive stage alike."""
    assert _flag_values(name)["min_turns"] == "4"


def _commands(name: str, module: str) -> list:
    """The `python -m MODULE ...` commands of a flagfile's comments, as argument lists."""
    with open(os.path.join(FLAGS_DIR, f"{name}.cfg"), encoding="utf-8") as f:
        lines = [line.lstrip("#").strip() for line in f if line.startswith("#")]
    prefix = f"python -m {module} "
    return [shlex.split(line[len(prefix):]) for line in lines if line.startswith(prefix)]


@pytest.mark.parametrize("dataset", ["bitod", "doc2dial", "metalwoz", "mwoz", "selfdialog", "sgd"])
def test_dial2vec_recipes_convert_the_released_files_as_written(dataset, tmp_path, monkeypatch, capsys):
    """Run from a directory holding datasets/DATASET/ as the released archive lays it out, the
    flagfile's convert commands write its --train_file and the evaluation sets its evaluate
    command reads."""
    name = f"dial2vec_{dataset}"
    shutil.copytree(DIAL2VEC_FILES, tmp_path / "datasets" / dataset, ignore=shutil.ignore_patterns("bad"))
    monkeypatch.chdir(tmp_path)
    converts = _commands(name, "tfdialemb.data")
    assert [args[0] for args in converts] == ["convert"] * 3
    outputs = []
    for args in converts:
        flags.FLAGS.unparse_flags()
        assert data_cli.main(flags.FLAGS(["tfdialemb.data", *args])) == 0, capsys.readouterr().err
        outputs.append(flags.FLAGS.output)
    flags.FLAGS.unparse_flags()
    train, dev, test = ([d.labels for d in read_dialogues(path)] for path in outputs)
    assert outputs[0] == _flag_values(name)["train_file"] and train == [{}] * 6
    assert dev == [{"domain": "1"}, {"domain": "2"}] and test == [{"domain": t} for t in "121"]
    [evaluate] = _commands(name, "tfdialemb.evaluate")
    assert f"--eval_file={outputs[2]}" in evaluate and f"--model_dir={_flag_values(name)['model_dir']}" in evaluate


@pytest.mark.parametrize("name", ["ccl_dailydialog", "c3l_dailydialog"])
def test_triple_encoder_recipes_train_with_the_nli_objective(name):
    """Triple-encoders Sec. 3 trains with an auxiliary NLI objective, alternated with the dialogue
    one as the released code does."""
    values = _flag_values(name)
    assert values["nli_file"] == "data/AllNLI.tsv.gz" and values["nli_schedule"] == "alternate"


def test_run_pretrain_jddc_reads_its_flagfile_as_written(tmp_path):
    """`bash run_pretrain.sh jddc` (the project card's use) runs `pretrain --flagfile=flags/jddc.cfg`:
    the recipe names its objective and gets as far as the files the user has not put there yet,
    the training file first (checked before TensorFlow loads), then the checkpoint."""
    import subprocess
    import sys

    root = os.path.dirname(FLAGS_DIR)
    result = subprocess.run([sys.executable, "-m", "tfdialemb.pretrain", "--flagfile=flags/jddc.cfg",
                             f"--model_dir={tmp_path}/m"], cwd=root, capture_output=True, text=True, timeout=300)
    assert _flag_values("jddc")["objective"] == "mlm"
    assert (result.returncode, result.stderr) == (2, "error: data/jddc/train.jsonl: training file does not exist\n")
    (tmp_path / "train.jsonl").write_text("", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "tfdialemb.pretrain", "--flagfile=flags/jddc.cfg",
                             f"--train_file={tmp_path}/train.jsonl", f"--model_dir={tmp_path}/m"], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "checkpoints/chinese_L-12_H-768_A-12" in result.stderr, result.stderr[-2000:]


SGD_FILES = os.path.join(os.path.dirname(__file__), "converters", "fixtures", "sgd", "train")
"""dialogues_NNN.json and schema.json of one split of the released dstc8-schema-guided-dialogue."""
DIALOGSTUDIO_DIALOGUES = os.path.join(os.path.dirname(__file__), "converters", "fixtures", "dialogstudio",
                                      "collection", "MetaLWOZ", "test", "dialogues_1.json")


def _released_sgd(root):
    for split in ("train", "dev", "test"):
        shutil.copytree(SGD_FILES, root / "dstc8-schema-guided-dialogue" / split)


def test_augcl_sgd_recipe_converts_the_released_splits_as_written(tmp_path, monkeypatch, capsys):
    """flags/augcl_sgd.cfg: its convert commands, run where the released SGD repository lies, write
    the --train_file and --validate_file the flagfile trains on."""
    _released_sgd(tmp_path)
    monkeypatch.chdir(tmp_path)
    outputs = []
    for args in _commands("augcl_sgd", "tfdialemb.data"):
        flags.FLAGS.unparse_flags()
        assert data_cli.main(flags.FLAGS(["tfdialemb.data", *args])) == 0, capsys.readouterr().err
        outputs.append(flags.FLAGS.output)
    flags.FLAGS.unparse_flags()
    values = _flag_values("augcl_sgd")
    assert outputs == [values["train_file"], values["validate_file"]]
    assert all(d.labels.get("domain") for d in read_dialogues(values["validate_file"]))
    assert values["augment_set"] == "a-l-m-dse" and values["freeze_layers"] == "-3"


@pytest.mark.slow
def test_augcl_dialogstudio_recipe_runs_as_written(tmp_path):
    """flags/augcl_dialogstudio.cfg: its shell recipe (the loop over the thesis' collections, the
    join, the SGD conversions), run by bash on the released layouts, writes every file the
    flagfile and its evaluate command read."""
    import json
    import subprocess
    import sys

    collections = ["MS-DC", "MetaLWOZ", "SimJointGEN", "KETOD", "FRAMES", "Disambiguation", "ABCD", "AirDialogue",
                   "Taskmaster1"]
    with open(DIALOGSTUDIO_DIALOGUES, encoding="utf-8") as f:
        released = f.read()
    for name in collections:  # the Hugging Face repository keeps each collection under a category folder
        folder = tmp_path / "dialogstudio" / "task_oriented" / name / "train"
        folder.mkdir(parents=True)
        (folder / "dialogues_1.json").write_text(released.replace("MetaLWOZ--test--", f"{name}--train--"))
    _released_sgd(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    with open(os.path.join(FLAGS_DIR, "augcl_dialogstudio.cfg"), encoding="utf-8") as f:
        commands = [line.lstrip("#").strip() for line in f if line.startswith("#")]
    script = [c for c in commands if c.split(" ")[0] in ("mkdir", "for", "bound=96;", "python", "done", "cat")
              and not c.startswith("python -m tfdialemb.evaluate")]
    assert len(script) == 10
    for model in ("mpnet-base", "bert-base-uncased"):  # only their vocabularies are read
        (tmp_path / "models" / model).mkdir(parents=True)
        tiny_bert.write_vocab(str(tmp_path / "models" / model))
    root = os.path.dirname(FLAGS_DIR)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONPATH=root)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(script)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    values = _flag_values("augcl_dialogstudio")
    joined = list(read_dialogues(str(tmp_path / "data" / "dialogstudio" / "all.jsonl")))
    per_collection = len(json.loads(released))
    assert len(joined) == len(collections) * per_collection
    assert [d.labels["dataset"] for d in joined[::per_collection]] == collections
    splits = {name: [d.id for d in read_dialogues(str(tmp_path / "data" / "dialogstudio" / f"{name}.jsonl"))]
              for name in ("train", "dev", "test")}
    assert sorted(sum(splits.values(), [])) == sorted(d.id for d in joined)
    assert tmp_path / values["train_file"] == tmp_path / "data" / "dialogstudio" / "train.jsonl"
    assert (tmp_path / values["validate_file"]).is_file()
    [evaluate] = _commands("augcl_dialogstudio", "tfdialemb.evaluate")
    for flag in ("--eval_file", "--fit_file"):
        path = next(a.split("=", 1)[1] for a in evaluate if a.startswith(flag + "="))
        assert (tmp_path / path).is_file(), path


def test_every_flagfile_names_only_flags_its_command_defines():
    """Each shipped flagfile parses as `python -m tfdialemb.train` (or `pretrain`, for those naming an
    --objective) reads it, in one process per command: no flag is unknown or out of range."""
    import subprocess
    import sys

    by_command = {"train": [], "pretrain": []}
    for name in _flagfile_names():
        command = "pretrain" if "objective" in _flag_values(name) else "train"
        by_command[command].append(os.path.join(FLAGS_DIR, f"{name}.cfg"))
    script = ("import sys; from absl import flags; from tfdialemb.training.flags import define_flags\n"
              "define_flags(sys.argv[1])\n"
              "for path in sys.argv[2:]:\n"
              "    flags.FLAGS.unparse_flags(); flags.FLAGS(['x', '--flagfile=' + path]); print('parsed', path)\n")
    for command, paths in by_command.items():
        result = subprocess.run([sys.executable, "-c", script, command, *paths], capture_output=True, text=True,
                                timeout=300, cwd=os.path.dirname(FLAGS_DIR))
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.count("parsed ") == len(paths)
    assert any(name.startswith("ablations/") for name in _flagfile_names())


METHOD_PAGES = ("dialoguecse", "dial2vec", "fgc", "triple-encoders", "augcl")


def _documented_ablations(page: str) -> list:
    """The `python -m tfdialemb.compare` commands of a method page's "The paper's ablation"."""
    with open(os.path.join(os.path.dirname(FLAGS_DIR), "docs", "methods", f"{page}.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n## The paper's ablation\n")
    section = text[start:text.index("\n## ", start + 1)].replace("\\\n", " ")
    return [shlex.split(line)[3:] for line in section.splitlines() if line.startswith("python -m tfdialemb.compare ")]


def test_each_documented_ablation_is_a_comparison_compare_accepts(tmp_path):
    """Each method page's compare command, its files replaced by empty stand-ins, passes every check
    `compare` makes before it trains: the flagfiles exist and parse, their options belong to their
    methods, and the configurations differ in nothing but the method and its options."""
    import json
    import subprocess
    import sys

    (tmp_path / "train.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "eval.txt").write_text("", encoding="utf-8")
    (tmp_path / "encoder").mkdir()
    stand_ins = {"--train_file": tmp_path / "train.jsonl", "--init_checkpoint": tmp_path / "encoder",
                 "--eval_file": tmp_path / "eval.txt"}
    commands = []
    for page in METHOD_PAGES:
        [arguments] = _documented_ablations(page)
        replaced = [f"{a.split('=', 1)[0]}={stand_ins[a.split('=', 1)[0]]}" if a.split("=", 1)[0] in stand_ins
                    else f"--output_dir={tmp_path / page}" if a.startswith("--output_dir=") else a for a in arguments]
        replaced = [f"--evaluate_flag=--fit_file={stand_ins['--eval_file']}" if a.startswith("--evaluate_flag=--fit_file=")
                    else a for a in replaced]
        commands.append(replaced + ["--max_steps=2"])
    script = ("import json, sys; from absl import flags; from tfdialemb.commands import compare; compare.define_flags()\n"
              "for arguments in json.loads(sys.argv[1]):\n"
              "    flags.FLAGS.unparse_flags(); flags.FLAGS(['compare', *arguments])\n"
              "    evaluator, configs, seeds, runs, setup = compare.plan()\n"
              "    print('planned', evaluator.name, ','.join(configs), setup['allowed_differences'])\n")
    result = subprocess.run([sys.executable, "-c", script, json.dumps(commands)], capture_output=True, text=True,
                            timeout=300, cwd=os.path.dirname(FLAGS_DIR))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == [
        "planned sr mge,siamese_m,siamese_s {}",
        "planned dialogue dial2vec,dialogue_contrast {}",
        "planned response_selection fgc,selection_only,without_ivc,without_cvc {}",
        "planned sequence_modeling c3l,ccl,hard_positives {}",
        "planned probes augcl,dropout_views {}"]
