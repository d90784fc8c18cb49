r"""The main job end to end on the generated demo corpus (what `bash run_demo.sh` runs).

  python -m tfdialemb.demo [--workdir=runs/demo] [--init_checkpoint=DIR] [--dialogues=2000]
      [--pretrain_steps=30] [--mge_steps=60]

Stages, each the command a user would run (printed before it runs):
  1. generate the demo corpus and split it into train/dev/test;
  2. build SR (BM25 candidates, same-intent positives) and D-STS-style sets from the test split;
  3. evaluate the untrained encoder (default: the packaged all-MiniLM-L6-v2);
  4. continued MLM pre-training on the training dialogues, then evaluate;
  5. MGE contrastive training from the pre-trained encoder, then evaluate;
  6. export the MGE encoder as a SavedModel and check it against the library's embeddings;
  7. print a summary table.
Stages whose outputs exist are skipped, so an interrupted demo resumes where it stopped.
"""
import json
import os
import subprocess
import sys
import time

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("workdir", "runs/demo", "Where the corpus, models, reports and export go.")
flags.DEFINE_string("init_checkpoint", None, "Encoder to start from (default: the packaged MiniLM).")
flags.DEFINE_integer("dialogues", 2000, "Demo dialogues to generate.")
flags.DEFINE_integer("pretrain_steps", 30, "Continued MLM pre-training steps.")
flags.DEFINE_integer("mge_steps", 60, "MGE training steps.")
flags.DEFINE_integer("freeze_layers", 3, "Frozen bottom layers for MGE (MiniLM has 6).")


def _run(*args: str) -> None:
    """Runs one stage's command, showing it; stops the demo if it fails."""
    command = [sys.executable, "-m", *args]
    print("\n$ python -m " + " ".join(args), flush=True)
    started = time.time()
    result = subprocess.run(command)
    if result.returncode != 0:
        raise SystemExit(f"demo stopped: the command above exited with {result.returncode}")
    print(f"  ({time.time() - started:.0f} s)", flush=True)


def _evaluate(name: str, checkpoint_flag: str, sr: str, sts: str, reports: str) -> dict:
    metrics = {}
    for task, eval_file in (("sr", sr), ("dsts", sts)):
        report = os.path.join(reports, f"{name}-{task}.json")
        if not os.path.exists(report):
            _run("tfdialemb.evaluate", f"--task={task}", f"--eval_file={eval_file}", checkpoint_flag,
                 f"--output={report}")
        with open(report, encoding="utf-8") as f:
            metrics.update(json.load(f)["metrics"])
    return metrics


def main(argv):
    del argv
    from tfdialemb.encoders import packaged_minilm_path  # pylint: disable=import-outside-toplevel

    started = time.time()
    work = FLAGS.workdir
    try:
        encoder = FLAGS.init_checkpoint or packaged_minilm_path()
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    corpus, splits, reports = (os.path.join(work, "demo.jsonl"), os.path.join(work, "splits"),
                               os.path.join(work, "reports"))
    os.makedirs(reports, exist_ok=True)
    if not os.path.exists(corpus):
        _run("data_prep.make_demo_corpus", f"--output={corpus}", f"--dialogues={FLAGS.dialogues}")
    train, test = os.path.join(splits, "train.jsonl"), os.path.join(splits, "test.jsonl")
    if not os.path.exists(test):
        _run("tfdialemb.data", "split", f"--input={corpus}", f"--output_dir={splits}", "--seed=0")
    sr, sts = os.path.join(work, "sr_test.txt"), os.path.join(work, "sts_test.txt")
    if not os.path.exists(sr):
        _run("data_prep.build_sr_set", f"--input={test}", f"--output={sr}", "--queries=300")
    if not os.path.exists(sts):
        _run("data_prep.build_sts_set", f"--input={test}", f"--output={sts}", "--pairs=1000")

    rows = {"untrained encoder": _evaluate("untrained", f"--init_checkpoint={encoder}", sr, sts, reports)}
    pretrained = os.path.join(work, "pretrain")
    _run("tfdialemb.pretrain", f"--train_file={train}", f"--model_dir={pretrained}",
         f"--init_checkpoint={encoder}", f"--max_steps={FLAGS.pretrain_steps}", "--batch_size=32",
         "--max_length=32", "--learning_rate=5e-5", "--log_every=10", "--checkpoint_every=10")
    rows["+ continued MLM"] = _evaluate("pretrained", f"--model_dir={pretrained}", sr, sts, reports)
    mge = os.path.join(work, "mge")
    _run("tfdialemb.train", "--method=mge", f"--train_file={train}", f"--model_dir={mge}",
         f"--init_checkpoint={pretrained}", f"--max_steps={FLAGS.mge_steps}", "--batch_size=16",
         "--max_length=32", f"--freeze_layers={FLAGS.freeze_layers}", "--log_every=10", "--checkpoint_every=20")
    rows["+ MGE (DialogueCSE)"] = _evaluate("mge", f"--model_dir={mge}", sr, sts, reports)

    export_dir = os.path.join(work, "export")
    if not os.path.isdir(os.path.join(export_dir, "1")):
        _run("tfdialemb.export", f"--model_dir={mge}", f"--export_dir={export_dir}", "--version=1")

    print(f"\nDialogueCSE on {FLAGS.dialogues} demo dialogues (test split; "
          f"{time.time() - started:.0f} s in all)")
    columns = ("map", "mrr", "p@1", "spearman")
    print(f"{'encoder':24}" + "".join(f"{c:>10}" for c in columns))
    for name, metrics in rows.items():
        print(f"{name:24}" + "".join(f"{metrics[c]:10.4f}" for c in columns))
    print(f"\nSR: {sr}  D-STS-style pairs (label-graded, not human): {sts}")
    print(f"models: {pretrained}, {mge}; SavedModel for TF Serving: {export_dir}/1")
    return 0


if __name__ == "__main__":
    app.run(main)
