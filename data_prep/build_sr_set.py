r"""Builds a DialogueCSE-style semantic-retrieval (SR) set from intent-labelled utterances.

  python -m data_prep.build_sr_set --input=dialogues.jsonl --output=sr.txt [--queries=500] \
      [--candidates=100] [--max_positives=30] [--seed=0]

The recipe of Liu et al. (EMNLP 2021, section 5.1.2), for corpora that carry intents but no
released SR set:
1. Pool: every distinct utterance (whitespace collapsed) of a turn whose field `intent` is a
   non-empty string. An utterance seen with two intents is dropped as ambiguous, as the paper
   discarded candidates whose intent label was inconsistent; one with no BM25 token is dropped too.
2. Queries: the pool in a seeded random order, taken until --queries are kept or it runs out.
3. Candidates: the --candidates other pool utterances with the highest BM25 score against the
   query (bm25s, Lucene variant, k1 1.5, b 0.75); an utterance sharing no token with the query
   (score 0) is not retrieved; equal scores keep pool order.
4. Labels: positive = same intent. Only the --max_positives best-ranked positives are kept; a
   query left without positives or without negatives is dropped (the evaluator needs both).

BM25 tokens are lower-cased runs of letters and digits, except that every CJK ideograph is a
token of its own: Chinese has no spaces, and a character is what BERT's tokenizer splits it into.

The output is the released text format, `qid \t query \t intent \t pos_ids \t neg_ids`. Ids are
numbers given in order of first use (a kept query, then its candidates by rank) and lines are
written in id order; a candidate that is not a query has both id lists empty. It is written
atomically. Exit status: 0 done; 1 a bad input line; 2 a missing input or nothing to build.
"""
import dataclasses
import random
import re
from typing import Dict, Iterable, List, Tuple

import bm25s
import numpy as np
from absl import app, flags

from data_prep.set_flags import define_input_output

from tfdialemb.dialogue import Dialogue, read_dialogues
from tfdialemb.core.cli import claim_output, parse_flags, report_error
from tfdialemb.core.files import atomic_open, check_output

FLAGS = flags.FLAGS
_CJK = ("\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
        "\U00020000-\U0002a6df\U0002a700-\U0002ceaf\U0002f800-\U0002fa1f")
_TOKEN = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")


def bm25_tokens(text: str) -> List[str]:
    """Lower-cased letter/digit runs, each CJK ideograph a token of its own."""
    return _TOKEN.findall(text.lower())


@dataclasses.dataclass(frozen=True)
class SRLine:
    """One line of the released SR format; a candidate only when both id lists are empty."""
    id: str
    text: str
    intent: str
    positive_ids: Tuple[str, ...] = ()
    negative_ids: Tuple[str, ...] = ()

    def to_line(self) -> str:
        return "\t".join((self.id, self.text, self.intent, ",".join(self.positive_ids),
                          ",".join(self.negative_ids)))


def utterance_pool(dialogues: Iterable[Dialogue], intent_key: str = "intent") -> Tuple[List[Tuple[str, str]], int]:
    """Distinct (text, intent) of the intent-labelled turns (turn field `intent_key`) in order
    of first appearance, and the number of texts dropped because they carry more than one intent."""
    intents: Dict[str, set] = {}
    for dialogue in dialogues:
        for turn in dialogue.turns:
            intent = turn.fields.get(intent_key)
            if isinstance(intent, str) and intent.strip():
                intents.setdefault(" ".join(turn.text.split()), set()).add(" ".join(intent.split()))
    pool = [(text, next(iter(labels))) for text, labels in intents.items()
            if len(labels) == 1 and bm25_tokens(text)]
    return pool, sum(len(labels) > 1 for labels in intents.values())


def _label(pool: List[Tuple[str, str]], query: int, retrieved: List[int],
           max_positives: int) -> Tuple[List[int], List[int], List[int]]:
    """Positives (at most `max_positives`), negatives, and both together in rank order."""
    positives, negatives, kept = [], [], []
    for candidate in retrieved:
        if pool[candidate][1] != pool[query][1]:
            negatives.append(candidate)
        elif len(positives) < max_positives:
            positives.append(candidate)
        else:
            continue
        kept.append(candidate)
    return positives, negatives, kept


def build_sr_set(pool: List[Tuple[str, str]], queries: int = 500, candidates: int = 100,
                 max_positives: int = 30, seed: int = 0) -> Tuple[List[SRLine], Dict[str, int]]:
    """The SR lines built from `pool` (see the module docstring) and what was kept and dropped."""
    tokens = [bm25_tokens(text) for text, _ in pool]
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index(tokens, show_progress=False)
    order = list(range(len(pool)))
    random.Random(seed).shuffle(order)
    counts = {"utterances": len(pool), "no_positives": 0, "no_negatives": 0}
    ids: Dict[int, str] = {}
    labelled: Dict[int, Tuple[List[int], List[int]]] = {}
    for query in order:
        if len(labelled) == queries:
            break
        scores = retriever.get_scores(tokens[query])
        scores[query] = 0.0
        ranked = np.argsort(-scores, kind="stable")[:candidates]
        positives, negatives, kept = _label(pool, query, ranked[scores[ranked] > 0].tolist(),
                                            max_positives)
        if not positives:
            counts["no_positives"] += 1
        elif not negatives:
            counts["no_negatives"] += 1
        else:
            for index in [query, *kept]:
                ids.setdefault(index, str(len(ids)))
            labelled[query] = (positives, negatives)
    lines = []
    for index, line_id in ids.items():
        positives, negatives = labelled.get(index, ((), ()))
        lines.append(SRLine(line_id, *pool[index], tuple(ids[i] for i in positives),
                            tuple(ids[i] for i in negatives)))
    counts.update(queries=len(labelled), lines=len(lines))
    return lines, counts


def write_sr_set(lines: Iterable[SRLine], path: str) -> None:
    """Writes the SR lines to `path` only once complete."""
    with atomic_open(path) as f:
        for line in lines:
            f.write(line.to_line() + "\n")


def main(argv):
    del argv
    try:
        check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
        claim_output(FLAGS.output)
        pool, ambiguous = utterance_pool(read_dialogues(FLAGS.input), FLAGS.intent_key)
        if not pool:
            raise ValueError(f"{FLAGS.input}: no turn has a non-empty string `{FLAGS.intent_key}`")
        lines, counts = build_sr_set(pool, FLAGS.queries, FLAGS.candidates, FLAGS.max_positives,
                                     FLAGS.seed)
        if not counts["queries"]:
            raise ValueError(f"{FLAGS.input}: no query has both a positive and a negative "
                             f"candidate ({len(pool)} intent-labelled utterances)")
    except (OSError, ValueError) as e:
        return report_error(e)
    write_sr_set(lines, FLAGS.output)
    print(f"wrote {counts['queries']} queries ({counts['lines']} lines) to {FLAGS.output}; "
          f"pool {counts['utterances']} utterances ({ambiguous} ambiguous dropped); dropped "
          f"{counts['no_positives']} queries without positives and {counts['no_negatives']} "
          f"without negatives")
    return 0


def define_flags() -> None:
    """Defines the CLI flags; only when run as a program, so importing never clashes with them."""
    define_input_output("Canonical dialogue JSONL whose turns carry `intent`.",
                        "Where to write the SR set (released text format).")
    flags.DEFINE_integer("queries", 500, "Queries to keep.", lower_bound=1)
    flags.DEFINE_integer("candidates", 100, "BM25 candidates retrieved per query.", lower_bound=1)
    flags.DEFINE_integer("max_positives", 30, "Most positives kept per query.", lower_bound=1)
    flags.DEFINE_integer("seed", 0, "Seed of the query sampling.")
    flags.DEFINE_string("intent_key", "intent", "The turn field holding the intent (MDC: `intent`, one of its 11 "
                        "acts, or `intent_acts`, the joined act names).")


def run():
    define_flags()
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
