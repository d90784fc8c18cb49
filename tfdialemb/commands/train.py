r"""Trains a method on dialogues.

  python -m tfdialemb.train --method=METHOD --train_file=train.jsonl --model_dir=DIR \
      --init_checkpoint=DIR [--max_steps=N | --num_epochs=N] [--batch_size=B] \
      [--strategy=auto|default|mirrored|multi_worker] [--seed=0] [method options]

METHOD is any registered method (`tfdialemb.methods`): mge (DialogueCSE), siamese_s / siamese_m
(its Table 2 baselines), dial2vec, ccl / c3l (triple-encoders), fgc (fine-grained contrastive
response selection), augcl (contrastive learning with dialogue augmentations) and its auxiliary
models context_response and utterance_sorting. Each method's paper values fill the flags left
unset; the run's length (--max_steps or --num_epochs) has a default only where the method's paper
gives one (fgc, augcl, context_response and utterance_sorting: 5 epochs; ccl and c3l: 10), and
the others refuse to start without it. The run prints the settings it uses first, then the
examples it built and the fraction of an epoch its steps cover. A method option given for
another method is refused. A paper's --freeze_layers that the encoder's depth cannot take (6 of a
6-layer MiniLM) becomes the bottom half, and the run says so.

`--train_file` is a canonical JSONL (examples are built into DIR/data, seeded; `python -m
tfdialemb.data convert` writes one from a named corpus or your own JSON, YAML or text) or a
directory built by `python -m tfdialemb.data build`. Per-dataset values live in flags/
(`--flagfile=flags/mge_jddc.cfg`), and flags/METHOD_small.cfg sizes each method for the packaged
all-MiniLM-L6-v2 on a CPU (`bash run_train.sh METHOD FILE.jsonl`). The progress line shows the
mean loss and metrics of the last 10 steps. DIR receives `method.json`, which describes the run, so
`evaluate`, `export` and `encode` need no method flags. Interrupting (Ctrl-C, SIGTERM) saves a
checkpoint; rerunning the same command resumes from the last one. DIR then loads as a checkpoint
(`--init_checkpoint=DIR`, `python -m tfdialemb.evaluate --model_dir=DIR`).
"""
from tfdialemb.training.cli import launch

COMMAND = "train"


def run():
    """Defines the flags of every registered method, then runs: a spec registered before this
    call (e.g. by a user's own module) is trainable like the built-in ones."""
    launch(COMMAND, __name__)


if __name__ == "__main__":
    run()
