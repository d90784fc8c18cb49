r"""Encodes the lines of a text file into sentence embeddings.

  python -m tfdialemb.encode --init_checkpoint=DIR --input=sentences.txt \
      --output=embeddings.npy [--pooling=mean|cls] [--batch_size=64] [--max_length=128]

DIR is any checkpoint the project loads (Hugging Face BERT, Google TF1 BERT, or a tfdialemb
model directory). Empty lines are skipped; row i of the output is the i-th non-empty line.
Flags may also come from a file: --flagfile=flags/encode.cfg.
"""

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("init_checkpoint", None, "Checkpoint directory to encode with.")
flags.DEFINE_string("input", None, "UTF-8 text file, one sentence per line.")
flags.DEFINE_string("output", None, "Where to write the float32 [lines, hidden] .npy array.")
flags.DEFINE_enum("pooling", "mean", ["mean", "cls"], "Token pooling of the last layer.")
flags.DEFINE_integer("batch_size", 64, "Sentences per batch.")
flags.DEFINE_integer("max_length", 128, "Tokens per sentence, [CLS] and [SEP] included.")
flags.mark_flags_as_required(["init_checkpoint", "input", "output"])


def main(argv):
    del argv
    # Imported after flag parsing: TensorFlow is slow to import.
    from tfdialemb.cli import Progress, read_lines, report_error, save_npy_atomic
    from tfdialemb.embedder import SentenceEmbedder
    from tfdialemb.encoders import load_pretrained

    try:
        texts = read_lines(FLAGS.input)
        pretrained = load_pretrained(FLAGS.init_checkpoint)
    except (OSError, ValueError) as e:
        return report_error(e)
    embedder = SentenceEmbedder.from_pretrained(
        pretrained, pooling=FLAGS.pooling, max_length=FLAGS.max_length
    )
    progress = Progress(len(texts), "sentences")
    embeddings = embedder.embed(texts, batch_size=FLAGS.batch_size, on_batch=progress.advance)
    save_npy_atomic(FLAGS.output, embeddings)
    print(f"wrote {embeddings.shape[0]} x {embeddings.shape[1]} embeddings to {FLAGS.output}")
    return 0


def run():
    app.run(main)


if __name__ == "__main__":
    run()
