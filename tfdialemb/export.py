r"""Exports a TF Serving SavedModel: strings in, embeddings or scores out.

  python -m tfdialemb.export (--model_dir=DIR | --init_checkpoint=DIR) --export_dir=DIR \
      [--kind=sentence|dialogue|triple] [--version=N] [--max_length=N] [kind's flags]

--model_dir is a trained tfdialemb model, --init_checkpoint any checkpoint the project loads
(Hugging Face BERT, Google TF1 BERT); both are read by the same loader. The model is written to
EXPORT_DIR/N/, TF Serving's versioned layout; N defaults to one more than the highest numeric
subdirectory, else 1 (`tfdialemb.serving.layout`). The tokenizer and its vocabulary are inside
the graph, so clients send raw text. Kinds:

  sentence  (default; `serving.sentence`) serving_default: `sentences` string [None] ->
            `embeddings` float32 [None, H]. --pooling=mean|cls, --max_length (default 128),
            warm-up: each line of --warmup_sentences alone, then all of them.
  dialogue  (`serving.dialogue`) dial2vec dialogue embeddings; serving_default: `turns` string
            [N], `turn_counts` int32 [B], `speakers` int32 [N] -> `embeddings` float32 [B, H]
            (--dialogue_pooling=interlocutor (Eq. 4)|mean|cls), `p1` ... `pR` (each
            interlocutor's mean, R = --num_roles). --separator=sep|eou, --max_length (default
            512); the role and turn embeddings are used when the checkpoint has them.
  triple    (`serving.triple`) stateless incremental scoring, the client holding the state:
            encode_context, encode_candidates, score (Eq. 3), score_maxsim, score_bi;
            --curved=ccl: encode_context, encode_candidates, score_bi. --speaker_tokens,
            --pooling, --max_length (default 512).

Dialogue and triple warm-ups use the dialogues of --warmup_dialogues (canonical JSONL; default:
the first dialogues of the generated demo corpus). A --max_length beyond the encoder's position
embeddings is lowered to them, with a warning. N/ appears complete or not at all, and an
existing version is never overwritten. Besides core TensorFlow ops the graphs use
tensorflow-text's RegexSplitWithOffsets, NormalizeUTF8, FastWordpieceTokenizeWithOffsets and
(sentence, triple) TFText>RoundRobinTrim: TF Serving's model server links them; Python code must
`import tensorflow_text` before `tf.saved_model.load`.

Exit status: 0 written; 1 a bad line in --warmup_dialogues; 2 the command is wrong (missing
checkpoint or warm-up file, an existing version).
"""
import os

from absl import app, flags

from tfdialemb.cli import read_lines, report_error
from tfdialemb.dialogue import read_dialogues
from tfdialemb.dialogue_embedder import DialogueEmbedder
from tfdialemb.embedder import SentenceEmbedder
from tfdialemb.encoders import load_pretrained
from tfdialemb.methods.dial2vec import POOLINGS, has_role_turn_tables
from tfdialemb.serving import dialogue, layout, sentence, triple

DEFAULT_MAX_LENGTH = {"sentence": 128, "dialogue": 512, "triple": 512}
"""Sentence: the library's sentence-embedding default; dialogue: dial2vec's 512 (002 Sec. 4);
triple: what the released triple-encoders were trained with (REFERENCE_CODE_NOTES 5.3)."""
DEMO_WARMUP_DIALOGUES = 4

FLAGS = flags.FLAGS


def define_flags() -> None:
    """The command's flags, defined only when it runs: importing the library defines none."""
    flags.DEFINE_enum("kind", "sentence", list(MODELS), "What to serve: sentence embeddings, "
                      "dial2vec dialogue embeddings or triple-encoder / CCL incremental scoring.")
    flags.DEFINE_string("model_dir", None, "Trained tfdialemb model directory to export.")
    flags.DEFINE_string("init_checkpoint", None, "Any loadable checkpoint, e.g. an untrained BERT.")
    flags.DEFINE_string("export_dir", None, "TF Serving model base path; versions go under it.")
    flags.DEFINE_integer("version", None, "Model version (default: one more than the highest "
                         "numeric subdirectory of --export_dir, else 1).", lower_bound=1)
    flags.DEFINE_enum("pooling", "mean", ["mean", "cls"],
                      "sentence, triple: token pooling of the last layer.")
    flags.DEFINE_integer("max_length", None, "Tokens per sentence or packed dialogue, special "
                         "tokens included; longer ones are truncated (default: "
                         f"{DEFAULT_MAX_LENGTH}).", lower_bound=2)
    flags.DEFINE_string("warmup_sentences", sentence.DEFAULT_WARMUP_SENTENCES,
                        "sentence: UTF-8 text file, one typical request sentence per line, "
                        "replayed by TF Serving when it loads the model.")
    flags.DEFINE_string("warmup_dialogues", None, "dialogue, triple: canonical JSONL dialogues "
                        "for the warm-up requests (default: the first "
                        f"{DEMO_WARMUP_DIALOGUES} dialogues of the generated demo corpus).")
    flags.DEFINE_enum("dialogue_pooling", "interlocutor", list(POOLINGS),
                      "dialogue: the `embeddings` output, Eq. 4's sum of interlocutor means, "
                      "the mean of all tokens or the [CLS] state.")
    flags.DEFINE_enum("separator", "sep", ["sep", "eou"],
                      "dialogue: token between turns, [SEP] or [EOU], as the model was trained.")
    flags.DEFINE_integer("num_roles", 2, "dialogue: interlocutors; speakers past them fold into "
                         "the last role.", lower_bound=2)
    flags.DEFINE_enum("curved", "c3l", list(triple.CURVED),
                      "triple: a C3L triple-encoder or a CCL bi-encoder.")
    flags.DEFINE_bool("speaker_tokens", True,
                      "triple: the model was trained with [O] / [E] speaker tokens.")
    flags.mark_flags_as_required(["export_dir"])
    flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint"], required=True)


def _warmup_dialogues() -> list:
    """--warmup_dialogues, else the first dialogues of the generated demo corpus."""
    if FLAGS.warmup_dialogues:
        if not os.path.isfile(FLAGS.warmup_dialogues):
            raise FileNotFoundError(f"{FLAGS.warmup_dialogues}: warm-up file does not exist")
        return list(read_dialogues(FLAGS.warmup_dialogues))
    from data_prep.make_demo_corpus import generate  # pylint: disable=import-outside-toplevel

    return list(generate(DEMO_WARMUP_DIALOGUES))


def _sentence_model(checkpoint: str, max_length: int):
    """(servable, what its warm-up holds) of --kind=sentence."""
    sentences = read_lines(FLAGS.warmup_sentences)
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(checkpoint), pooling=FLAGS.pooling,
                                                max_length=max_length)
    return sentence.sentence_servable(embedder, sentences), f"{len(sentences)} sentences"


def _dialogue_model(checkpoint: str, max_length: int):
    """--kind=dialogue; role and turn embeddings are used when the checkpoint has both tables."""
    dialogues = _warmup_dialogues()
    pretrained = load_pretrained(checkpoint)
    embedder = DialogueEmbedder.from_pretrained(
        pretrained, max_length=max_length, separator=f"[{FLAGS.separator.upper()}]",
        role_turn_embeddings=has_role_turn_tables(pretrained.encoder),
        num_roles=FLAGS.num_roles)
    return (dialogue.dialogue_servable(embedder, dialogues, FLAGS.dialogue_pooling),
            f"{len(dialogues)} dialogues")


def _triple_model(checkpoint: str, max_length: int):
    """--kind=triple; its warm-up requests carry vectors the model computes."""
    dialogues = _warmup_dialogues()
    embedder = SentenceEmbedder.from_pretrained(load_pretrained(checkpoint), pooling=FLAGS.pooling,
                                                max_length=max_length)
    servable = triple.triple_servable(embedder, dialogues, FLAGS.curved, FLAGS.speaker_tokens)
    return servable, f"{len(servable.records)} requests from {len(dialogues)} dialogues"


MODELS = {"sentence": _sentence_model, "dialogue": _dialogue_model, "triple": _triple_model}


def main(argv):
    del argv
    try:
        version = FLAGS.version or layout.next_version(FLAGS.export_dir)
        layout.version_dir(FLAGS.export_dir, version)  # fails before the slow load
        servable, warmup = MODELS[FLAGS.kind](FLAGS.model_dir or FLAGS.init_checkpoint,
                                              FLAGS.max_length or DEFAULT_MAX_LENGTH[FLAGS.kind])
        target = layout.write_version(*servable, FLAGS.export_dir, version)
    except (OSError, ValueError) as e:
        return report_error(e)
    print(f"wrote TF Serving model version {version} to {target}")
    for name, function in servable.signatures.items():
        print(f"signature {layout.describe_signature(name, function)}")
    print(f"warm-up: {warmup} in {os.path.join(target, layout.WARMUP_FILE)}")
    return 0


def run():
    define_flags()
    app.run(main)


if __name__ == "__main__":
    run()
