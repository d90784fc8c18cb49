r"""Continued pre-training on dialogue text (DialogueCSE stage 1, domain adaptation).

  python -m tfdialemb.pretrain --train_file=train.jsonl --model_dir=DIR --init_checkpoint=DIR \
      [--objective=mlm] [--num_epochs=0.5] [--batch_size=50] [--learning_rate=2e-5] \
      [--max_length=100] [--mask_prob=0.15] [--max_predictions=10] [--unit=utterance|dialogue]

or `bash run_pretrain.sh jddc` with the paper's values in flags/jddc.cfg. The checkpoint's own
masked-LM head is loaded when it has one. Masks are drawn in the input pipeline, fresh every
epoch. DIR loads as `--init_checkpoint` for every method.
"""
from absl import app, flags

from tfdialemb.cli import parse_flags

from tfdialemb.training import cli

COMMAND = "pretrain"


def main(argv):
    del argv
    return cli.main(COMMAND)


def run():
    cli.define_flags(COMMAND)
    for module in cli.flag_modules():
        flags.adopt_module_key_flags(module)
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
