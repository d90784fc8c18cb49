r"""Evaluates a sentence encoder on one of the papers' tasks and writes a JSON report.

  python -m tfdialemb.evaluate --task=sr|dsts --eval_file=PATH \
      (--model_dir=DIR | --init_checkpoint=DIR) --output=report.json \
      [--pooling=mean|cls] [--batch_size=64] [--max_length=128] \
      [--embedding=encoder|whitening|flow|glove] [--fit_file=corpus.jsonl] \
      [--fit_utterances=20000] [--fit_seed=0] [--whitening_dim=k] [--glove_file=PATH]

Tasks: `sr`, DialogueCSE's semantic retrieval (MAP, MRR, P@k, R@k); `dsts`, its dialogue STS
(Spearman, Pearson). The eval file is the released text file or its converted JSONL.
--model_dir is a trained tfdialemb model, --init_checkpoint any checkpoint the project loads
(Hugging Face BERT, Google TF1 BERT); both are read by the same loader.

--embedding picks DialogueCSE's Table 2 baselines that need no training loop: `encoder` (the
checkpoint's pooled embeddings: BERT-CLS / BERT-avg, adapted or not), `whitening` (BERT-whitening)
and `flow` (BERT-flow) fitted on the encoder's embeddings of a seeded sample of at most
--fit_utterances utterances of --fit_file (canonical dialogues), and `glove` (average GloVe from
--glove_file; no checkpoint). See tfdialemb/baselines.

The report {"task", "eval_file", "checkpoint", "pooling", "embedding", "metrics"} is written
atomically and printed; "embedding" holds the kind and its parameters (fit sample, whitened size,
flow architecture and training, GloVe coverage). Exit status: 0 done; 1 the eval or fit file has a
bad line (file, line and reason are named); 2 the command is wrong (missing eval file or
checkpoint, a file that is no such set, a flag the embedding needs or does not use).
"""
import functools
import json
import random
import sys
from typing import List

import numpy as np
from absl import app, flags

from tfdialemb.cli import Progress, report_error
from tfdialemb.dialogue import read_dialogues
from tfdialemb.eval.inputs import embed_distinct
from tfdialemb.eval.tasks import TASKS
from tfdialemb.files import atomic_open

EMBEDDINGS = ("encoder", "whitening", "flow", "glove")
FITTED_EMBEDDINGS = ("whitening", "flow")
EMBEDDING_FLAGS = {
    "fit_file": FITTED_EMBEDDINGS, "fit_utterances": FITTED_EMBEDDINGS,
    "fit_seed": FITTED_EMBEDDINGS, "whitening_dim": ("whitening",), "flow_epochs": ("flow",),
    "flow_batch_size": ("flow",), "flow_learning_rate": ("flow",), "glove_file": ("glove",),
}
"""Flag → the --embedding kinds it applies to."""
REQUIRED_FLAG = {"whitening": "fit_file", "flow": "fit_file", "glove": "glove_file"}

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
flags.DEFINE_enum("embedding", "encoder", EMBEDDINGS,
                  "Sentence embedding: the encoder's, BERT-whitening, BERT-flow or average GloVe.")
flags.DEFINE_string("fit_file", None, "Canonical JSONL dialogues whose utterances fit whitening "
                    "or flow.")
flags.DEFINE_integer("fit_utterances", 20000, "Utterances sampled from --fit_file (at most).",
                     lower_bound=2)
flags.DEFINE_integer("fit_seed", 0, "Seed of the utterance sample and of the flow.")
flags.DEFINE_integer("whitening_dim", None, "Whitened dimensions kept (default: all).",
                     lower_bound=1)
flags.DEFINE_integer("flow_epochs", 1, "BERT-flow training epochs.", lower_bound=1)
flags.DEFINE_integer("flow_batch_size", 32, "BERT-flow training batch size.", lower_bound=1)
flags.DEFINE_float("flow_learning_rate", 1e-3, "BERT-flow learning rate.", lower_bound=0.0)
flags.DEFINE_string("glove_file", None, "Local GloVe / word2vec text file for --embedding=glove.")
flags.mark_flags_as_required(["task", "eval_file", "output"])
flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint"])


def check_embedding_flags() -> None:
    """ValueError naming the flag that --embedding needs, or that it would silently ignore."""
    kind = FLAGS.embedding
    has_checkpoint = bool(FLAGS.model_dir or FLAGS.init_checkpoint)
    if kind == "glove" and has_checkpoint:
        raise ValueError("--embedding=glove uses no encoder: drop --model_dir/--init_checkpoint")
    if kind != "glove" and not has_checkpoint:
        raise ValueError(f"--embedding={kind} needs --model_dir or --init_checkpoint")
    for name, kinds in EMBEDDING_FLAGS.items():
        if FLAGS[name].present and kind not in kinds:
            raise ValueError(f"--{name} does not apply to --embedding={kind}")
    if kind in REQUIRED_FLAG and not FLAGS[REQUIRED_FLAG[kind]].value:
        raise ValueError(f"--embedding={kind} needs --{REQUIRED_FLAG[kind]}")


def sample_utterances(path: str, limit: int, seed: int) -> List[str]:
    """A uniform sample of at most `limit` utterances (turn texts) of a dialogue file.

    Reservoir sampling (Vitter's Algorithm R), so a corpus of any size streams through memory
    that holds `limit` texts; the same file and seed give the same sample.
    """
    rng = random.Random(seed)
    sample: List[str] = []
    seen = 0
    for dialogue in read_dialogues(path):
        for turn in dialogue.turns:
            if seen < limit:
                sample.append(turn.text)
            else:
                slot = rng.randrange(seen + 1)
                if slot < limit:
                    sample[slot] = turn.text
            seen += 1
    if len(sample) < 2:
        raise ValueError(f"{path}: fitting needs at least 2 utterances, got {len(sample)}")
    return sample


def fit_transform(encode, embedding: dict):
    """Whitening or flow fitted on the encoder's embeddings of --fit_file's utterance sample;
    its parameters are recorded in `embedding`."""
    # After flag parsing: TensorFlow is slow to import.
    from tfdialemb.baselines.flow import GlowFlow  # pylint: disable=import-outside-toplevel
    from tfdialemb.baselines.whitening import Whitening  # pylint: disable=import-outside-toplevel

    sample = sample_utterances(FLAGS.fit_file, FLAGS.fit_utterances, FLAGS.fit_seed)
    vectors = embed_distinct(encode, sample)
    corpus = np.stack([vectors[text] for text in sample])
    embedding.update(fit_file=FLAGS.fit_file, fit_utterances=len(sample),
                     fit_seed=FLAGS.fit_seed)
    if FLAGS.embedding == "whitening":
        transform = Whitening.fit(corpus, k=FLAGS.whitening_dim)
        embedding.update(dim=transform.dim)
        return transform
    transform = GlowFlow(corpus.shape[1], seed=FLAGS.fit_seed)
    losses = transform.fit(corpus, epochs=FLAGS.flow_epochs, batch_size=FLAGS.flow_batch_size,
                           learning_rate=FLAGS.flow_learning_rate, seed=FLAGS.fit_seed)
    embedding.update(**transform.config, epochs=FLAGS.flow_epochs,
                     batch_size=FLAGS.flow_batch_size, learning_rate=FLAGS.flow_learning_rate,
                     bits_per_dim_by_epoch=losses)
    return transform


def main(argv):
    del argv
    try:
        check_embedding_flags()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # After flag parsing: Model Garden is slow to import.
    from tfdialemb.baselines.glove import GloveEmbedder  # pylint: disable=import-outside-toplevel
    from tfdialemb.embedder import SentenceEmbedder  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel

    checkpoint = FLAGS.model_dir or FLAGS.init_checkpoint
    embedding = {"kind": FLAGS.embedding}

    @functools.lru_cache(maxsize=None)
    def embedder():
        """Loaded when the task first embeds, so a bad eval file fails before a slow load."""
        return SentenceEmbedder.from_pretrained(
            load_pretrained(checkpoint), pooling=FLAGS.pooling, max_length=FLAGS.max_length)

    def encode(texts):
        progress = Progress(len(texts), "sentences")
        return embedder().embed(texts, batch_size=FLAGS.batch_size, on_batch=progress.advance)

    @functools.lru_cache(maxsize=None)
    def transform():
        """Fitted when the task first embeds, like the encoder's load."""
        return fit_transform(encode, embedding)

    @functools.lru_cache(maxsize=None)
    def glove():
        return GloveEmbedder(FLAGS.glove_file)

    def embed(texts):
        if FLAGS.embedding == "glove":
            vectors = glove().embed(texts)
            embedding.update(glove_file=FLAGS.glove_file, **glove().coverage())
            return vectors
        if FLAGS.embedding == "encoder":
            return encode(texts)
        return transform().transform(encode(texts))

    try:
        results = TASKS[FLAGS.task](FLAGS.eval_file, embed)
    except (OSError, ValueError) as e:
        return report_error(e)
    report = {"task": FLAGS.task, "eval_file": FLAGS.eval_file, "checkpoint": checkpoint,
              "pooling": None if FLAGS.embedding == "glove" else FLAGS.pooling,
              "embedding": embedding, "metrics": results}
    text = json.dumps(report, indent=2, ensure_ascii=False)
    with atomic_open(FLAGS.output) as f:
        f.write(text + "\n")
    print(text)
    return 0


def run():
    app.run(main)


if __name__ == "__main__":
    run()
