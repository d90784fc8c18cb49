r"""The main jobs end to end on the generated demo corpus (what `bash run_demo.sh` runs).

  python -m tfdialemb.demo [--workdir=runs/demo] [--init_checkpoint=DIR] [--dialogues=2000]
      [--parts=dialoguecse,dial2vec,curved,augcl[,fgc]] [--pretrain_steps=30] [--mge_steps=60]
      [--dial2vec_steps=40] [--curved_steps=60] [--fgc_steps=100] [--dpt_steps=40]
      [--augcl_dialogues=80] [--augcl_steps=40]

Shared: generate the demo corpus (8 domains, intent-labelled turns) and split it into
train/dev/test; the encoder is the packaged all-MiniLM-L6-v2 unless --init_checkpoint names one.
Each stage is the command a user would run, printed before it runs.
  dialoguecse: build SR (BM25 candidates, same-intent positives) and D-STS-style sets from the
    test split; evaluate the untrained encoder, continued MLM pre-training, then MGE; export the
    MGE encoder as a SavedModel.
  dial2vec: dialogue-embedding evaluation (domain = label) of the untrained encoder, TF-IDF and
    LDA; dial2vec training with validation on the dev split (the alignment-uniformity
    trajectory); evaluation of the trained model with its plots.
  curved: the triple-encoder family (`--parts=triple`, its former name, is accepted with a warning):
    sequence modelling (average rank of the true next utterance) of the untrained encoder; CCL
    training, then C3L from the CCL model; both evaluated, C3L also on its k = 2 last rows.
  augcl: the augmentation thesis' a-l-m-dse set on the first --augcl_dialogues training and test
    dialogues (insert and replace by the continued-MLM model of the dialoguecse part, crop and
    shuffle by the encoder's cosine), augcl training on the augmented training file, and for the
    untrained encoder and the trained model, both reading the thesis' input layout, the domain
    probes (logistic regression accuracy, KMeans purity, nDCG@100; fitted on the dev split, scored
    on test) and the invariance probe on the augmented test dialogues.
  fgc (only when named in --parts): response-selection blocks (the true next turn among 10 candidates) from the test split;
    the BERT baseline (selection loss only), FGC with its defaults (contrasts averaged over their
    anchors, CVC on L2-normalised z), FGC read literally (Eq. 3 and 5 summed, CVC's raw dot
    product), trained on the train split's dialogues, and FGC after a short BERT-DPT post-training
    (masked-LM + next-sentence); all evaluated (R10@k, MRR, MAP, and the mean cosine of the [CLS]
    states of one block's pairs, which nears 1 when the representations collapse); FGC exported as a
    scoring SavedModel.
Each part ends with a summary table. Stages whose outputs exist are skipped (an evaluation report
only when it records the same arguments and the weights its model holds now,
`tfdialemb.commands.steps`), so an interrupted demo resumes where it stopped.
"""
import functools
import itertools
import os
import sys
import time

from absl import flags

from tfdialemb.core.cli import run_command
from tfdialemb.commands.steps import evaluation_metrics, run_step
from tfdialemb.dialogue import read_dialogues, write_dialogues
from tfdialemb.encoders.packaged import packaged_minilm_path
from tfdialemb.eval.table import format_table
from tfdialemb.kind_registry import RENAMED_KINDS
from tfdialemb.core.options import renamed

PARTS = ("dialoguecse", "dial2vec", "curved", "augcl", "fgc")
DEFAULT_PARTS = ("dialoguecse", "dial2vec", "curved", "augcl")
"""The parts `bash run_demo.sh` runs unless --parts says otherwise; `fgc` is asked for by name, so
the default demo stays within its 20-minute budget on two cores."""
FLAGS = flags.FLAGS
flags.DEFINE_string("workdir", "runs/demo", "Where the corpus, models, reports and export go.")
flags.DEFINE_string("init_checkpoint", None, "Encoder to start from (default: the packaged MiniLM).")
flags.DEFINE_integer("dialogues", 2000, "Demo dialogues to generate.")
flags.DEFINE_integer("pretrain_steps", 30, "Continued MLM pre-training steps.")
flags.DEFINE_integer("mge_steps", 60, "MGE training steps.")
flags.DEFINE_integer("freeze_layers", 3, "Frozen bottom layers for MGE and dial2vec (MiniLM has 6).")
flags.DEFINE_list("parts", list(DEFAULT_PARTS), f"Which methods to run, in this order, of {', '.join(PARTS)}.")
flags.DEFINE_integer("dial2vec_steps", 40, "dial2vec training steps.")
flags.DEFINE_integer("curved_steps", 60, "CCL and C3L training steps (each).")
flags.DEFINE_integer("fgc_steps", 100, "FGC and its BERT baseline training steps (each).")
flags.DEFINE_integer("dpt_steps", 40, "BERT-DPT post-training steps before the last FGC run.")
flags.DEFINE_integer("augcl_dialogues", 80, "Training (and test) dialogues augmented for augcl.", lower_bound=1)
flags.DEFINE_integer("augcl_steps", 40, "augcl training steps.")


def _table(title: str, columns, rows: dict) -> None:
    print("\n" + format_table(columns, {name: [values[c] for c in columns] for name, values in rows.items()}, title))


@functools.lru_cache(maxsize=None)
def _continued_mlm(work: str, encoder: str, train: str) -> str:
    """DialogueCSE's continued MLM pre-training (resumed, or nothing to do, when an earlier demo
    ran it; run once per demo); its model keeps the masked-LM head, so it also serves the
    augmentations as fill-mask model."""
    pretrained = os.path.join(work, "pretrain")
    run_step("tfdialemb.pretrain", "--objective=mlm", f"--train_file={train}", f"--model_dir={pretrained}",
         f"--init_checkpoint={encoder}", f"--max_steps={FLAGS.pretrain_steps}", "--batch_size=32",
         "--max_length=32", "--learning_rate=5e-5", "--log_every=10", "--checkpoint_every=10")
    return pretrained


def _dialoguecse(work: str, encoder: str, train: str, test: str, reports: str) -> None:
    sr, sts = os.path.join(work, "sr_test.txt"), os.path.join(work, "sts_test.txt")
    if not os.path.exists(sr):
        run_step("data_prep.build_sr_set", f"--input={test}", f"--output={sr}", "--queries=300")
    if not os.path.exists(sts):
        run_step("data_prep.build_sts_set", f"--input={test}", f"--output={sts}", "--pairs=1000")

    def evaluate(name, checkpoint_flag):
        return {**evaluation_metrics(os.path.join(reports, f"{name}-sr.json"), "--task=sr", f"--eval_file={sr}",
                          checkpoint_flag),
                **evaluation_metrics(os.path.join(reports, f"{name}-dsts.json"), "--task=dsts",
                          f"--eval_file={sts}", checkpoint_flag)}

    rows = {"untrained encoder": evaluate("untrained", f"--init_checkpoint={encoder}")}
    pretrained = _continued_mlm(work, encoder, train)
    rows["+ continued MLM"] = evaluate("pretrained", f"--model_dir={pretrained}")
    mge = os.path.join(work, "mge")
    run_step("tfdialemb.train", "--method=mge", f"--train_file={train}", f"--model_dir={mge}",
         f"--init_checkpoint={pretrained}", f"--max_steps={FLAGS.mge_steps}", "--batch_size=16",
         "--max_length=32", f"--freeze_layers={FLAGS.freeze_layers}", "--log_every=10",
         "--checkpoint_every=20", "--context_split=nearest")  # docs/demo.md: 60 steps learn less from 3+3 turns
    rows["+ MGE (DialogueCSE)"] = evaluate("mge", f"--model_dir={mge}")
    export_dir = os.path.join(work, "export")
    if not os.path.isdir(os.path.join(export_dir, "1")):
        run_step("tfdialemb.export", f"--model_dir={mge}", f"--export_dir={export_dir}", "--version=1")
    _table("DialogueCSE: semantic retrieval (MAP, MRR, P@1) and D-STS-style Spearman, test split",
           ("map", "mrr", "p@1", "spearman"), rows)
    print(f"SR: {sr}  D-STS-style pairs (label-graded, not human): {sts}")
    print(f"models: {pretrained}, {mge}; SavedModel for TF Serving: {export_dir}/1")


def _dial2vec(work: str, encoder: str, train: str, dev: str, test: str, reports: str) -> None:
    plots = os.path.join(reports, "plots")

    def evaluate(name, *args):
        return evaluation_metrics(os.path.join(reports, f"{name}-dialogue.json"), "--task=dialogue",
                       f"--eval_file={test}", "--label_key=domain", *args)["views"]

    untrained = evaluate("untrained", f"--init_checkpoint={encoder}")
    rows = {"untrained, mean pooling": untrained["mean"],
            "untrained, interlocutor pooling": untrained["interlocutor"],
            "TF-IDF": evaluate("tfidf", "--embedding=tfidf")["tfidf"],
            # Every metric of the topic distributions, so the row fills the table's columns.
            "LDA (8 topics)": evaluate("lda", "--embedding=lda", "--lda_metrics=all")["lda"]}
    model = os.path.join(work, "dial2vec")
    run_step("tfdialemb.train", "--method=dial2vec", f"--train_file={train}", f"--model_dir={model}",
         f"--init_checkpoint={encoder}", f"--max_steps={FLAGS.dial2vec_steps}", "--batch_size=4",
         "--max_length=128", "--learning_rate=2e-5", f"--freeze_layers={FLAGS.freeze_layers}",
         "--log_every=10", "--checkpoint_every=20", "--validate_task=dialogue",
         f"--validate_file={dev}", f"--validate_every={max(1, FLAGS.dial2vec_steps // 2)}")
    # Trained at 128 tokens for speed, evaluated at 512 like the untrained rows (a warning says so).
    trained = evaluate("dial2vec", f"--model_dir={model}", f"--plot_dir={plots}", "--max_length=512")
    rows["dial2vec, mean pooling"] = trained["mean"]
    rows["dial2vec, interlocutor pooling"] = trained["interlocutor"]
    _table("dial2vec: domain categorization (purity), relatedness (Spearman), retrieval (MAP), "
           "test split", ("purity", "spearman", "map", "uniformity"), rows)
    print(f"model: {model}; plots: {plots}")


def _curved(work: str, encoder: str, train: str, test: str, reports: str) -> None:
    columns = ("avg_rank_h2", "avg_rank_h5", "avg_rank_h10", "avg_rank")

    def evaluate(name, checkpoint_flag, mode, *args):
        return evaluation_metrics(os.path.join(reports, f"{name}-{mode}-sequence.json"),
                       "--task=sequence_modeling", f"--eval_file={test}", checkpoint_flag,
                       f"--curved_mode={mode}", "--max_length=48", *args)

    untrained = f"--init_checkpoint={encoder}"
    rows = {"untrained, CCL scoring": evaluate("untrained", untrained, "ccl"),
            "untrained, C3L scoring": evaluate("untrained", untrained, "c3l")}
    ccl, c3l = os.path.join(work, "ccl"), os.path.join(work, "c3l")
    common = (f"--train_file={train}", f"--max_steps={FLAGS.curved_steps}", "--batch_size=32",
              "--max_length=48", "--log_every=10", "--checkpoint_every=20")
    run_step("tfdialemb.train", "--method=ccl", f"--model_dir={ccl}", f"--init_checkpoint={encoder}",
         *common)
    rows["CCL bi-encoder"] = evaluate("ccl", f"--model_dir={ccl}", "ccl")
    run_step("tfdialemb.train", "--method=c3l", f"--model_dir={c3l}", f"--init_checkpoint={ccl}", *common)
    rows["C3L triple-encoder"] = evaluate("c3l", f"--model_dir={c3l}", "c3l")
    rows["C3L, k = 2 last rows"] = evaluation_metrics(
        os.path.join(reports, "c3l-c3l-k2-sequence.json"), "--task=sequence_modeling",
        f"--eval_file={test}", f"--model_dir={c3l}", "--curved_mode=c3l", "--k_last_rows=2",
        "--max_length=48")
    pool = rows["CCL bi-encoder"]
    _table(f"Triple-encoders: average rank of the true next utterance among "
           f"{pool['candidates_h2']} (h=2) to {pool['candidates_h10']} (h=10) candidates, test "
           "split (lower is better)", columns, rows)
    print(f"models: {ccl}, {c3l}")


DEMO_AUGMENTATION = ("--set=a-l-m-dse", "--fill_stop_words=none", "--shuffle_min_turns=9", "--shuffle_min_stages=3")
"""The demo's fill-mask model is a 30-step head over MiniLM (which ships none): it fills function words,
which the released stop-word rule would reject; its dialogues have 6-14 turns, so shuffle starts at 9
(released: 12 turns, 4 stages) to give every augmentation class enough views for the invariance probe."""


def _augcl(work: str, encoder: str, train: str, dev: str, test: str, reports: str) -> None:
    augmented = {split: os.path.join(work, f"augcl_{split}_augmented.jsonl") for split in ("train", "test")}
    missing = [split for split, path in augmented.items() if not os.path.exists(path)]
    fill_mask = _continued_mlm(work, encoder, train) if missing else None
    for split in missing:
        subset = os.path.join(work, f"augcl_{split}.jsonl")
        write_dialogues(itertools.islice(read_dialogues({"train": train, "test": test}[split]), FLAGS.augcl_dialogues),
                        subset)
        run_step("tfdialemb.augment", f"--input={subset}", f"--output={augmented[split]}", *DEMO_AUGMENTATION,
             f"--fill_mask_model={fill_mask}", f"--sentence_encoder={encoder}")

    def evaluate(name, *args):
        probes = evaluation_metrics(os.path.join(reports, f"{name}-probes.json"), "--task=probes", f"--eval_file={test}",
                         f"--fit_file={dev}", "--label_key=domain", "--max_length=256", *args)
        invariance = evaluation_metrics(os.path.join(reports, f"{name}-invariance.json"), "--task=invariance",
                             f"--augmented_file={augmented['test']}", "--invariance_sampling=all_views",
                             "--hidden_layers=", "--max_length=256", *args)["representations"]["embedding"]
        return {**probes, "5nn_invariance": invariance["5nn_accuracy"],
                "logreg_invariance": invariance["logreg_accuracy"], "view_cosine": invariance["view_cosine"]["mean"]}

    # The untrained encoder reads what augcl records: "0 text[SEP]1 text[SEP]", turns unmerged, [CLS].
    rows = {"untrained encoder": evaluate("untrained", f"--init_checkpoint={encoder}", "--separator=sep",
                                          "--speaker_prefix", "--final_separator", "--merge_consecutive_turns=false",
                                          "--probe_view=cls")}
    model = os.path.join(work, "augcl")
    run_step("tfdialemb.train", "--method=augcl", f"--train_file={augmented['train']}", f"--model_dir={model}",
         f"--init_checkpoint={encoder}", f"--max_steps={FLAGS.augcl_steps}", "--batch_size=16",
         "--max_length=128", "--learning_rate=2e-5", "--merge_consecutive_turns=false",
         "--log_every=10", "--checkpoint_every=20")
    rows["augcl (a-l-m-dse)"] = evaluate("augcl", f"--model_dir={model}")
    _table("Augmentation thesis: domain probes on frozen embeddings (logistic regression accuracy, KMeans "
           "purity, nDCG@100; fitted on dev, scored on test), the augmentation type predicted from the raw "
           "embeddings of augmented test dialogues (5-NN, logistic regression; lower is more invariant) and "
           "the mean cosine of each test dialogue and its view (higher is more invariant)",
           ("accuracy", "purity", "ndcg@100", "5nn_invariance", "logreg_invariance", "view_cosine"), rows)
    print(f"augmented files: {augmented['train']}, {augmented['test']}; model: {model}")


def _fgc(work: str, encoder: str, train: str, test: str, reports: str) -> None:
    selection = os.path.join(work, "selection_test.jsonl")
    if not os.path.exists(selection):
        run_step("data_prep.build_selection_set", f"--input={test}", f"--output={selection}", "--candidates=10")
    dpt = os.path.join(work, "dpt")
    run_step("tfdialemb.pretrain", "--objective=mlm_nsp", f"--train_file={train}", f"--model_dir={dpt}",
         f"--init_checkpoint={encoder}", f"--max_steps={FLAGS.dpt_steps}", "--batch_size=16", "--max_length=64",
         "--learning_rate=5e-5", "--log_every=20", "--checkpoint_every=50")
    common = ("--method=fgc", f"--train_file={train}", f"--max_steps={FLAGS.fgc_steps}", "--batch_size=16",
              "--max_length=64", "--learning_rate=2e-4", "--warmup_fraction=0.1",
              f"--freeze_layers={FLAGS.freeze_layers}", "--log_every=20", "--checkpoint_every=50")
    rows = {}
    runs = (("fgc-bert", "BERT (selection loss only)", encoder, ("--ivc_weight=0", "--cvc_weight=0")),
            ("fgc", "BERT + FGC (defaults)", encoder, ()),
            ("fgc-literal", "BERT + FGC, literal (sum, dot)", encoder, ("--fgc_reduction=sum", "--cvc_similarity=dot")),
            ("fgc-dpt", "BERT-DPT + FGC (defaults)", dpt, ()))
    for name, title, start, extra in runs:
        model = os.path.join(work, name)
        run_step("tfdialemb.train", f"--model_dir={model}", f"--init_checkpoint={start}", *common, *extra)
        rows[title] = evaluation_metrics(os.path.join(reports, f"{name}-selection.json"), "--task=response_selection",
                                         f"--eval_file={selection}", f"--model_dir={model}")
        similarity = evaluation_metrics(os.path.join(reports, f"{name}-similarity.json"), "--task=fgc_similarity",
                                        f"--eval_file={selection}", f"--model_dir={model}")
        rows[title]["[CLS] cos"] = similarity["views"]["cls"]["ins_similarity"]
    export_dir = os.path.join(work, "export-fgc")
    if not os.path.isdir(os.path.join(export_dir, "1")):
        run_step("tfdialemb.export", f"--model_dir={os.path.join(work, 'fgc')}", f"--export_dir={export_dir}",
             "--version=1")
    blocks = rows["BERT + FGC (defaults)"]["blocks"]
    _table(f"FGC: response selection, the true next turn among 10 candidates, {blocks} test blocks",
           ("r10@1", "r10@2", "r10@5", "mrr", "map", "[CLS] cos"), rows)
    print(f"set: {selection}; models: {', '.join(os.path.join(work, run[0]) for run in runs)}, post-trained "
          f"encoder {dpt}; SavedModel for TF Serving: {export_dir}/1")


def main(argv):
    del argv
    # A part is named after the inference kind it trains, so it was renamed with it.
    for former in sorted(set(FLAGS.parts) & set(RENAMED_KINDS)):
        print(f"warning: {renamed(f'--parts={former}', f'--parts={RENAMED_KINDS[former]}')}", file=sys.stderr)
    parts = list(dict.fromkeys(RENAMED_KINDS.get(part, part) for part in FLAGS.parts))
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        print(f"error: unknown --parts {unknown}; choose from {', '.join(PARTS)}", file=sys.stderr)
        return 2
    started = time.time()
    work = FLAGS.workdir
    try:
        encoder = FLAGS.init_checkpoint or packaged_minilm_path()
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    corpus, splits, reports = (os.path.join(work, "demo.jsonl"), os.path.join(work, "splits"),
                               os.path.join(work, "reports"))
    os.makedirs(reports, exist_ok=True)
    if not os.path.exists(corpus):
        run_step("data_prep.make_demo_corpus", f"--output={corpus}", f"--dialogues={FLAGS.dialogues}")
    train, dev, test = (os.path.join(splits, f"{name}.jsonl") for name in ("train", "dev", "test"))
    if not os.path.exists(test):
        run_step("tfdialemb.data", "split", f"--input={corpus}", f"--output_dir={splits}", "--seed=0")
    for part in parts:
        if part == "dialoguecse":
            _dialoguecse(work, encoder, train, test, reports)
        elif part == "dial2vec":
            _dial2vec(work, encoder, train, dev, test, reports)
        elif part == "curved":
            _curved(work, encoder, train, test, reports)
        elif part == "augcl":
            _augcl(work, encoder, train, dev, test, reports)
        else:
            _fgc(work, encoder, train, test, reports)
    print(f"\n{FLAGS.dialogues} demo dialogues, parts {', '.join(parts)}: "
          f"{time.time() - started:.0f} s in all")
    return 0


def run():
    run_command(main, __name__)


if __name__ == "__main__":
    run()
