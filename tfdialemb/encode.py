r"""Encodes the lines of a text file into sentence embeddings.

  python -m tfdialemb.encode --init_checkpoint=DIR --input=sentences.txt \
      --output=embeddings.npy [--pooling=mean|cls] [--batch_size=64] [--max_length=128]
  python -m tfdialemb.encode --saved_model=EXPORT_DIR --input=sentences.txt --output=embeddings.npy

DIR is any checkpoint the project loads (Hugging Face BERT, Google TF1 BERT, or a tfdialemb model
directory, whose recorded pooling and max length are the defaults). EXPORT_DIR is what
`python -m tfdialemb.export --kind=sentence` wrote (its highest version, or one version
directory): its graph is already traced, so the first embedding comes sooner, with the pooling and
max length it was exported with. Empty lines are skipped; row i of the output is the i-th
non-empty line. The encoder computes in float32 unless --mixed_precision asks otherwise (an
exported model in the precision it was exported with); the precision is printed with the result.
Flags may also come from a file:
--flagfile=flags/encode.cfg.
"""

from absl import app, flags

from tfdialemb import options, precision
from tfdialemb.cli import OVERWRITE, parse_flags
from tfdialemb.inference.settings import MAX_LENGTH, POOLING

FLAGS = flags.FLAGS
flags.DEFINE_string("init_checkpoint", None, "Checkpoint directory to encode with.")
flags.DEFINE_string("saved_model", None, "Exported sentence SavedModel to encode with, instead of "
                    "--init_checkpoint.")
flags.DEFINE_string("input", None, "UTF-8 text file, one sentence per line.")
flags.DEFINE_string("output", None, "Where to write the float32 [lines, hidden] .npy array.")
POOLING.define()
MAX_LENGTH.define()
flags.adopt_module_key_flags(options)
precision.define_flags(default_policy=precision.INFERENCE_POLICY)
flags.DEFINE_integer("batch_size", 64, "Sentences per batch.", lower_bound=1)
OVERWRITE.define()
flags.mark_flags_as_required(["input", "output"])
flags.mark_flags_as_mutual_exclusive(["init_checkpoint", "saved_model"], required=True)
flags.register_multi_flags_validator(
    ["saved_model", "pooling", "max_length"],
    lambda values: not (values["saved_model"] and (FLAGS["pooling"].present or FLAGS["max_length"].present
                                                   or FLAGS["mixed_precision"].present)),
    message="--pooling, --max_length and --mixed_precision are fixed in an exported --saved_model; export "
            "again to change them")


def main(argv):
    del argv
    precision.apply_flags()
    # Imported after flag parsing: TensorFlow is slow to import.
    from tfdialemb.cli import Progress, read_lines, report_error, save_npy_atomic
    from tfdialemb.files import check_output

    try:
        check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
        texts = read_lines(FLAGS.input)
        embedder = _saved_model_embedder() if FLAGS.saved_model else _checkpoint_embedder()
    except (OSError, ValueError) as e:
        return report_error(e)
    policy = embedder.policy if FLAGS.saved_model else precision.resolve(FLAGS.mixed_precision)
    progress = Progress(len(texts), "sentences")
    embeddings = embedder.embed(texts, batch_size=FLAGS.batch_size, on_batch=progress.advance)
    save_npy_atomic(FLAGS.output, embeddings)
    print(f"wrote {embeddings.shape[0]} x {embeddings.shape[1]} embeddings to {FLAGS.output} (computed in {policy})")
    return 0


def _checkpoint_embedder():
    from tfdialemb.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel
    from tfdialemb.model_dir import ModelSource  # pylint: disable=import-outside-toplevel

    source = ModelSource(FLAGS.init_checkpoint)
    settings = source.settings("sentence", {name: FLAGS[name].value for name in ("pooling", "max_length")
                                            if FLAGS[name].present})
    pretrained = source.pretrained
    return SentenceEmbedder.from_settings(pretrained.encoder, pretrained.tokenizer, settings)


def _saved_model_embedder():
    from tfdialemb.exported_embedder import ExportedSentenceEmbedder  # pylint: disable=import-outside-toplevel

    return ExportedSentenceEmbedder(FLAGS.saved_model)


def run():
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
