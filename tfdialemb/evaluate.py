r"""Evaluates a sentence encoder on one of the papers' tasks and writes a JSON report.

  python -m tfdialemb.evaluate --task=sr|dsts --eval_file=PATH \
      (--model_dir=DIR | --init_checkpoint=DIR) --output=report.json \
      [--pooling=mean|cls] [--batch_size=64] [--max_length=128]

Tasks: `sr`, DialogueCSE's semantic retrieval (MAP, MRR, P@k, R@k); `dsts`, its dialogue STS
(Spearman, Pearson). The eval file is the released text file or its converted JSONL.
--model_dir is a trained tfdialemb model, --init_checkpoint any checkpoint the project loads
(Hugging Face BERT, Google TF1 BERT); both are read by the same loader.

The report {"task", "eval_file", "checkpoint", "pooling", "metrics"} is written atomically and
printed. Exit status: 0 done; 1 the eval file has a bad line (file, line and reason are named);
2 the command is wrong (missing eval file or checkpoint, a file that is no such set).
"""
import functools
import json
import sys

from absl import app, flags

from tfdialemb.cli import Progress
from tfdialemb.dialogue import DialogueFormatError
from tfdialemb.eval.dialogue_sts import evaluate_dialogue_sts
from tfdialemb.eval.semantic_retrieval import evaluate_semantic_retrieval
from tfdialemb.files import atomic_open

TASKS = {"sr": evaluate_semantic_retrieval, "dsts": evaluate_dialogue_sts}
"""Task name → function(eval_file, embed) → {metric name: value}."""

FLAGS = flags.FLAGS
flags.DEFINE_enum("task", None, sorted(TASKS), "Evaluation task.")
flags.DEFINE_string("eval_file", None, "Evaluation set: released text file or converted JSONL.")
flags.DEFINE_string("model_dir", None, "Trained tfdialemb model directory to evaluate.")
flags.DEFINE_string("init_checkpoint", None, "Any loadable checkpoint, e.g. an untrained BERT.")
flags.DEFINE_string("output", None, "Where to write the JSON report.")
flags.DEFINE_enum("pooling", "mean", ["mean", "cls"], "Token pooling of the last layer.")
flags.DEFINE_integer("batch_size", 64, "Sentences per batch.", lower_bound=1)
flags.DEFINE_integer("max_length", 128, "Tokens per sentence, [CLS] and [SEP] included.",
                     lower_bound=2)
flags.mark_flags_as_required(["task", "eval_file", "output"])
flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint"], required=True)


def main(argv):
    del argv
    # After flag parsing: Model Garden is slow to import.
    from tfdialemb.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel

    checkpoint = FLAGS.model_dir or FLAGS.init_checkpoint

    @functools.lru_cache(maxsize=None)
    def embedder():
        """Loaded when the task first embeds, so a bad eval file fails before a slow load."""
        return SentenceEmbedder.from_pretrained(
            load_pretrained(checkpoint), pooling=FLAGS.pooling, max_length=FLAGS.max_length)

    def embed(texts):
        progress = Progress(len(texts), "sentences")
        return embedder().embed(texts, batch_size=FLAGS.batch_size, on_batch=progress.advance)

    try:
        results = TASKS[FLAGS.task](FLAGS.eval_file, embed)
    except DialogueFormatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report = {"task": FLAGS.task, "eval_file": FLAGS.eval_file, "checkpoint": checkpoint,
              "pooling": FLAGS.pooling, "metrics": results}
    text = json.dumps(report, indent=2, ensure_ascii=False)
    with atomic_open(FLAGS.output) as f:
        f.write(text + "\n")
    print(text)
    return 0


def run():
    app.run(main)


if __name__ == "__main__":
    run()
