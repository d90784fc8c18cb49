r"""Finds the corpus entries nearest a query: its nearest neighbours by the cosine of their embeddings.

  python -m tfdialemb.search --model_dir=DIR --corpus=sentences.txt --query="book a taxi" [--top_k=5]
  python -m tfdialemb.search --model_dir=DIR --corpus=dialogues.jsonl --query='["I need a taxi", "Where to?"]'

--model_dir is a trained model directory (its recorded settings apply, as for `encode --model_dir`)
or any checkpoint the project loads. --corpus is a UTF-8 text file, one sentence per line (empty
lines skipped), searched with sentence embeddings; or a canonical JSON Lines file of dialogues
(`.jsonl`, `tfdialemb.dialogue`), searched with the dialogue embedding the model serves. For
dialogues, --query is a canonical dialogue object, a JSON list of turn texts (speakers
alternating) or plain text (a dialogue of one turn). The ranked table goes to standard output,
highest cosine first (`tfdialemb.util.semantic_search`), the progress bar to standard error.
"""
import json
import os

from absl import flags

from tfdialemb.core.cli import read_lines, report_error, run_command
from tfdialemb.core.inputs import check_input_file
from tfdialemb.dialogue import as_dialogue, read_dialogues
from tfdialemb.inference.kinds import load
from tfdialemb.util import semantic_search

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Trained tfdialemb model directory, or any checkpoint, to embed with.")
flags.DEFINE_string("corpus", None, "Text file, one sentence per line; or canonical JSON Lines of dialogues (.jsonl).")
flags.DEFINE_string("query", None, "The sentence to search for; for dialogues a JSON list of turns, a canonical "
                    "dialogue object or one turn's text.")
flags.DEFINE_integer("top_k", 5, "Neighbours to list.", lower_bound=1)
flags.DEFINE_integer("batch_size", 64, "Corpus entries embedded per batch.", lower_bound=1)
flags.mark_flags_as_required(["model_dir", "corpus", "query"])

DIALOGUES = ".jsonl"
"""The corpus extension of canonical dialogues; any other is read as lines of text."""
SHOWN = 80
"""Characters of an entry the table shows."""


def main(argv):
    del argv
    dialogues = FLAGS.corpus.endswith(DIALOGUES)
    try:
        check_input_file(FLAGS.corpus, "corpus")
        if not os.path.isdir(FLAGS.model_dir):
            raise FileNotFoundError(f"{FLAGS.model_dir}: model directory does not exist")
        corpus = list(read_dialogues(FLAGS.corpus)) if dialogues else read_lines(FLAGS.corpus)
        if not corpus:
            raise ValueError(f"{FLAGS.corpus}: has no dialogues to search")
        query = _query_dialogue(FLAGS.query) if dialogues else FLAGS.query
        embedder = load(FLAGS.model_dir, "dialogue" if dialogues else "sentence")
    except (OSError, ValueError) as e:
        return report_error(e)
    corpus_vectors = embedder.encode(corpus, batch_size=FLAGS.batch_size, show_progress_bar=True)
    hits = semantic_search(embedder.encode(query, show_progress_bar=False), corpus_vectors, top_k=FLAGS.top_k)[0]
    print(f"{'rank':>4}  {'score':>7}  {'dialogue' if dialogues else 'sentence'}")
    for rank, hit in enumerate(hits, start=1):
        print(f"{rank:>4}  {hit['score']:>7.4f}  {_shown(corpus[hit['corpus_id']])}")
    return 0


def _query_dialogue(text: str):
    """--query as a dialogue: JSON (a list of turns or a canonical object) or one turn's text."""
    value = [text]
    if text.lstrip().startswith(("[", "{")):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"--query: malformed JSON ({e.msg} at column {e.colno})") from None
    try:
        return as_dialogue(value, "query")
    except ValueError as e:
        raise ValueError(f"--query: {e}") from None


def _shown(entry) -> str:
    """A sentence, or a dialogue's id and turns, cut to SHOWN characters."""
    text = entry if isinstance(entry, str) else f"{entry.id}: " + " / ".join(turn.text for turn in entry.turns)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def run():
    run_command(main, __name__)


if __name__ == "__main__":
    run()
