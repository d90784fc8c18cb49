r"""Builds a short-term-planning (STP) set from canonical dialogues (triple-encoders Sec. 4.2;
UKPLab/acl2024-triple-encoders triple_encoders/TripleEncodersForSTP.py).

  python -m data_prep.build_stp_set --input=test.jsonl --output=stp.jsonl \
      [--history_lengths=2,5,10] [--goal_distances=1,2,3,4] [--distractors=100] [--seed=0] \
      [--pool_size=100000] [--distractors_file=generated.jsonl | --distractor_model=DialoGPT-large \
       [--distractor_top_p=0.8] [--distractor_temperature=0.8] [--distractor_max_length=1000]]

One record per dialogue d and (h, g) with len(d) >= h + g + 1, in file order, then h, then g:
  {"id": "<dialogue id>/h<h>/g<g>", "history": d[:h], "candidate": d[h], "goal": d[h+g],
   "distractors": [...], "history_length": h, "goal_distance": g}
(the format of tfdialemb.eval.short_term_planning).

Distractors. The paper ranks the true next utterance among 100 DialoGPT-large samples (top_p =
temperature = 0.8) of the history. Three sources, recorded in every record's
"distractor_source" (and so in the evaluation report):
- --distractor_model=DIR samples --distractors continuations of the history from a local causal
  LM (e.g. DialoGPT-large: config.json, model.safetensors, tokenizer files) as the released code
  prompts and samples it, seeded by --seed (data_prep/causal_lm_distractors.py);
  --distractor_top_p, --distractor_temperature and --distractor_max_length (tokens, prompt
  included) default to the released 0.8, 0.8 and 1000. Blank samples are left out and counted.
- --distractors_file takes externally generated candidates: JSONL {"id": ..., "distractors":
  [...]}, one entry for every record id and no other.
- By default --distractors distinct utterances, none with the true candidate's text, are drawn,
  seeded, from OTHER dialogues of the same file: a first pass fills a reservoir of at most --pool_size utterances
  (tfdialemb.data.sampling.UtterancePool, memory bounded however large the file), a second pass
  streams the dialogues and writes the records. Such distractors are easier than generated ones
  (they ignore the history), so the numbers are not the paper's.

The output is written atomically. Exit status: 0 done; 1 a bad input line; 2 a missing input,
a bad flag value or nothing to build.
"""
import json
import os
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
from absl import app, flags

from data_prep.causal_lm_distractors import MAX_LENGTH, TEMPERATURE, TOP_P, CausalLmSampler
from data_prep.set_flags import define_input_output

from tfdialemb.core.cli import claim_output, parse_flags, report_error
from tfdialemb.core.progress import Progress
from tfdialemb.data.sampling import UtterancePool
from tfdialemb.dialogue import (Dialogue, DialogueFormatError, ErrorPolicy, iter_lines,
                                read_dialogues)
from tfdialemb.eval.short_term_planning import PlanningRecord
from tfdialemb.core.files import atomic_open, check_output

FLAGS = flags.FLAGS


def planning_questions(dialogue: Dialogue, history_lengths: Sequence[int],
                       goal_distances: Sequence[int]) -> Iterator[Tuple[str, int, int]]:
    """(record id, h, g) of every (h, g) the dialogue is long enough for, len(d) >= h + g + 1."""
    for h in history_lengths:
        for g in goal_distances:
            if len(dialogue.turns) >= h + g + 1:
                yield f"{dialogue.id}/h{h}/g{g}", h, g


def read_distractors(path: str) -> Dict[str, Tuple[str, ...]]:
    """{record id: distractors} of a --distractors_file; a bad line raises DialogueFormatError."""
    distractors: Dict[str, Tuple[str, ...]] = {}
    for number, line in iter_lines(path, ErrorPolicy("fail")):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as e:
            raise DialogueFormatError(path, number, f"malformed JSON ({e.msg})") from None
        texts = entry.get("distractors") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not (
                isinstance(texts, list) and texts and all(
                    isinstance(t, str) and t.strip() for t in texts)):
            raise DialogueFormatError(path, number, 'expected {"id": str, "distractors": '
                                      '[non-empty strings, at least one]}')
        if entry["id"] in distractors:
            raise DialogueFormatError(path, number, f"duplicate id {entry['id']!r}")
        distractors[entry["id"]] = tuple(texts)
    return distractors


def utterance_pool(path: str, capacity: int, seed: int, form: Callable[[str], str] = str) -> UtterancePool:
    """The reservoir of the file's utterances, as `form` writes them, each tagged with its
    dialogue's line order."""
    pool = UtterancePool(capacity, seed)
    for index, dialogue in enumerate(read_dialogues(path)):
        pool.add(index, [form(turn.text) for turn in dialogue.turns])
    return pool


def _positive_sorted(values: Sequence[int], name: str) -> Tuple[int, ...]:
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"{name} must be positive integers, got {list(values)}")
    return tuple(sorted(set(values)))


def build_stp_set(input_path: str, output_path: str, history_lengths: Sequence[int] = (2, 5, 10),
                  goal_distances: Sequence[int] = (1, 2, 3, 4), distractors: int = 100,
                  seed: int = 0, pool_size: int = 100_000,
                  distractors_file: Optional[str] = None,
                  sampler: Optional[CausalLmSampler] = None) -> Dict[str, int]:
    """Writes the STP set (module docstring) and returns counts {dialogues, records,
    blank_samples}. The distractors are `sampler`'s samples, else `distractors_file`'s, else
    drawn from the utterance pool."""
    history_lengths = _positive_sorted(history_lengths, "history_lengths")
    goal_distances = _positive_sorted(goal_distances, "goal_distances")
    if distractors < 1:
        raise ValueError(f"distractors must be positive, got {distractors}")
    if distractors_file and sampler is not None:
        raise ValueError("take the distractors from a file or from a model, not both")
    external = read_distractors(distractors_file) if distractors_file else None
    pool = None if external is not None or sampler is not None else utterance_pool(
        input_path, pool_size, seed)
    if sampler is not None:
        source = sampler.source
    elif external is not None:
        source = f"file:{os.path.abspath(distractors_file)}"
    else:
        source = f"random_pool seed={seed}"
    rng = np.random.default_rng(seed)
    counts = {"dialogues": 0, "records": 0, "blank_samples": 0}
    written = set()
    progress = Progress(None, "dialogues")
    with atomic_open(output_path) as f:
        for index, dialogue in enumerate(read_dialogues(input_path)):
            texts = [turn.text for turn in dialogue.turns]
            for record_id, h, g in planning_questions(dialogue, history_lengths, goal_distances):
                if sampler is not None:
                    chosen = tuple(sampler.sample(record_id, texts[:h], distractors))
                    counts["blank_samples"] += distractors - len(chosen)
                    if not chosen:
                        raise ValueError(f"record {record_id!r}: all {distractors} samples of "
                                         f"{sampler.directory} are blank")
                elif external is None:
                    chosen = tuple(pool.sample(rng, distractors, exclude_dialogue=index, exclude_texts=(texts[h],)))
                elif record_id in external:
                    chosen = external[record_id]
                else:
                    raise ValueError(f"{distractors_file}: no distractors for record {record_id!r}")
                record = PlanningRecord(record_id, tuple(texts[:h]), texts[h], texts[h + g],
                                        chosen, g, source)
                f.write(json.dumps(record.to_json(), ensure_ascii=False) + "\n")
                written.add(record_id)
            counts["dialogues"] += 1
            progress.advance(1)
        progress.finish()
        if external is not None and set(external) - written:
            unknown = sorted(set(external) - written)
            raise ValueError(f"{distractors_file}: {len(unknown)} ids match no record of this "
                             f"set (check --history_lengths/--goal_distances), e.g. {unknown[:3]}")
        if not written:
            raise ValueError(f"{input_path}: no dialogue has h + g + 1 turns for any h in "
                             f"{list(history_lengths)}, g in {list(goal_distances)}")
    counts["records"] = len(written)
    return counts


def parse_int_list(values: Sequence[str], name: str) -> List[int]:
    """The integers of a list flag; a ValueError naming the flag otherwise."""
    try:
        return [int(v) for v in values]
    except ValueError:
        raise ValueError(f"{name} must be a comma-separated list of integers, got "
                         f"{','.join(values)!r}") from None


def main(argv):
    del argv
    try:
        check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
        claim_output(FLAGS.output)
        history_lengths = parse_int_list(FLAGS.history_lengths, "--history_lengths")
        goal_distances = parse_int_list(FLAGS.goal_distances, "--goal_distances")
        sampler = None
        if FLAGS.distractor_model:
            sampler = CausalLmSampler(FLAGS.distractor_model, FLAGS.distractor_top_p,
                                      FLAGS.distractor_temperature, FLAGS.distractor_max_length,
                                      FLAGS.seed)
        counts = build_stp_set(FLAGS.input, FLAGS.output, history_lengths, goal_distances,
                               FLAGS.distractors, FLAGS.seed, FLAGS.pool_size,
                               FLAGS.distractors_file, sampler)
    except (OSError, ValueError) as e:
        return report_error(e)
    blank = f" ({counts['blank_samples']} blank samples left out)" if sampler else ""
    print(f"wrote {counts['records']} STP records from {counts['dialogues']} dialogues to "
          f"{FLAGS.output}{blank}")
    return 0


def define_flags() -> None:
    """Defines the CLI flags; only when run as a program, so importing never clashes with them."""
    define_input_output("Canonical dialogue JSONL (e.g. the test split).",
                        "Where to write the STP set (JSONL).")
    flags.DEFINE_list("history_lengths", ["2", "5", "10"], "History lengths h.")
    flags.DEFINE_list("goal_distances", ["1", "2", "3", "4"], "Goal distances g.")
    flags.DEFINE_integer("distractors", 100, "Distractors drawn per record.", lower_bound=1)
    flags.DEFINE_integer("seed", 0, "Seed of the distractor sampling (pool or model).")
    flags.DEFINE_integer("pool_size", 100_000, "Reservoir capacity of the utterance pool.",
                         lower_bound=1)
    flags.DEFINE_string("distractors_file", None,
                        'JSONL {"id", "distractors"} of externally generated candidates.')
    flags.DEFINE_string("distractor_model", None,
                        "Local causal LM directory (config.json, model.safetensors, tokenizer "
                        "files; e.g. DialoGPT-large) whose samples of the history are the "
                        "distractors, prompted as the released code does.")
    flags.DEFINE_float("distractor_top_p", TOP_P, "--distractor_model: nucleus sampling top_p "
                       "(the paper's 0.8).")
    flags.DEFINE_float("distractor_temperature", TEMPERATURE, "--distractor_model: sampling "
                       "temperature (the paper's 0.8).")
    flags.DEFINE_integer("distractor_max_length", MAX_LENGTH, "--distractor_model: tokens per "
                         "sample, the prompt included (the released 1000).", lower_bound=2)
    flags.mark_flags_as_mutual_exclusive(["distractors_file", "distractor_model"])


def run():
    define_flags()
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
