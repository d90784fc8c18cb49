r"""Continued pre-training on dialogue text (DialogueCSE stage 1, domain adaptation).

  python -m tfdialemb.pretrain --train_file=train.jsonl --model_dir=DIR --init_checkpoint=DIR \
      [--objective=mlm] [--num_epochs=0.5] [--batch_size=50] [--learning_rate=2e-5] \
      [--max_length=100] [--mask_prob=0.15] [--max_predictions=10] [--unit=utterance|dialogue]
  python -m tfdialemb.pretrain --objective=mlm_nsp --train_file=train.jsonl --model_dir=DIR \
      --init_checkpoint=DIR [--num_epochs=10] [--batch_size=512] [--max_length=512] \
      [--max_predictions=70] [--short_context_prob=0.1]

Objectives: `mlm`, DialogueCSE's continued masked-LM pre-training (`bash run_pretrain.sh jddc`,
the paper's values in flags/jddc.cfg); `mlm_nsp`, BERT-DPT's domain-adaptive post-training with
masked-LM and next-sentence prediction, the base of FGC (`bash run_pretrain.sh ubuntu`, values in
flags/dpt_ubuntu.cfg). The checkpoint's own masked-LM and next-sentence heads are loaded when it
has them. Masks are drawn in the input pipeline, fresh every epoch. DIR loads as
`--init_checkpoint` for every method.
"""
from tfdialemb.training.cli import launch

COMMAND = "pretrain"


def run():
    launch(COMMAND, __name__)


if __name__ == "__main__":
    run()
