r"""Trains a contrastive method on dialogues.

  python -m tfdialemb.train --method=METHOD --train_file=train.jsonl --model_dir=DIR \
      --init_checkpoint=DIR [--max_steps=N | --num_epochs=N] [--batch_size=B] \
      [--strategy=auto|default|mirrored|multi_worker] [--seed=0] [method flags]

Methods and their papers' defaults (any flag given on the command line or in a flagfile wins):

  method     paper            batch  lr     frozen  max_length  other
  mge        DialogueCSE      20     5e-5   6       50          --turns=3 --negatives=9 --temperature=0.1
  siamese_s  DialogueCSE T2   20     5e-5   6       50          --negatives=9
  siamese_m  DialogueCSE T2   20     5e-5   6       50          --turns=3 --temperature=0.1
  dial2vec   dial2vec         20     1e-5   6       512         --negatives=9 --temperature=0.2 --window=10
  ccl        triple-encoders  32     2e-5   0       512         wd 0.01, 10% linear warm-up, --curved_window=5
  c3l        triple-encoders  32     2e-5   0       512         as ccl; start from a ccl model_dir

`mge` is DialogueCSE; `siamese_s` / `siamese_m` its Table 2 baselines (tfdialemb/methods/siamese.py);
`dial2vec` the self-guided interlocutor contrast (tfdialemb/methods/dial2vec.py; batch 20 = the
paper's 5 per GPU on 4 GPUs, the released script runs 5 on one); `ccl` the curved contrastive
bi-encoder and `c3l` the triple-encoder (tfdialemb/methods/ccl.py), with the auxiliary NLI objective
when --nli_file names a local AllNLI.tsv.gz.

`--train_file` is a canonical JSONL (examples are built into DIR/data, seeded) or a directory
built by `python -m tfdialemb.data build`. Per-dataset values live in flags/
(`--flagfile=flags/mge_jddc.cfg`). Interrupting (Ctrl-C, SIGTERM) saves a checkpoint; rerunning the
same command resumes from the last one. DIR then loads as a checkpoint (`--init_checkpoint=DIR`,
`python -m tfdialemb.evaluate --model_dir=DIR`).
"""
import json
import os
import sys

from absl import app, flags

from tfdialemb.training import cli

FLAGS = flags.FLAGS
DIALOGUE_CSE = {"batch_size": 20, "learning_rate": 5e-5, "freeze_layers": 6, "max_length": 50}
CURVED = {"batch_size": 32, "learning_rate": 2e-5, "freeze_layers": 0, "max_length": 512,
          "weight_decay": 0.01, "warmup_fraction": 0.1, "lr_schedule": "linear"}
METHOD_DEFAULTS = {
    "mge": DIALOGUE_CSE,
    "siamese_s": DIALOGUE_CSE,
    "siamese_m": DIALOGUE_CSE,
    "dial2vec": {"batch_size": 20, "learning_rate": 1e-5, "freeze_layers": 6, "max_length": 512,
                 "temperature": 0.2},
    "ccl": CURVED,
    "c3l": CURVED,
}
"""The papers' values per method, applied to every flag the user did not set."""

flags.DEFINE_enum("method", None, sorted(METHOD_DEFAULTS), "The method to train.")
flags.DEFINE_integer("turns", 3, "MGE / siamese_m: context utterances (see tfdialemb/methods).")
flags.DEFINE_integer("negatives", 9, "Negatives per positive (mge: 1/4/9/19 in the paper; "
                     "dial2vec: 9).")
flags.DEFINE_enum("aggregation", "i2", ["i1", "i2"], "MGE turn aggregation (Eq. 5-6 or 7).")
flags.DEFINE_float("temperature", 0.1, "NT-Xent temperature (mge 0.1, dial2vec 0.2); "
                   "siamese_m: initial 1/scale.")
flags.DEFINE_enum("mge_variant", "paper", ["paper", "released"],
                  "released: the public code's ×0.1, Σ(1+α)R̂ over 3+3 turns, loss / candidates.")
flags.DEFINE_enum("negative_role", "random", ["random", "fixed"],
                  "dial2vec: the interlocutor a negative keeps: random (paper) or always the "
                  "second speaker (released code).")
flags.DEFINE_integer("window", 10, "dial2vec: turn window w of the correlation matrices (Eq. 2).")
flags.DEFINE_bool("role_turn_embeddings", False,
                  "dial2vec: add learned role and turn embeddings to the input (PLATO style); "
                  "otherwise roles and turns only drive the masks (BERT branch).")
flags.DEFINE_enum("separator", "sep", ["sep", "eou"], "dial2vec: token between turns, [SEP] or [EOU].")
flags.DEFINE_integer("num_roles", 2, "dial2vec: interlocutors contrasted one-vs-rest; speakers past "
                     "them fold into the last role.", lower_bound=2)
flags.DEFINE_enum("dial2vec_loss", "paper", ["paper", "released"],
                  "released: each interlocutor's NT-Xent divided by the number of samples.")
flags.DEFINE_integer("curved_window", 5, "ccl / c3l: observation window l.")
flags.DEFINE_enum("c3l_labels", "paper", ["paper", "released"],
                  "c3l targets: Eq. 1's normalisation or the released code's label table.")
flags.DEFINE_bool("last_window", True, "ccl / c3l: also the window ending at the last utterance "
                  "(the released code skips it).")
flags.DEFINE_bool("speaker_tokens", True, "ccl / c3l: prefix [O] / [E] speaker tokens.")
flags.DEFINE_string("nli_file", None, "ccl / c3l: local AllNLI.tsv.gz for the auxiliary NLI "
                    "objective (sbert.net); none: no auxiliary objective.")
flags.DEFINE_enum("nli_labels", "paper", ["paper", "released"],
                  "NLI pairs: entailment / contradiction only, or also neutral as label 2 "
                  "(released code).")
cli.define_flags(DIALOGUE_CSE)


def apply_method_defaults(method: str) -> None:
    """Sets `method`'s paper values on the flags that neither the command line nor a flagfile set."""
    for name, value in METHOD_DEFAULTS[method].items():
        if not FLAGS[name].present:
            FLAGS[name].value = value


def main(argv):
    del argv
    if FLAGS.method is None:
        print(f"error: missing --method (one of {', '.join(sorted(METHOD_DEFAULTS))})", file=sys.stderr)
        return 2
    apply_method_defaults(FLAGS.method)
    print(f"{FLAGS.method}: " + ", ".join(f"{name} {FLAGS[name].value}"
                                          for name in METHOD_DEFAULTS[FLAGS.method]), flush=True)
    if FLAGS.method in ("siamese_s", "siamese_m"):
        return _siamese()
    if FLAGS.method == "dial2vec":
        return _dial2vec()
    if FLAGS.method in ("ccl", "c3l"):
        return _curved()
    return _mge()


def _mge():
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.mge import MatchingGuidedEmbeddingModel  # pylint: disable=import-outside-toplevel

    builder = make_builder("mge", {"negatives": FLAGS.negatives, "context_before": FLAGS.turns,
                                   "context_after": FLAGS.turns})
    return cli.run(builder, lambda encoder: MatchingGuidedEmbeddingModel(
        encoder, turns=FLAGS.turns, negatives=FLAGS.negatives, aggregation=FLAGS.aggregation,
        temperature=FLAGS.temperature, variant=FLAGS.mge_variant))


def _siamese():
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.siamese import SiameseModel  # pylint: disable=import-outside-toplevel

    variant = "single" if FLAGS.method == "siamese_s" else "multi"
    return cli.run(
        make_builder("siamese", {"negatives": FLAGS.negatives, "context_turns": FLAGS.turns}),
        lambda encoder: SiameseModel(encoder, variant=variant, negatives=FLAGS.negatives,
                                     temperature=FLAGS.temperature))


def trained_method(model_dir: str):
    """The builder a tfdialemb model directory was trained on (its data/manifest.json), or None."""
    path = os.path.join(model_dir, "data", "manifest.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)["builder"]["method"]


ROLE_VOCAB_SIZE, TURN_VOCAB_SIZE = 10, 100
"""PLATO-style role and turn embedding tables (dial2vec's modeling_bert.py sizes)."""


def _dial2vec():
    from tfdialemb.data.examples import make_builder  # pylint: disable=import-outside-toplevel
    from tfdialemb.methods.dial2vec import Dial2vecModel  # pylint: disable=import-outside-toplevel

    builder = make_builder("dial2vec", {"negatives": FLAGS.negatives, "negative_role": FLAGS.negative_role,
                                        "max_roles": FLAGS.num_roles})
    encoder_options = ({"role_vocab_size": ROLE_VOCAB_SIZE, "turn_vocab_size": TURN_VOCAB_SIZE}
                       if FLAGS.role_turn_embeddings else None)
    return cli.run(
        builder,
        lambda encoder: Dial2vecModel(encoder, negatives=FLAGS.negatives, temperature=FLAGS.temperature,
                                      window=FLAGS.window, num_roles=FLAGS.num_roles,
                                      role_turn_embeddings=FLAGS.role_turn_embeddings,
                                      loss_variant=FLAGS.dial2vec_loss),
        encoder_options=encoder_options,
        build_options={"dialogue_separator": f"[{FLAGS.separator.upper()}]"})


def _curved():
    # pylint: disable=import-outside-toplevel
    from tfdialemb.cli import report_error
    from tfdialemb.data.examples import make_builder
    from tfdialemb.data.nli import nli_dataset, read_nli
    from tfdialemb.methods.ccl import CurvedContrastiveModel

    params = {"window": FLAGS.curved_window, "last_window": FLAGS.last_window,
              "speaker_tokens": FLAGS.speaker_tokens}
    if FLAGS.method == "c3l":
        params["labels"] = FLAGS.c3l_labels
        if FLAGS.init_checkpoint and trained_method(FLAGS.init_checkpoint) != "ccl":
            print(f"warning: {FLAGS.init_checkpoint} is not a CCL model; the paper trains C3L from "
                  "one (bash run_train.sh ccl DATASET first)", file=sys.stderr)
    pairs = None
    if FLAGS.nli_file:
        try:
            pairs = read_nli(FLAGS.nli_file, FLAGS.nli_labels)
        except (OSError, ValueError) as e:
            return report_error(e)

    def nli_batches(context, tokenizer):
        return nli_dataset(pairs, tokenizer, FLAGS.batch_size, FLAGS.max_length, FLAGS.seed, context)

    return cli.run(make_builder(FLAGS.method, params),
                   lambda encoder: CurvedContrastiveModel(encoder, variant=FLAGS.method),
                   auxiliary=nli_batches if pairs is not None else None)


if __name__ == "__main__":
    app.run(main)
