r"""The augmentation thesis' Table 3 (and Tables 4-5) from the grid a user asks for.

  python -m tfdialemb.thesis_grid [--sets=t-l,t-h,a-h,a-l-m,a-h-m,a-l-m-dse] [--encoders=bert,retromae=DIR]
      [--workdir=runs/table3] [--flags_dir=flags] [--train_file=...] [--probe_fit_file=...]
      [--probe_eval_file=...] [--intent_fit_file=... --intent_eval_file=...] [--invariance_file=...]
      [--context_response_model=DIR | --context_response_init=DIR] [--train_flag=--max_steps=100 ...]
      [--evaluate_flag=--max_length=256 ...] [--probes_flag=... --intent_flag=... --invariance_flag=...]

Each cell of Table 3 is a run of `python -m tfdialemb.train --flagfile=FLAGS_DIR/augcl_table3_SET_ENCODER.cfg`
(the row's flagfile: its set, its `--on_the_fly`, the released variant bundle), with the paths given
here overriding the flagfile's, then `evaluate --task=probes` on the SGD sets (classification
accuracy, clustering purity, retrieval nDCG@100) and, with banking77 files, `--task=intent`. The
"raw" row evaluates each encoder untrained, reading the thesis' layout. The sets scored by the
context-response model (a-h, a-l-m, a-h-m) need one: `--context_response_model`, or one trained
here first with `--method=context_response` from `--context_response_init` (the thesis' encoder,
aws-ai/dse-bert-large, whose trained model is not public). Tables 4-5 (with a-l-m-dse in the grid):
`evaluate --task=invariance` of each encoder raw and trained on a-l-m-dse ("cft"), on
`--invariance_file`, or on the a-l-m-dse augmentations of --probe_fit_file (SGD train, the set the
released scatter-analysis.sh augments and probes) written here; dialogues over 512 tokens are left
out as released (`--invariance_max_tokens`).

Every command is printed and run in its own process; a run resumes from its checkpoints and a
report already written is read when it records the same evaluate arguments and the weights its
model holds now (else it is evaluated again: a run resumed further is never shown with its earlier
figures; the augmented probe file likewise, `steps.run_once`), so an interrupted grid
continues where it stopped. The tables (percentages, as the thesis prints them) are printed and
written to WORKDIR/tables.md; a grid that stops on the way writes the cells it finished there, the
others as dashes, under a line saying where it stopped.
"""
import os
import sys
from typing import Dict, List, Optional, Tuple

from absl import flags

from tfdialemb.augment.augmented_file import PARTIAL_SUFFIX
from tfdialemb.augment.operations import MODEL_FLAGS, required_model_flags
from tfdialemb.augment.presets import PRESETS
from tfdialemb.core.cli import run_command
from tfdialemb.commands.steps import evaluation_metrics, run_once, run_step
from tfdialemb.eval.invariance import knn_key
from tfdialemb.core.files import atomic_open

FLAGS = flags.FLAGS
flags.DEFINE_list("sets", list(PRESETS), "Table 3 rows to run (thesis Table 1's sets and a-h-m).")
flags.DEFINE_list("encoders", ["bert"], "Table 3 columns: bert and/or retromae, each optionally =DIR to override "
                  "the flagfile's --init_checkpoint.")
flags.DEFINE_string("workdir", "runs/table3", "Where the runs, reports and tables go.")
flags.DEFINE_string("flags_dir", "flags", "The directory of the augcl_table3_SET_ENCODER.cfg flagfiles.")
flags.DEFINE_string("train_file", None, "Plain dialogues to augment and train on (default: the flagfiles').")
flags.DEFINE_string("probe_fit_file", "data/sgd/train_single_domain.jsonl", "Domain probes: the fitted part.")
flags.DEFINE_string("probe_eval_file", "data/sgd/test_single_domain.jsonl", "Domain probes: the scored part.")
flags.DEFINE_string("probe_label_key", "domain", "Domain probes: the label.")
flags.DEFINE_string("intent_fit_file", None, "banking77 train (--format=banking77); with --intent_eval_file, the "
                    "intents column.")
flags.DEFINE_string("intent_eval_file", None, "banking77 test (--format=banking77).")
flags.DEFINE_string("invariance_file", None, "Augmented probe dialogues for Tables 4-5 (default: the a-l-m-dse "
                    "augmentations of --probe_fit_file, SGD train as released, written into the workdir).")
flags.DEFINE_string("context_response_model", None, "The context-response model of a-h, a-l-m and a-h-m (default: "
                    "trained here from --context_response_init).")
flags.DEFINE_string("context_response_init", "models/dse-bert-large", "Encoder the context-response model is "
                    "trained from when none is given (the thesis: aws-ai/dse-bert-large).")
flags.DEFINE_multi_string("train_flag", [], "A flag added to every augcl training command after the flagfile "
                          "(a model flag only to the sets that use that model; the augmentation of the invariance "
                          "file takes the models and augmentation flags), e.g. --train_flag=--max_steps=100; "
                          "repeatable.")
flags.DEFINE_multi_string("context_response_flag", [], "A flag added to the context-response training command; "
                          "repeatable.")
flags.DEFINE_multi_string("evaluate_flag", [], "A flag added to every evaluate command (one every task takes, "
                          "e.g. --batch_size, --max_length); repeatable.")
flags.DEFINE_multi_string("probes_flag", [], "A flag added to the evaluate --task=probes commands only; "
                          "repeatable.")
flags.DEFINE_multi_string("intent_flag", [], "A flag added to the evaluate --task=intent commands only; repeatable.")
flags.DEFINE_multi_string("invariance_flag", [], "A flag added to the evaluate --task=invariance commands only "
                          "(e.g. --invariance_knn=7); repeatable.")

ENCODERS = {"bert": "BERT", "retromae": "RetroMAE"}
CFT_SET = "a-l-m-dse"
"""The set the thesis' Tables 4-5 fine-tune on ("cft")."""
TABLE3_COLUMNS = (("classif.", "probes", "accuracy"), ("cluster.", "probes", "purity"),
                  ("retrieval", "probes", "ndcg@100"), ("intents", "intent", "accuracy"))
THESIS_LAYOUT = ("--separator=sep", "--speaker_prefix", "--final_separator", "--merge_consecutive_turns=false")
"""How an untrained encoder reads a dialogue as augcl records it."""
INVARIANCE_LAYERS = ("embedding", "hidden_state[-2]", "hidden_state[-3]", "hidden_state[-4]")


def flagfile(set_name: str, encoder: str) -> str:
    return os.path.join(FLAGS.flags_dir, f"augcl_table3_{set_name}_{encoder}.cfg")


def flagfile_values(path: str) -> Dict[str, str]:
    """The --name=value lines of a flagfile."""
    with open(path, encoding="utf-8") as f:
        return dict(line.strip()[2:].split("=", 1) for line in f if line.startswith("--") and "=" in line)


def parse_encoders(given: List[str]) -> List[Tuple[str, Optional[str]]]:
    """(name, checkpoint directory or None for the flagfile's) of each --encoders item."""
    encoders = []
    for item in given:
        name, _, directory = item.partition("=")
        if name not in ENCODERS:
            raise ValueError(f"--encoders: unknown encoder {name!r}; one of {', '.join(ENCODERS)} (=DIR to give "
                             "its checkpoint)")
        encoders.append((name, directory or None))
    return encoders


def checkpoint_of(encoder: str, directory: Optional[str]) -> str:
    """The encoder's checkpoint: given, else the flagfile's (any of its rows name the same)."""
    return directory or flagfile_values(flagfile(CFT_SET, encoder))["init_checkpoint"]


def check_grid(encoders) -> None:
    """ValueError naming what the grid lacks, before anything runs."""
    unknown = sorted(set(FLAGS.sets) - set(PRESETS))
    if unknown:
        raise ValueError(f"--sets: unknown sets {unknown}; one of {', '.join(PRESETS)}")
    missing = [flagfile(s, e) for s in FLAGS.sets for e, _ in encoders if not os.path.isfile(flagfile(s, e))]
    for path in (FLAGS.probe_fit_file, FLAGS.probe_eval_file, FLAGS.train_file, FLAGS.intent_fit_file,
                 FLAGS.intent_eval_file, FLAGS.invariance_file):
        if path and not os.path.isfile(path):
            missing.append(path)
    if missing:
        raise ValueError(f"missing: {', '.join(missing)} (the flagfiles' recipes say where the data comes from)")
    if bool(FLAGS.intent_fit_file) != bool(FLAGS.intent_eval_file):
        raise ValueError("--intent_fit_file and --intent_eval_file go together")
    scored = [s for s in FLAGS.sets if PRESETS[s].similarity == "context_response"]
    if scored and not FLAGS.context_response_model and not os.path.isdir(FLAGS.context_response_init):
        raise ValueError(f"{', '.join(scored)} need a context-response model: give --context_response_model, or "
                         f"--context_response_init (a checkpoint to train one from; {FLAGS.context_response_init} "
                         "does not exist)")


def overrides() -> Dict[str, str]:
    """The --train_flag values by flag name."""
    values = {}
    for item in FLAGS.train_flag:
        name, _, value = item.lstrip("-").partition("=")
        values[name] = value
    return values


def context_response_model(work: str, encoder: str) -> str:
    """The given context-response model, else one trained here on the training file."""
    if FLAGS.context_response_model:
        return FLAGS.context_response_model
    model = os.path.join(work, "context_response")
    train_file = FLAGS.train_file or flagfile_values(flagfile(CFT_SET, encoder))["train_file"]
    run_step("tfdialemb.train", "--method=context_response", f"--train_file={train_file}",
             f"--init_checkpoint={FLAGS.context_response_init}", f"--model_dir={model}", "--num_epochs=5",
             *FLAGS.context_response_flag)
    return model


def train(set_name: str, encoder: str, directory: Optional[str], work: str, context_response: Optional[str]) -> str:
    """The model directory of the row's run (resumed, or nothing to do, when it has run)."""
    model = os.path.join(work, "runs", f"{set_name}-{encoder}")
    given = [f"--model_dir={model}"]
    if directory:
        given.append(f"--init_checkpoint={directory}")
    if FLAGS.train_file:
        given.append(f"--train_file={FLAGS.train_file}")
    if context_response and PRESETS[set_name].similarity == "context_response":
        given.append(f"--context_response_model={context_response}")
    run_step("tfdialemb.train", f"--flagfile={flagfile(set_name, encoder)}", *given, *row_flags(set_name))
    return model


def row_flags(set_name: str) -> List[str]:
    """--train_flag's flags for a row: a model flag goes only to the sets that use that model."""
    unused = set(MODEL_FLAGS) - set(required_model_flags(PRESETS[set_name]))
    return [item for item in FLAGS.train_flag if item.lstrip("-").partition("=")[0] not in unused]


def evaluate(reports: str, name: str, dialogue_source: Tuple[str, ...], sentence_source: Tuple[str, ...],
             invariance_file: Optional[str]) -> Dict[str, dict]:
    """{task: metrics} of the domain probes, the intents (with banking77 files) and the invariance
    analysis (with an augmented file); `dialogue_source` and `sentence_source` name the model and
    how it embeds dialogues and utterances."""
    found = {"probes": evaluation_metrics(
        os.path.join(reports, f"{name}-probes.json"), "--task=probes", f"--eval_file={FLAGS.probe_eval_file}",
        f"--fit_file={FLAGS.probe_fit_file}", f"--label_key={FLAGS.probe_label_key}", *dialogue_source,
        *FLAGS.evaluate_flag, *FLAGS.probes_flag)}
    if FLAGS.intent_eval_file:
        found["intent"] = evaluation_metrics(
            os.path.join(reports, f"{name}-intent.json"), "--task=intent", f"--eval_file={FLAGS.intent_eval_file}",
            f"--fit_file={FLAGS.intent_fit_file}", *sentence_source, *FLAGS.evaluate_flag, *FLAGS.intent_flag)
    if invariance_file:
        found["invariance"] = evaluation_metrics(
            os.path.join(reports, f"{name}-invariance.json"), "--task=invariance",
            f"--augmented_file={invariance_file}", *dialogue_source, *FLAGS.evaluate_flag,
            *FLAGS.invariance_flag)["representations"]
    return found


def invariance_file(work: str, encoders) -> Optional[str]:
    """The augmented probe file of Tables 4-5: given, or written with the a-l-m-dse set's models
    (again when the models' weights, the probe file or the settings changed since)."""
    if FLAGS.invariance_file:
        return FLAGS.invariance_file
    if CFT_SET not in FLAGS.sets:
        return None
    models = {**flagfile_values(flagfile(CFT_SET, encoders[0][0])), **overrides()}
    output = os.path.join(work, "data", f"probe-{CFT_SET}.jsonl")
    settings = ("fill_mask_model", "sentence_encoder", "stage_clustering", "sentence_encoder_context",
                "sentence_encoder_similarity", "fill_stop_words", "shuffle_min_turns", "shuffle_min_stages")
    run_once(output, "tfdialemb.augment",
             [f"--input={FLAGS.probe_fit_file}", f"--output={output}", f"--set={CFT_SET}",
              *(f"--{name}={models[name]}" for name in settings if name in models)],
             depends_on=[FLAGS.probe_fit_file, *(models[name] for name in required_model_flags(PRESETS[CFT_SET])
                                                  if name in models)],
             discard=[output + PARTIAL_SUFFIX])
    return output


def cell(value: Optional[float]) -> str:
    """A figure as the thesis prints it (percent, two decimals); a dash where nothing was run."""
    return "—" if value is None else f"{100 * value:.2f}"


def table3(results: Dict[Tuple[str, str], Dict[str, dict]], encoders: List[str]) -> str:
    columns = [(title, task, key) for title, task, key in TABLE3_COLUMNS if task != "intent" or FLAGS.intent_eval_file]
    lines = ["| set | " + " | ".join(f"{title} {ENCODERS[e]}" for title, _, _ in columns for e in encoders) + " |",
             "|---" * (1 + len(columns) * len(encoders)) + "|"]
    for row in ["raw"] + FLAGS.sets:
        cells = [cell(results.get((row, e), {}).get(task, {}).get(key)) for _, task, key in columns for e in encoders]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tables45(results: Dict[Tuple[str, str], Dict[str, dict]], encoders: List[str]) -> str:
    """Table 4 (logistic regression, k-NN, mean original-view cosine; raw and cft) and Table 5
    (k-NN per layer); k is the reports' (--invariance_knn)."""
    runs = (("raw", "raw"), ("cft", CFT_SET))
    found = [representation for e in encoders for _, row in runs
             for representation in results.get((row, e), {}).get("invariance", {}).values()]
    key = next((knn_key(metrics) for metrics in found if knn_key(metrics)), None)
    knn = key[:-len("_accuracy")] if key else "k-NN"

    def knn_accuracy(metrics: Optional[dict]) -> Optional[float]:
        return metrics.get(knn_key(metrics)) if metrics and knn_key(metrics) else None

    lines = ["Table 4: augmentation type predicted (accuracy, lower is more invariant) and the mean "
             "original-view cosine (higher is more invariant)", "",
             "| model | " + " | ".join(f"{c} {r}" for c in ("logreg", knn, "cosine") for r, _ in runs) + " |",
             "|---" * 7 + "|"]
    for e in encoders:
        final = {row: results.get((row, e), {}).get("invariance", {}).get("embedding") for _, row in runs}
        cells = [cell(None if final[row] is None else final[row]["logreg_accuracy"]) for _, row in runs]
        cells += [cell(knn_accuracy(final[row])) for _, row in runs]
        cells += [cell(None if final[row] is None else final[row]["view_cosine"]["mean"]) for _, row in runs]
        lines.append(f"| {ENCODERS[e]} | " + " | ".join(cells) + " |")
    title = f"{knn[:-2]}-NN" if key else knn
    lines += ["", f"Table 5: {title} accuracy per layer (emb: the final embedding)", "",
              "| model | " + " | ".join(f"{layer} {r}" for r, _ in runs
                                        for layer in ("emb", "hs[-2]", "hs[-3]", "hs[-4]")) + " |",
              "|---" * 9 + "|"]
    for e in encoders:
        cells = [cell(knn_accuracy(results.get((row, e), {}).get("invariance", {}).get(layer)))
                 for _, row in runs for layer in INVARIANCE_LAYERS]
        lines.append(f"| {ENCODERS[e]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_grid(work: str, encoders, probed: Optional[str], results: Dict[Tuple[str, str], Dict[str, dict]]) -> None:
    """Evaluates each encoder raw, trains and evaluates each row, filling `results` as it goes."""
    reports = os.path.join(work, "reports")
    for encoder, directory in encoders:
        pooling = flagfile_values(flagfile(CFT_SET, encoder))["pooling"]
        checkpoint = f"--init_checkpoint={checkpoint_of(encoder, directory)}"
        results[("raw", encoder)] = evaluate(reports, f"raw-{encoder}", (checkpoint, *THESIS_LAYOUT,
                                                                         f"--probe_view={pooling}"),
                                             (checkpoint, f"--pooling={pooling}"), probed)
    needs_context_response = any(PRESETS[s].similarity == "context_response" for s in FLAGS.sets)
    context_response = context_response_model(work, encoders[0][0]) if needs_context_response else None
    for set_name in FLAGS.sets:
        for encoder, directory in encoders:
            model = (f"--model_dir={train(set_name, encoder, directory, work, context_response)}",)
            results[(set_name, encoder)] = evaluate(reports, f"{set_name}-{encoder}", model, model,
                                                    probed if set_name == CFT_SET else None)


def write_tables(work: str, results: Dict[Tuple[str, str], Dict[str, dict]], encoders: List[str],
                 probed: Optional[str], stopped: Optional[str] = None) -> str:
    """The tables of `results` as WORKDIR/tables.md (after a line saying where the grid stopped,
    when it did); returns the text."""
    text = "Table 3: SGD domain probes" + (" and banking77 intents" if FLAGS.intent_eval_file else "") + \
        " (percent, higher is better)\n\n" + table3(results, encoders)
    if probed and CFT_SET in FLAGS.sets:
        text += "\n\n" + tables45(results, encoders)
    if stopped:
        text = (f"Incomplete: the grid stopped ({stopped}); a dash marks a cell not reached. Rerun the same "
                "command to continue.\n\n" + text)
    with atomic_open(os.path.join(work, "tables.md")) as f:
        f.write(text + "\n")
    return text


def main(argv):
    del argv
    try:
        encoders = parse_encoders(FLAGS.encoders)
        check_grid(encoders)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    work = FLAGS.workdir
    os.makedirs(os.path.join(work, "reports"), exist_ok=True)
    names = [e for e, _ in encoders]
    results: Dict[Tuple[str, str], Dict[str, dict]] = {}
    probed = None
    try:
        probed = invariance_file(work, encoders)
        run_grid(work, encoders, probed, results)
    except BaseException as e:  # a failed step, Ctrl-C, any error: the finished cells are kept
        write_tables(work, results, names, probed, stopped=str(e) or type(e).__name__)
        print(f"\nthe tables of the cells finished are in {os.path.join(work, 'tables.md')}", file=sys.stderr)
        raise
    text = write_tables(work, results, names, probed)
    print("\n" + text)
    print(f"\nwritten to {os.path.join(work, 'tables.md')}; reports in {os.path.join(work, 'reports')}")
    return 0


def run():
    run_command(main, __name__)


if __name__ == "__main__":
    run()
