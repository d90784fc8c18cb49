r"""Continued masked-LM pre-training on dialogue text (DialogueCSE stage 1, domain adaptation).

  python -m tfdialemb.pretrain --train_file=train.jsonl --model_dir=DIR --init_checkpoint=DIR \
      [--num_epochs=0.5] [--batch_size=50] [--learning_rate=2e-5] [--max_length=100] \
      [--mask_prob=0.15] [--max_predictions=10] [--unit=utterance|dialogue]

or `bash run_pretrain.sh jddc` with the paper's values in flags/jddc.cfg. The checkpoint's own
masked-LM head is loaded when it has one. Masks are drawn in the input pipeline, fresh every
epoch. DIR loads as `--init_checkpoint` for every method.
"""
from absl import app, flags

from tfdialemb.training import cli

FLAGS = flags.FLAGS
flags.DEFINE_float("mask_prob", 0.15, "Fraction of tokens predicted (DialogueCSE: 0.15).")
flags.DEFINE_integer("max_predictions", 10, "Masked predictions per sequence (DialogueCSE: 10).")
flags.DEFINE_enum("unit", "utterance", ["utterance", "dialogue"],
                  "One sequence per utterance, or per dialogue with turns joined by [SEP].")
cli.define_flags({"batch_size": 50, "learning_rate": 2e-5, "freeze_layers": 0, "max_length": 100,
                  "num_epochs": 0.5})


def main(argv):
    del argv
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.masking import add_masks  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.mlm import MaskedLanguageModel, load_mlm_head  # pylint: disable=import-outside-toplevel
    from tfdialemb.text import BERT_SPECIAL_TOKENS  # pylint: disable=import-outside-toplevel

    def masking(dataset, tokenizer):
        special = [tokenizer.token_id(t) for t in BERT_SPECIAL_TOKENS]
        special += [tokenizer.token_id(t) for t in tokenizer.special_tokens]
        return add_masks(dataset, FLAGS.seed, vocab_size=tokenizer.vocab_size, mask_id=tokenizer.mask_id,
                         special_ids=special, mask_prob=FLAGS.mask_prob,
                         max_predictions=FLAGS.max_predictions)

    return cli.run(make_builder("mlm", {"unit": FLAGS.unit}), MaskedLanguageModel, masking,
                   after_build=lambda model: load_mlm_head(model, FLAGS.init_checkpoint))


if __name__ == "__main__":
    app.run(main)
