r"""Builds a D-STS-style pair set from labelled utterances, for corpora without human scores.

  python -m data_prep.build_sts_set --input=dialogues.jsonl --output=sts.txt [--pairs=1000] [--seed=0]

DialogueCSE's D-STS pairs carry human 1-5 similarity scores. Where none exist (the demo corpus),
this grades a pair by its labels instead — a proxy, not a human judgment:
  5  same intent, same domain        4  same intent, other domain (greetings, thanks, ...)
  2  other intent, same domain       1  other intent, other domain
Utterances are the distinct texts of turns with an `intent` field (dialogue `labels["domain"]`
gives the domain); a text seen with two labellings is dropped, and counted on the output line.
Pairs are drawn, seeded, in equal numbers per score. The output is the released format
`score \t s1 \t s2`, written atomically.
"""
import random
import sys
from typing import Dict, Iterable, List, Optional, Tuple

from absl import app, flags

from data_prep.set_flags import define_input_output

from tfdialemb.core.cli import claim_output, parse_flags, report_error
from tfdialemb.dialogue import Dialogue, read_dialogues
from tfdialemb.core.files import atomic_open, check_output

FLAGS = flags.FLAGS
SCORES = (5, 4, 2, 1)


def labelled_utterances(dialogues: Iterable[Dialogue],
                        counts: Optional[Dict[str, int]] = None) -> List[Tuple[str, str, str]]:
    """(text, intent, domain) of every distinct, consistently labelled utterance, in first-seen
    order; `counts["ambiguous"]`, when given, says how many texts two labellings left out."""
    labels: Dict[str, Tuple[str, str]] = {}
    ambiguous = set()
    for dialogue in dialogues:
        domain = str(dialogue.labels.get("domain", ""))
        for turn in dialogue.turns:
            intent = turn.fields.get("intent")
            if not isinstance(intent, str) or not intent:
                continue
            text = " ".join(turn.text.split())
            if labels.setdefault(text, (intent, domain)) != (intent, domain):
                ambiguous.add(text)
    if counts is not None:
        counts["ambiguous"] = len(ambiguous)
    return [(text, intent, domain) for text, (intent, domain) in labels.items() if text not in ambiguous]


def score(a: Tuple[str, str, str], b: Tuple[str, str, str]) -> int:
    same_intent, same_domain = a[1] == b[1], a[2] == b[2]
    return {(True, True): 5, (True, False): 4, (False, True): 2, (False, False): 1}[(same_intent, same_domain)]


def build_pairs(utterances: List[Tuple[str, str, str]], pairs: int, seed: int) -> List[Tuple[int, str, str]]:
    """`pairs` (score, s1, s2), as equal as possible per score level, in a seeded order."""
    rng = random.Random(seed)
    wanted = {level: pairs // len(SCORES) + (i < pairs % len(SCORES)) for i, level in enumerate(SCORES)}
    found: Dict[int, List[Tuple[int, str, str]]] = {level: [] for level in SCORES}
    seen = set()
    attempts = 0
    while any(len(found[level]) < wanted[level] for level in SCORES) and attempts < 200 * pairs:
        attempts += 1
        i, j = rng.randrange(len(utterances)), rng.randrange(len(utterances))
        if i == j or (min(i, j), max(i, j)) in seen:
            continue
        level = score(utterances[i], utterances[j])
        if len(found[level]) < wanted[level]:
            seen.add((min(i, j), max(i, j)))
            found[level].append((level, utterances[i][0], utterances[j][0]))
    result = [pair for level in SCORES for pair in found[level]]
    rng.shuffle(result)
    return result


def main(argv):
    del argv
    try:
        check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
        claim_output(FLAGS.output)
        dropped: Dict[str, int] = {}
        utterances = labelled_utterances(read_dialogues(FLAGS.input), dropped)
    except (OSError, ValueError) as e:
        return report_error(e)
    if len(utterances) < 2:
        print(f"error: {FLAGS.input}: fewer than two utterances with an intent", file=sys.stderr)
        return 2
    pairs = build_pairs(utterances, FLAGS.pairs, FLAGS.seed)
    with atomic_open(FLAGS.output) as f:
        f.writelines(f"{level}\t{a}\t{b}\n" for level, a, b in pairs)
    counts = {level: sum(p[0] == level for p in pairs) for level in SCORES}
    print(f"wrote {len(pairs)} pairs to {FLAGS.output} (per score: {counts}) from {len(utterances)} labelled "
          f"utterances; dropped {dropped['ambiguous']} texts with two labellings")
    return 0


def define_flags() -> None:
    """Defines the CLI flags; only when run as a program, so importing never clashes with them."""
    define_input_output("Canonical dialogue JSONL whose turns carry `intent`.",
                        "Where to write the pairs (score \\t s1 \\t s2).")
    flags.DEFINE_integer("pairs", 1000, "Pairs to draw.", lower_bound=1)
    flags.DEFINE_integer("seed", 0, "Seed of the pair sampling.")


def run():
    define_flags()
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
