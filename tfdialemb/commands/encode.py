r"""Encodes lines of text into sentence embeddings.

  python -m tfdialemb.encode --model_dir=DIR --input=sentences.txt --output=embeddings.npy \
      [--normalize] [--pooling=mean|cls] [--batch_size=64] [--max_length=128]
  python -m tfdialemb.encode --init_checkpoint=DIR --input=- --output=embeddings.jsonl
  python -m tfdialemb.encode --saved_model=EXPORT_DIR --input=sentences.txt --output=embeddings.tsv

The model is one of: --model_dir, a trained model directory (`python -m tfdialemb.train`), whose
recorded pooling and max length are the defaults; --init_checkpoint, any checkpoint the project
loads (Hugging Face BERT such as the packaged all-MiniLM-L6-v2, Google TF1 BERT, a tfdialemb
directory); --saved_model, what `python -m tfdialemb.export --kind=sentence` wrote (its highest
version, or one version directory): its graph is already traced, so the first embedding comes
sooner, with the pooling and max length it was exported with. --normalize scales every embedding
to unit L2 norm (sentence-transformers' Normalize).

--input is a UTF-8 text file, one sentence per line, or `-` for standard input. Empty lines are
skipped, and how many is said on stderr; row i of the output is the i-th non-empty line (a leading
byte-order mark is no part of the first). The output's extension picks its layout:
`.npy` a float32 [lines, hidden] array; `.jsonl` one {"text": ..., "embedding": [...]} per line;
`.tsv` one row of tab-separated values per line, without the text (TensorBoard Projector's
vectors.tsv). Values in text layouts keep 9 significant digits, enough to read back the same
float32. The output is written only once complete. The encoder computes in float32 unless
--mixed_precision asks otherwise (an exported model in the precision it was exported with); the
precision is printed with the result. Flags may also come from a file: --flagfile=encode.cfg.
"""

import sys

from absl import flags

from tfdialemb.core import precision

from tfdialemb.core import options
from tfdialemb.core.progress import Progress
from tfdialemb.core.cli import (
    OVERWRITE,
    STDIN,
    claim_output,
    read_lines_counted,
    report_error,
    run_command,
)
from tfdialemb.core.files import check_output
from tfdialemb.inference.embedding_files import OUTPUT_LAYOUTS, write_embeddings
from tfdialemb.inference.kinds import load
from tfdialemb.inference_settings import MAX_LENGTH, NORMALIZE, POOLING

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Trained tfdialemb model directory to encode with.")
flags.DEFINE_string("init_checkpoint", None, "Any checkpoint directory to encode with, e.g. an untrained BERT.")
flags.DEFINE_string("saved_model", None, "Exported sentence SavedModel to encode with.")
flags.DEFINE_string("input", None, "UTF-8 text file, one sentence per line; - reads standard input.")
flags.DEFINE_string("output", None, f"Where to write the embeddings: {', '.join(OUTPUT_LAYOUTS)} (by extension).")
POOLING.define()
MAX_LENGTH.define()
NORMALIZE.define()
precision.define_flags(default_policy=precision.INFERENCE_POLICY)
flags.DEFINE_integer("batch_size", 64, "Sentences per batch.", lower_bound=1)
OVERWRITE.define()
flags.adopt_module_key_flags(options)
flags.mark_flags_as_required(["input", "output"])
flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint", "saved_model"], required=True)
flags.register_multi_flags_validator(
    ["saved_model", "pooling", "max_length"],
    lambda values: not (values["saved_model"] and (FLAGS["pooling"].present or FLAGS["max_length"].present
                                                   or FLAGS["mixed_precision"].present)),
    message="--pooling, --max_length and --mixed_precision are fixed in an exported --saved_model; export "
            "again to change them")


def main(argv):
    del argv
    import numpy as np  # pylint: disable=import-outside-toplevel


    try:
        check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
        if not FLAGS.output.endswith(OUTPUT_LAYOUTS):
            raise ValueError(f"{FLAGS.output}: --output must end with {', '.join(OUTPUT_LAYOUTS)} (its layout)")
        claim_output(FLAGS.output)
        texts, blank = read_lines_counted(FLAGS.input)
        precision.apply_flags()  # TensorFlow loads here, once the input is read
        embedder = _saved_model_embedder() if FLAGS.saved_model else _checkpoint_embedder()
    except (OSError, ValueError) as e:
        return report_error(e)
    policy = embedder.policy if FLAGS.saved_model else precision.resolve(FLAGS.mixed_precision)
    if blank:  # said, as the rows of a .npy or .tsv output no longer follow the input's line numbers
        print(f"note: skipped {blank} blank line{'s' if blank > 1 else ''} of "
              f"{'standard input' if FLAGS.input == STDIN else FLAGS.input}: row i of {FLAGS.output} "
              "is the i-th non-blank line", file=sys.stderr)
    progress = Progress(len(texts), "sentences")
    embeddings = embedder.embed(texts, batch_size=FLAGS.batch_size, on_batch=progress.advance)
    bad = int((~np.isfinite(embeddings).all(axis=1)).sum())
    if bad:
        return report_error(ValueError(f"the encoder gave non-finite values for {bad} of {len(texts)} sentences; "
                                       f"{FLAGS.output} not written"))
    write_embeddings(FLAGS.output, texts, embeddings)
    print(f"wrote {embeddings.shape[0]} x {embeddings.shape[1]} embeddings"
          + (" (unit length)" if FLAGS.normalize else "") + f" to {FLAGS.output} (computed in {policy})")
    return 0


def _checkpoint_embedder():
    given = {name: FLAGS[name].value for name in ("pooling", "max_length") if FLAGS[name].present}
    return load(FLAGS.model_dir or FLAGS.init_checkpoint, "sentence", given, normalize=FLAGS.normalize)


def _saved_model_embedder():
    from tfdialemb.serving.exported_embedder import ExportedSentenceEmbedder  # pylint: disable=import-outside-toplevel

    return ExportedSentenceEmbedder(FLAGS.saved_model, normalize=FLAGS.normalize)


def run():
    run_command(main, __name__)


if __name__ == "__main__":
    run()
