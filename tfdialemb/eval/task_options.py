"""The options several evaluators share, declared once so the flag has one type everywhere
(`tfdialemb.core.options.define_all` names every owner in its help)."""
from tfdialemb.eval.probe_split import DEFAULT_TEST_FRACTION
from tfdialemb.core.options import Option

LABEL_KEY = Option("label_key", None, "The key of `labels` holding the domain (intent: the turn field or "
                   "dialogue label classified, default intent).", kind=str)
PLOT_DIR = Option("plot_dir", None, "Write PNG plots here.", kind=str)
FIT_FILE = Option("fit_file", None, "Canonical JSONL dialogues something is fitted on: the probes (probes, "
                  "intent; the released fixed splits: SGD train, banking77 train.csv; without it "
                  "--probe_test_fraction of --eval_file is held out), whitening or flow (its utterances), tfidf, "
                  "lda or doc2vec (its dialogues).", kind=str)
PROBE_VIEW = Option("probe_view", None, "The last layer's pooling probed, [CLS] or the mean of the whole "
                    "dialogue's tokens (thesis Sec. 4.3: chosen by initialisation; its BERT and RetroMAE runs use "
                    "[CLS]); default: the pooling a --model_dir serves when it is one of these (an augcl model's "
                    "--pooling), else cls.", choices=("cls", "mean"), kind=str)
PROBE_TEST_FRACTION = Option("probe_test_fraction", DEFAULT_TEST_FRACTION, "The held-out fraction (probes and "
                             "intent: without --fit_file) (released: scikit-learn's train_test_split "
                             "default).", lower_bound=0.0, upper_bound=1.0)
PROBE_SEED = Option("probe_seed", 0, "Seed of the held-out split (probes and intent: without --fit_file) "
                    "(and of the released sampling's draws).")
PROBE_SPLIT = (PROBE_TEST_FRACTION, PROBE_SEED)


def probe_view(options, settings) -> str:
    """--probe_view, else the recorded dialogue pooling when it is a probed view, else cls."""
    if options.probe_view:
        return options.probe_view
    recorded = settings.get("dialogue_pooling")
    return recorded if recorded in ("cls", "mean") else "cls"


def check_probe_split(options) -> None:
    """A fitted probe holds out the whole eval file: a held-out fraction is then refused."""
    if options.fit_file and "probe_test_fraction" in options.given:
        raise ValueError("--probe_test_fraction splits --eval_file when there is no --fit_file; with "
                         "--fit_file the whole eval file is held out")
