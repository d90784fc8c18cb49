r"""Evaluates an encoder on one of the papers' tasks and writes a JSON report.

  python -m tfdialemb.evaluate --task=TASK --eval_file=PATH (--model_dir=DIR | --init_checkpoint=DIR) \
      --output=report.json [--embedding=KIND] [task flags]
  python -m tfdialemb.evaluate --task=sr|dsts --eval_file=PATH --saved_model=EXPORT_DIR --output=report.json
  python -m tfdialemb.evaluate --task=invariance --augmented_file=PATH (--model_dir=DIR | ...) --output=report.json

Sentence tasks (DialogueCSE): `sr`, semantic retrieval (MAP, MRR, P@k, R@k), and `dsts`, dialogue
STS (Spearman, Pearson), on the released text file or its converted JSONL. Flags: --pooling=mean|cls,
--batch_size=64, --max_length=128; --embedding=encoder|whitening|flow|glove picks DialogueCSE's
Table 2 baselines that need no training loop: `encoder` (BERT-CLS / BERT-avg), `whitening` and
`flow` fitted on the encoder's embeddings of a seeded sample of at most --fit_utterances
utterances of --fit_file (canonical dialogues), and `glove` (average GloVe from --glove_file; no
checkpoint). See tfdialemb/baselines.

Dialogue task (dial2vec): `dialogue` on a canonical dialogue file whose `labels[--label_key]` is
the domain: domain categorization (KMeans++ purity over --runs seeded runs, ARI, NMI, accuracy),
semantic relatedness (the paper's random-pair Spearman and the released all-pairs one), dialogue
retrieval (MAP, MRR) and alignment / uniformity, for every view of the embedding:
--embedding=encoder gives "interlocutor" (Eq. 4), "mean", "cls", "p1", "p2" (the whole dialogue
as one sequence, turns separated by --separator, --max_length=512); `glove` (average GloVe of the
dialogue's words), `tfidf`, `lda` and `doc2vec` (fitted on --fit_file's dialogues, else on the
evaluated ones; LDA with --lda_topics, default the number of labels; Doc2Vec with gensim) need no
checkpoint. LDA gets domain categorization only, as in the paper: each dialogue's most probable
topic, over --runs LDA fits; --lda_metrics=all evaluates its topic distributions like any
embedding. `plm_mean` is the paper's RoBERTa / T5 baseline: the mean of the top layer of the
Hugging Face RoBERTa or T5 directory given as --init_checkpoint (--dial2vec_plm_input);
`utterance_average` averages a sentence encoder's utterance embeddings (e.g. a DialogueCSE model).
--plot_dir writes a 2-D projection per view coloured by label and, when --model_dir holds a
validation.jsonl with alignment and uniformity (train with --validate_task=dialogue), the
alignment-uniformity trajectory over training.

Response selection (FGC): `response_selection` on an Ubuntu V1 / Douban test file (released text,
cut into blocks of --block_size=10 lines by position, or the JSONL of the `ubuntu` / `douban`
converters), blocks of candidates per context, the report saying how many were scored: r10@1,
r10@2, r10@5, r2@1, map, mrr, p@1 of a trained cross-encoder's scores (--model_dir of an `fgc`
model; --fgc_input is recorded there). Blocks without a positive are left out and counted unless
--keep_empty_blocks. `fgc_similarity` on the same file is FGC's Table 7: the mean cosine of the
pair representations (s_[CLS] and the projection z) between candidates of one context (Ins) and
between all positive and all negative pairs (Cat).

Context-response similarity (the augmentation thesis, appendix 1.1): `context_response` on any
canonical dialogue file with the --model_dir of a `context_response` model: one (context,
response) pair per dialogue drawn as training draws them (seeded by --pair_seed), in-batch
accuracy@1 and accuracy@5 over consecutive batches of --pairs_per_batch pairs (128, the thesis'
batch); the context size, max length and turn merging are the recorded ones.

Triple-encoder tasks: `sequence_modeling` (average rank of the true next utterance among all next
utterances at the same history length, per --history_lengths and overall) on any canonical
dialogue file, and `stp` (short-term planning: hits@5/10/25/50, average rank) on a set built by
`python -m data_prep.build_stp_set`. --curved_mode=c3l|c3l_maxsim|bi_b2|ccl scores with Eq. 3,
MaxSim (Appendix B), the triple-encoder as a bi-encoder ([B2] only) or a CCL bi-encoder;
--k_last_rows keeps the k last rows of the triangle; --speaker_tokens as in training.
--rank_ties=pessimistic|optimistic ranks the true candidate after or before those scoring as it
does (the released code: optimistic); --c3l_stp_scorer=released scores STP as the released
compute_stp_scores does (candidates normalised across candidates). Both are recorded in the
report's "embedding", the STP set's distractor sources in its metrics.

Probes of frozen embeddings (the augmentation thesis, Sec. 4.4 and 5.4-5.5; see
tfdialemb/eval/probes.py, intent.py, invariance.py): `probes` on labelled canonical dialogues
(--label_key, e.g. `domain` of `--format=sgd_single_domain`): logistic-regression accuracy and
macro F1, KMeans purity and V-measure, retrieval nDCG@--ndcg_k (100); the dialogue embedding is
the --probe_view (cls, or mean) of the whole dialogue as one sequence. `intent` classifies
utterances with the sentence embedding (--pooling): every turn of the file, labelled by its own
field --label_key (default intent) or else by its dialogue's labels[--label_key], so one-utterance
records (`--format=banking77`) and dialogues labelled as a whole (a domain, a category) both drive
it; logistic-regression accuracy and macro F1. Both fit on --fit_file and score --eval_file (the
released fixed splits: SGD train / test, banking77 train.csv / test.csv), or without --fit_file
hold out --probe_test_fraction of --eval_file by --probe_seed. `invariance` reads
--augmented_file (originals and views with labels.augmentations and labels.source_id) and
predicts each view's augmentation (none, insert, replace, crop, shuffle) with logistic regression
and --invariance_knn (5) nearest neighbours on the raw embeddings (--invariance_embeddings=raw, as
released; normalised: on unit vectors) and the cosine nearest centroid, and reports the mean
cosine of each original and its view per augmentation (Table 4's cosine column), on the final
embedding and on the hidden states --hidden_layers (-2,-3,-4), mean-pooled as the released
embed_domain_dataset.py (--hidden_state_pooling=view: pooled as --probe_view); lower accuracy
is more invariant. --invariance_sampling=released draws one view per source (sources with every
class), all_views keeps every view and splits by source. --plot_dir writes the PCA projection coloured by
label (by augmentation for invariance).

--model_dir is a trained tfdialemb model: its method.json says how it was trained, so the method's
settings (--separator, --num_roles, --speaker_tokens, --merge_consecutive_turns, the curved kind)
come from there and a flag contradicting them is refused; --max_length and --pooling override the
record with a warning. --init_checkpoint is any checkpoint the project loads (Hugging Face BERT,
Google TF1 BERT), with the flags' values or their defaults. Encoders compute in float32 unless
--mixed_precision asks otherwise (an exported --saved_model in the precision it was exported
with). The report {"task", "eval_file", "checkpoint", "arguments" (the command line), "weights"
(the weights file evaluated, its SHA-256 and a training run's step), "mixed_precision" (the
encoder's; absent for an embedding without one), "embedding", "metrics", ...} is written
atomically and printed, then a table of the task's headline metrics under the names its paper
uses. --model_dir=A,B,C (or the flag repeated, --model_dir=A --model_dir=B; a value that is an
existing directory is one directory, commas and all) evaluates several models (checkpoint
directories of any kind) on the same task and settings, one loaded at a time: the file holds a
list of their reports and the table compares them, a row per model (and view).
Exit status: 0 done; 1 the eval or fit file has a bad line (file, line and reason are named);
2 the command is wrong (missing eval file or checkpoint, a file that is no such set, a flag the
task or embedding needs or does not use).
"""
import contextlib
import functools
import json
import os
import sys
from typing import Dict, List, Optional

import numpy as np
from absl import app, flags

from tfdialemb import options, precision
from tfdialemb.baselines.doc2vec import Doc2VecDialogueEmbedder
from tfdialemb.baselines.flow import GlowFlow
from tfdialemb.baselines.glove import GloveEmbedder
from tfdialemb.baselines.plm_mean import PLM_INPUT, PlmMeanDialogueEmbedder
from tfdialemb.baselines.switches import EVALUATION_SWITCHES
from tfdialemb.baselines.topic import LdaDialogueEmbedder, TfidfDialogueEmbedder
from tfdialemb.baselines.transformers_encoder import load_transformers_encoder
from tfdialemb.baselines.utterance_average import average_utterance_embeddings
from tfdialemb.baselines.whitening import Whitening
from tfdialemb.cli import (
    ARGUMENTS,
    OVERWRITE,
    Progress,
    claim_output,
    guarded,
    parse_flags,
    report_error,
)
from tfdialemb.converters.response_selection import BLOCK_SIZE
from tfdialemb.data.sampling import UtterancePool
from tfdialemb.dialogue import read_dialogues
from tfdialemb.encoders.checkpoint import weights_fingerprint
from tfdialemb.eval.context_response import evaluate_context_response
from tfdialemb.eval.dialogue_embedding import (
    evaluate_dialogue_assignments,
    evaluate_dialogue_embeddings,
)
from tfdialemb.eval.dialogue_metrics import unit_rows
from tfdialemb.eval.inputs import embed_distinct
from tfdialemb.eval.intent import DEFAULT_LABEL_KEY as INTENT_LABEL_KEY
from tfdialemb.eval.intent import evaluate_intent, read_utterances
from tfdialemb.eval.invariance import EMBEDDINGS as INVARIANCE_EMBEDDINGS
from tfdialemb.eval.invariance import (
    HIDDEN_STATE_POOLINGS,
    SAMPLINGS,
    evaluate_invariance,
    layer_pooling,
    representations,
    view_class,
)
from tfdialemb.eval.invariance import THESIS_K as INVARIANCE_K
from tfdialemb.eval.metrics import RANK_TIES
from tfdialemb.eval.ndcg import THESIS_K as NDCG_K
from tfdialemb.eval.probe_split import DEFAULT_TEST_FRACTION
from tfdialemb.eval.probes import evaluate_probes
from tfdialemb.eval.response_selection import (
    evaluate_pair_similarity,
    evaluate_response_selection,
)
from tfdialemb.eval.sequence_modeling import evaluate_sequence_modeling
from tfdialemb.eval.short_term_planning import MODES as STP_MODES
from tfdialemb.eval.short_term_planning import SCORER as STP_SCORER
from tfdialemb.eval.short_term_planning import evaluate_short_term_planning
from tfdialemb.eval.table import results_table
from tfdialemb.eval.tasks import TASKS
from tfdialemb.files import check_output
from tfdialemb.inference.context_response import ContextResponseEncoder
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.inference_kinds import (
    DEFAULT_MAX_LENGTH,
    FGC_INPUT,
    FINAL_SEPARATOR,
    KIND_SETTINGS,
    MAX_LENGTH,
    MERGE_TURNS,
    NUM_ROLES,
    POOLING,
    SEPARATOR,
    SETTINGS,
    SPEAKER_PREFIX,
    SPEAKER_TOKENS,
)
from tfdialemb.model_dir import ModelSource
from tfdialemb.reports import write_report
from tfdialemb.serving.exported_embedder import ExportedSentenceEmbedder
from tfdialemb.training.loop import VALIDATION_HISTORY

SENTENCE_TASKS = tuple(sorted(TASKS))
CURVED_TASKS = ("sequence_modeling", "stp")
PROBE_TASKS = ("probes", "intent", "invariance")
DIALOGUE_PROBE_TASKS = ("probes", "invariance")
FIT_FILE_TASKS = ("probes", "intent")
"""Tasks that take --fit_file as their fitted part, whatever the --embedding."""
TASK_EMBEDDINGS = {
    **{task: ("encoder", "whitening", "flow", "glove") for task in SENTENCE_TASKS},
    "dialogue": ("encoder", "glove", "tfidf", "lda", "doc2vec", "plm_mean", "utterance_average"),
    **{task: ("encoder",) for task in CURVED_TASKS},
    "response_selection": ("encoder",),
    "fgc_similarity": ("encoder",),
    **{task: ("encoder",) for task in PROBE_TASKS},
    "context_response": ("encoder",),
}
"""Task → the --embedding kinds it can evaluate."""
EMBEDDINGS = ("encoder", "whitening", "flow", "glove", "tfidf", "lda", "doc2vec", "plm_mean",
              "utterance_average")
WITHOUT_CHECKPOINT = ("glove", "tfidf", "lda", "doc2vec")
FITTED_EMBEDDINGS = ("whitening", "flow")
EMBEDDING_FLAGS = {
    "fit_file": FITTED_EMBEDDINGS + ("tfidf", "lda", "doc2vec"), "fit_utterances": FITTED_EMBEDDINGS,
    "fit_seed": FITTED_EMBEDDINGS + ("lda", "doc2vec"), "whitening_dim": ("whitening",),
    "flow_epochs": ("flow",), "flow_batch_size": ("flow",), "flow_learning_rate": ("flow",),
    "glove_file": ("glove",), "lda_topics": ("lda",), "lda_metrics": ("lda",),
    PLM_INPUT.name: ("plm_mean",),
}
"""Flag → the --embedding kinds it applies to."""
REQUIRED_FLAG = {"whitening": "fit_file", "flow": "fit_file", "glove": "glove_file"}
TASK_FLAGS = {
    "label_key": ("dialogue", "probes", "intent"), "plot_dir": ("dialogue",) + PROBE_TASKS, "runs": ("dialogue",),
    "curved_mode": CURVED_TASKS, "k_last_rows": ("sequence_modeling",), "rank_ties": CURVED_TASKS,
    STP_SCORER.name: ("stp",),
    "history_lengths": ("sequence_modeling",),
    "merge_consecutive_turns": ("dialogue", "sequence_modeling", "context_response") + DIALOGUE_PROBE_TASKS,
    "keep_empty_blocks": ("response_selection",), "block_size": ("response_selection", "fgc_similarity"),
    "probe_view": DIALOGUE_PROBE_TASKS, "probe_test_fraction": PROBE_TASKS, "probe_seed": PROBE_TASKS,
    "ndcg_k": ("probes",), "augmented_file": ("invariance",), "hidden_layers": ("invariance",),
    "hidden_state_pooling": ("invariance",), "invariance_sampling": ("invariance",),
    "invariance_knn": ("invariance",), "invariance_embeddings": ("invariance",),
    "pairs_per_batch": ("context_response",), "pair_seed": ("context_response",),
}
"""Flag → the tasks it applies to."""
CURVED_MODES = {"ccl": ("ccl",), "c3l": ("c3l", "c3l_maxsim", "bi_b2")}
"""A trained curved model's kind → the --curved_mode values that score with it."""

FLAGS = flags.FLAGS
flags.DEFINE_enum("task", None, sorted(TASK_EMBEDDINGS), "Evaluation task.")
flags.DEFINE_string("eval_file", None, "Evaluation set: released text file or converted JSONL "
                    "(every task but invariance).")
flags.DEFINE_multi_string("model_dir", None, "Trained tfdialemb model directory to evaluate, or several for one "
                          "comparison table (any checkpoint directory may be one of them): the flag repeated, or "
                          "comma-separated (a value that is an existing directory is one, commas and all).")
flags.DEFINE_string("init_checkpoint", None, "Any loadable checkpoint, e.g. an untrained BERT.")
flags.DEFINE_string("saved_model", None, "sr, dsts: an exported sentence SavedModel (`export "
                    "--kind=sentence`) instead of a checkpoint; its pooling and max length are fixed.")
flags.DEFINE_string("output", None, "Where to write the JSON report.")
flags.DEFINE_integer("batch_size", 64, "Sentences (dialogue task: dialogues / 4) per batch.",
                     lower_bound=1)
for _setting in (POOLING, MAX_LENGTH, SEPARATOR, NUM_ROLES, SPEAKER_PREFIX, FINAL_SEPARATOR, SPEAKER_TOKENS,
                 MERGE_TURNS, FGC_INPUT, RANK_TIES, *EVALUATION_SWITCHES):
    _setting.define()
flags.adopt_module_key_flags(options)
precision.define_flags(default_policy=precision.INFERENCE_POLICY, jit_compile=False)
flags.DEFINE_enum("embedding", "encoder", EMBEDDINGS,
                  "The encoder's embedding or a baseline (see the task's list above).")
flags.DEFINE_string("fit_file", None, "Canonical JSONL dialogues: their utterances fit whitening "
                    "or flow, their dialogues tfidf, lda or doc2vec.")
flags.DEFINE_integer("fit_utterances", 20000, "Utterances sampled from --fit_file (at most).",
                     lower_bound=2)
flags.DEFINE_integer("fit_seed", 0, "Seed of the utterance sample, the flow, LDA (run r: seed + r) "
                     "and Doc2Vec.")
flags.DEFINE_integer("whitening_dim", None, "Whitened dimensions kept (default: all).",
                     lower_bound=1)
flags.DEFINE_integer("flow_epochs", 1, "BERT-flow training epochs.", lower_bound=1)
flags.DEFINE_integer("flow_batch_size", 32, "BERT-flow training batch size.", lower_bound=1)
flags.DEFINE_float("flow_learning_rate", 1e-3, "BERT-flow learning rate.", lower_bound=0.0)
flags.DEFINE_string("glove_file", None, "Local GloVe / word2vec text file for --embedding=glove.")
flags.DEFINE_integer("lda_topics", None, "LDA topics (default: the number of labels).",
                     lower_bound=2)
flags.DEFINE_enum("lda_metrics", "categorization", ["categorization", "all"],
                  "lda: categorization (dial2vec Sec. 4.3: each dialogue's most probable topic, "
                  "purity, ARI, NMI and accuracy over --runs LDA fits) or all (one fit's topic "
                  "distributions evaluated like any embedding, KMeans categorization included).")
flags.DEFINE_string("label_key", None, "dialogue, probes: the key of `labels` holding the domain; intent: "
                    "the turn field or dialogue label classified (default: intent).")
flags.DEFINE_string("plot_dir", None, "dialogue: write PNG plots here.")
flags.DEFINE_integer("runs", 10, "dialogue: seeded KMeans runs (lda: LDA fits) and random pairings "
                     "averaged.", lower_bound=1)
flags.DEFINE_enum("curved_mode", None, ["c3l", "c3l_maxsim", "bi_b2", "ccl"],
                  "sequence_modeling / stp: how candidates are scored (default: ccl for a CCL "
                  "model, else c3l).")
flags.DEFINE_integer("k_last_rows", None, "c3l modes: only the k last rows of the triangle.",
                     lower_bound=1)
flags.DEFINE_list("history_lengths", [str(h) for h in range(2, 11)],
                  "sequence_modeling: history lengths scored.")
flags.DEFINE_integer("pairs_per_batch", 128, "context_response: pairs per batch, each context ranking "
                     "every response of its batch (the thesis: 128).", lower_bound=2)
flags.DEFINE_integer("pair_seed", 0, "context_response: seed of the response drawn from each dialogue.")
BLOCK_SIZE.define("response_selection, fgc_similarity: lines per candidate block of a released text file, "
                  "one context each, by position (Ubuntu and Douban test files: 10).")
flags.DEFINE_bool("keep_empty_blocks", False, "response_selection: score candidate blocks without a "
                  "positive as 0 instead of leaving them out (as taesunwhang/UMS-ResSel does).")
flags.DEFINE_enum("probe_view", None, ["cls", "mean"], "probes / invariance: the last layer's pooling "
                  "probed, [CLS] or the mean of the whole dialogue's tokens (thesis Sec. 4.3: chosen by "
                  "initialisation; its BERT and RetroMAE runs use [CLS]); default: the pooling a --model_dir "
                  "serves when it is one of these (an augcl model's --pooling), else cls.")
flags.DEFINE_float("probe_test_fraction", DEFAULT_TEST_FRACTION, "probes / intent without --fit_file, "
                   "invariance: the held-out fraction (released: scikit-learn's train_test_split default).",
                   lower_bound=0.0, upper_bound=1.0)
flags.DEFINE_integer("probe_seed", 0, "probes / intent without --fit_file, invariance: seed of the "
                     "held-out split (and of the released sampling's draws).")
flags.DEFINE_integer("ndcg_k", NDCG_K, "probes: the retrieval cut-off of nDCG@k (thesis: 100).", lower_bound=1)
flags.DEFINE_string("augmented_file", None, "invariance: canonical JSONL of originals and their "
                    "augmented views (`python -m tfdialemb.augment`).")
flags.DEFINE_list("hidden_layers", ["-2", "-3", "-4"], "invariance: the lower layers probed besides the "
                  "final embedding, counted from the top (-1 the last; thesis Table 5: -2,-3,-4); empty: none.")
flags.DEFINE_enum("hidden_state_pooling", "mean", list(HIDDEN_STATE_POOLINGS), "invariance: pool a "
                  "hidden layer by mean whatever the view (the released embed_domain_dataset.py's "
                  "hidden_state[k]), or as --probe_view does the last (view).")
flags.DEFINE_enum("invariance_embeddings", "raw", list(INVARIANCE_EMBEDDINGS), "invariance: fit logistic "
                  "regression and k-NN on the raw embeddings (released scatter-analysis.py dump_scores) or "
                  "on L2-normalised ones.")
flags.DEFINE_enum("invariance_sampling", "released", list(SAMPLINGS), "invariance: released (one view "
                  "drawn per source dialogue, scatter-analysis.py aug_prediction) or all_views (every "
                  "view, split by source); both use only sources with a view of every class.")
flags.DEFINE_integer("invariance_knn", INVARIANCE_K, "invariance: neighbours of the k-NN probe "
                     "(thesis Tables 4-5: 5).", lower_bound=1)
OVERWRITE.define()
flags.mark_flags_as_required(["task", "output"])
flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint", "saved_model"])


def settings_kind(task: str, embedding: str) -> Optional[str]:
    """The inference kind whose settings (`tfdialemb.inference_kinds`) the evaluation reads, or
    None for a baseline without a tfdialemb encoder."""
    if embedding in WITHOUT_CHECKPOINT or embedding == "plm_mean":
        return None
    if embedding == "utterance_average" or task in SENTENCE_TASKS or task == "intent":
        return "sentence"
    if task in ("response_selection", "fgc_similarity"):
        return "selection"
    if task == "context_response":
        return "context_response"
    return "dialogue" if task in ("dialogue",) + DIALOGUE_PROBE_TASKS else "triple"


def given_settings(kind: Optional[str]) -> Dict[str, object]:
    """The settings flags given on the command line that `kind` reads."""
    names = KIND_SETTINGS[kind] if kind else ()
    return {name: FLAGS[name].value for name in names if name in FLAGS and FLAGS[name].present}


def check_flags() -> None:
    """ValueError naming the flag that the task or --embedding needs, or would silently ignore."""
    kind, task = FLAGS.embedding, FLAGS.task
    if kind not in TASK_EMBEDDINGS[task]:
        raise ValueError(f"--task={task} takes --embedding in {', '.join(TASK_EMBEDDINGS[task])}, "
                         f"not {kind}")
    if FLAGS.saved_model and task not in SENTENCE_TASKS:
        raise ValueError(f"--saved_model serves sentence embeddings (--task={'|'.join(SENTENCE_TASKS)}), "
                         f"not --task={task}")
    has_checkpoint = bool(FLAGS.model_dir or FLAGS.init_checkpoint or FLAGS.saved_model)
    if kind == "plm_mean" and (FLAGS.model_dir or FLAGS.saved_model or not FLAGS.init_checkpoint):
        raise ValueError("--embedding=plm_mean reads a Hugging Face RoBERTa or T5 directory: give it as "
                         "--init_checkpoint")
    if kind in WITHOUT_CHECKPOINT and has_checkpoint:
        raise ValueError(f"--embedding={kind} uses no encoder: drop --model_dir/--init_checkpoint/--saved_model")
    if kind not in WITHOUT_CHECKPOINT and not has_checkpoint:
        raise ValueError(f"--embedding={kind} needs --model_dir, --init_checkpoint or --saved_model")
    if FLAGS["mixed_precision"].present and (kind in WITHOUT_CHECKPOINT or FLAGS.saved_model):
        raise ValueError("--mixed_precision does not apply to "
                         + ("an exported --saved_model: it computes in the precision it was exported with"
                            if FLAGS.saved_model else f"--embedding={kind}, which uses no encoder"))
    if task == "invariance" and (FLAGS.eval_file or not FLAGS.augmented_file):
        raise ValueError("--task=invariance reads --augmented_file (originals and their views), not --eval_file")
    if task != "invariance" and not FLAGS.eval_file:
        raise ValueError(f"--task={task} needs --eval_file")
    for name, kinds in EMBEDDING_FLAGS.items():
        if FLAGS[name].present and kind not in kinds and not (name == "fit_file" and task in FIT_FILE_TASKS):
            raise ValueError(f"--{name} does not apply to --embedding={kind}")
    for name, tasks in TASK_FLAGS.items():
        if FLAGS[name].present and task not in tasks:
            raise ValueError(f"--{name} does not apply to --task={task}")
    read_kind = settings_kind(task, kind)
    read = (("max_length",) if kind == "plm_mean"
            else KIND_SETTINGS[read_kind] if read_kind and not FLAGS.saved_model else ())
    for name in SETTINGS:
        if name in FLAGS and FLAGS[name].present and name not in read:
            raise ValueError(f"--{name} does not apply to --task={task} --embedding={kind}"
                             + (": pick the dialogue's pooling with --probe_view" if name == "pooling"
                                and task in DIALOGUE_PROBE_TASKS else
                                ": every pooling is reported as a view" if name == "pooling" else "")
                             + (": it is fixed in the exported --saved_model" if FLAGS.saved_model else ""))
    if kind in REQUIRED_FLAG and not FLAGS[REQUIRED_FLAG[kind]].value:
        raise ValueError(f"--embedding={kind} needs --{REQUIRED_FLAG[kind]}")

    if task == "stp" and FLAGS.curved_mode and FLAGS.curved_mode not in STP_MODES:
        raise ValueError(f"--task=stp scores with --curved_mode in {', '.join(STP_MODES)}, "
                         f"not {FLAGS.curved_mode}")
    if task in ("dialogue", "probes") and not FLAGS.label_key:
        raise ValueError(f"--task={task} needs --label_key (the key of `labels` naming the domain)")
    if task in FIT_FILE_TASKS and FLAGS.fit_file and FLAGS["probe_test_fraction"].present:
        raise ValueError("--probe_test_fraction splits --eval_file when there is no --fit_file; with "
                         "--fit_file the whole eval file is held out")
    if task == "invariance":
        probed_layers(FLAGS.hidden_layers)
    if len(model_dirs()) > 1 and FLAGS.plot_dir:
        raise ValueError("--plot_dir draws one model's plots: give one --model_dir with it")


def probed_layers(values: List[str]) -> List[int]:
    """--hidden_layers as negative ints, or a ValueError naming the bad value."""
    try:
        layers = [int(value) for value in values]
    except ValueError:
        raise ValueError(f"--hidden_layers must be negative integers such as -2,-3,-4, got {values}") from None
    if any(layer >= 0 for layer in layers):
        raise ValueError(f"--hidden_layers counts from the top: -1 is the last layer, got {values}")
    return layers


def sample_utterances(path: str, limit: int, seed: int) -> List[str]:
    """A uniform sample of at most `limit` utterances (turn texts) of a dialogue file.

    A reservoir (`UtterancePool`), so a corpus of any size streams through memory that holds
    `limit` texts; the same file and seed give the same sample.
    """
    pool = UtterancePool(limit, seed)
    for index, dialogue in enumerate(read_dialogues(path)):
        pool.add(index, [turn.text for turn in dialogue.turns])
    if len(pool.texts) < 2:
        raise ValueError(f"{path}: fitting needs at least 2 utterances, got {len(pool.texts)}")
    return pool.texts


def fit_transform(encode, embedding: dict):
    """Whitening or flow fitted on the encoder's embeddings of --fit_file's utterance sample;
    its parameters are recorded in `embedding`."""
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


def model_dirs() -> List[str]:
    """The directories of --model_dir: each value one directory when it is an existing one, else a
    comma-separated list of them."""
    paths = []
    for value in FLAGS.model_dir or []:
        paths += [value] if os.path.isdir(value) else [path.strip() for path in value.split(",") if path.strip()]
    return paths


def main(argv):
    del argv

    try:
        check_flags()
        check_output(FLAGS.output, [FLAGS.eval_file, FLAGS.fit_file, FLAGS.augmented_file], FLAGS.overwrite)
        claim_output(FLAGS.output)
        checkpoints = model_dirs() or [FLAGS.init_checkpoint]
        kind = settings_kind(FLAGS.task, FLAGS.embedding)
        sources, settings = [], []
        for checkpoint in checkpoints:  # every record checked before the first model loads
            sources.append(ModelSource(checkpoint) if checkpoint else None)
            settings.append(sources[-1].settings(kind, given_settings(kind)) if kind and sources[-1] else {})
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    precision.apply(FLAGS.mixed_precision)
    try:
        reports = []
        for checkpoint, source, setting in zip(checkpoints, sources, settings):
            with source or contextlib.nullcontext():  # each model released after its report
                reports.append(evaluate_model(checkpoint, source, setting))
    except (OSError, ValueError) as e:
        return report_error(e)
    print(write_report(FLAGS.output, reports[0] if len(reports) == 1 else reports))
    print("\n" + results_table(reports))
    return 0


def evaluate_model(checkpoint: Optional[str], source, settings: dict) -> dict:
    """The report of --task for one checkpoint (None: a baseline without one); it records the
    command's arguments and the weights evaluated (`weights_fingerprint`: the file, its SHA-256,
    a training run's step), so a recipe can tell a report of other weights or flags."""
    embedding = {"kind": FLAGS.embedding}
    read = {"augmented_file": FLAGS.augmented_file} if FLAGS.task == "invariance" else {"eval_file": FLAGS.eval_file}
    evaluated = checkpoint or FLAGS.saved_model
    report = {"task": FLAGS.task, **read, "checkpoint": evaluated, "arguments": list(ARGUMENTS),
              "weights": weights_fingerprint(evaluated) if evaluated else None}
    if FLAGS.embedding not in WITHOUT_CHECKPOINT:
        report["mixed_precision"] = None if FLAGS.saved_model else precision.resolve(FLAGS.mixed_precision)
    if source and source.method:
        report["method"] = source.method
    if FLAGS.task == "dialogue":
        report.update(_dialogue_task(source, embedding, settings))
    elif FLAGS.task in CURVED_TASKS:
        report.update(_curved_task(source, embedding, settings))
    elif FLAGS.task in ("response_selection", "fgc_similarity"):
        report.update(_response_selection_task(source, embedding, settings))
    elif FLAGS.task in PROBE_TASKS:
        report.update(_probe_task(source, embedding, settings))
    elif FLAGS.task == "context_response":
        report.update(_context_response_task(source, embedding, settings))
    else:
        report.update(_sentence_task(source, embedding, settings))
    if FLAGS.saved_model:
        report["mixed_precision"] = _exported_embedder().policy
    return report


def _sentence_encoder(source, settings: dict):
    """encode(texts) → [n, H] with the checkpoint's sentence embeddings and a progress bar; the
    model is loaded when the task first embeds, so a bad eval file fails before a slow load."""
    embedder = functools.lru_cache(maxsize=None)(
        lambda: _exported_embedder() if FLAGS.saved_model else SentenceEmbedder.from_settings(
            source.pretrained.encoder, source.pretrained.tokenizer, settings))

    def encode(texts):
        progress = Progress(len(texts), "sentences")
        return embedder().embed(texts, batch_size=FLAGS.batch_size, on_batch=progress.advance)

    return encode


@functools.lru_cache(maxsize=None)
def _exported_embedder():
    """The --saved_model's embedder, loaded once."""
    return ExportedSentenceEmbedder(FLAGS.saved_model)


def _glove(embedding: dict):
    """embed(texts) → average GloVe vectors, recording the file's coverage in `embedding`."""
    glove = GloveEmbedder(FLAGS.glove_file)

    def embed(texts):
        vectors = glove.embed(texts)
        embedding.update(glove_file=FLAGS.glove_file, **glove.coverage())
        return vectors

    return embed


def _sentence_task(source, embedding: dict, settings: dict) -> dict:
    """sr / dsts with the encoder, a fitted transform of it, or GloVe."""
    if FLAGS.embedding == "glove":
        embed = _glove(embedding)
    else:
        encode = _sentence_encoder(source, settings)
        if FLAGS.embedding == "encoder":
            embed = encode
        else:
            transform = functools.lru_cache(maxsize=None)(lambda: fit_transform(encode, embedding))
            embed = lambda texts: transform().transform(encode(texts))  # noqa: E731
    metrics = TASKS[FLAGS.task](FLAGS.eval_file, embed)
    return {"pooling": settings.get("pooling"), "embedding": embedding, "metrics": metrics}


def _fit_dialogues(dialogues, embedding: dict) -> list:
    """The dialogues a bag-of-words or Doc2Vec baseline is fitted on: --fit_file's, else the
    evaluated ones; recorded in `embedding`."""
    fit = list(read_dialogues(FLAGS.fit_file)) if FLAGS.fit_file else list(dialogues)
    embedding.update(fit_file=FLAGS.fit_file or FLAGS.eval_file, fit_dialogues=len(fit))
    return fit


def _lda_topics(dialogues) -> int:
    return FLAGS.lda_topics or len({d.labels[FLAGS.label_key] for d in dialogues})


def _lda_assignments(embedding: dict, captured: dict):
    """assign_views(dialogues) → {"lda": each of --runs seeded LDA fits' most probable topic per
    dialogue}; the first fit's topic distributions go to `captured` for the plots."""
    def assign_views(dialogues):
        fit, topics = _fit_dialogues(dialogues, embedding), _lda_topics(dialogues)
        embedding.update(topics=topics, seed=FLAGS.fit_seed, metrics="categorization", fits=FLAGS.runs)
        fitted = [LdaDialogueEmbedder(fit, n_components=topics, seed=FLAGS.fit_seed + run)
                  for run in range(FLAGS.runs)]
        first = fitted[0].embed(dialogues)
        captured["views"] = {"lda": first}
        return {"lda": [first.argmax(axis=1)] + [lda.assign(dialogues) for lda in fitted[1:]]}

    return assign_views


def _plm_mean(embedding: dict):
    """embed_views(dialogues) → {"mean": [N, H]} of the RoBERTa / T5 directory --init_checkpoint."""
    def embed_views(dialogues):
        encoder = load_transformers_encoder(FLAGS.init_checkpoint)
        embedder = PlmMeanDialogueEmbedder(encoder, FLAGS[PLM_INPUT.name].value,
                                           FLAGS.max_length or DEFAULT_MAX_LENGTH["dialogue"])
        embedding.update(model_type=encoder.model_type, **{PLM_INPUT.name: embedder.input_layout},
                         max_length=embedder.max_length)
        progress = Progress(len(dialogues), "dialogues")
        return embedder.embed_views(dialogues, batch_size=max(1, FLAGS.batch_size // 4),
                                    on_batch=progress.advance)

    return embed_views


def _encoder_views(source, embedding: dict, settings: dict, hidden_layers=()):
    """embed_views(dialogues) → the DialogueEmbedder's {view: [N, H]} (with `hidden_layers`' views);
    the model is loaded once, when first called, and its settings recorded in `embedding`."""
    @functools.lru_cache(maxsize=None)
    def embedder():
        pretrained = source.pretrained
        loaded = DialogueEmbedder.from_settings(pretrained.encoder, pretrained.tokenizer, settings,
                                                hidden_layers=hidden_layers)
        embedding.update(max_length=loaded.max_length, separator=settings["separator"],
                         num_roles=loaded.num_roles, role_turn_embeddings=loaded.role_turn_embeddings,
                         merge_consecutive_turns=loaded.merge_consecutive_turns,
                         speaker_prefix=loaded.speaker_prefix, final_separator=loaded.final_separator,
                         dialogue_pooling=loaded.pooling)
        return loaded

    def embed_views(dialogues):
        progress = Progress(len(dialogues), "dialogues")
        return embedder().embed(dialogues, batch_size=max(1, FLAGS.batch_size // 4), on_batch=progress.advance)

    return embed_views


def _dialogue_views(source, embedding: dict, settings: dict):
    """embed_views(dialogues) → {view: [N, H]} for --embedding on the dialogue task."""
    kind = FLAGS.embedding
    if kind == "encoder":
        return _encoder_views(source, embedding, settings)
    if kind == "glove":
        glove = _glove(embedding)
        return lambda dialogues: {"glove": glove([" ".join(t.text for t in d.turns)
                                                  for d in dialogues])}
    if kind == "utterance_average":
        encode = _sentence_encoder(source, settings)
        return lambda dialogues: {"utterance_average": average_utterance_embeddings(dialogues,
                                                                                    encode)}
    if kind == "plm_mean":
        return _plm_mean(embedding)

    def embed_views(dialogues):
        fit = _fit_dialogues(dialogues, embedding)
        if kind == "tfidf":
            return TfidfDialogueEmbedder(fit).embed_views(dialogues)
        if kind == "doc2vec":
            doc2vec = Doc2VecDialogueEmbedder(fit, seed=FLAGS.fit_seed)
            embedding.update(seed=FLAGS.fit_seed, **doc2vec.settings,
                             vectors="inferred" if FLAGS.fit_file else "trained")
            # Without --fit_file the evaluated dialogues are the training documents.
            return {doc2vec.view: doc2vec.embed(dialogues) if FLAGS.fit_file else doc2vec.fitted()}
        topics = _lda_topics(dialogues)
        embedding.update(topics=topics, seed=FLAGS.fit_seed, metrics="all")
        return LdaDialogueEmbedder(fit, n_components=topics, seed=FLAGS.fit_seed).embed_views(dialogues)

    return embed_views


def _dialogue_task(source, embedding: dict, settings: dict) -> dict:
    """dial2vec's dialogue-embedding evaluation, plus its plots under --plot_dir."""
    # pylint: disable=import-outside-toplevel
    from tfdialemb.eval import plots

    captured = {}
    if FLAGS.embedding == "lda" and FLAGS.lda_metrics == "categorization":
        assign_views = _lda_assignments(embedding, captured)

        def assign_and_keep(dialogues):
            captured["labels"] = [d.labels[FLAGS.label_key] for d in dialogues]
            return assign_views(dialogues)

        metrics = evaluate_dialogue_assignments(FLAGS.eval_file, FLAGS.label_key, assign_and_keep)
    else:
        embed_views = _dialogue_views(source, embedding, settings)

        def embed_and_keep(dialogues):
            captured["views"] = embed_views(dialogues)
            captured["labels"] = [d.labels[FLAGS.label_key] for d in dialogues]
            return captured["views"]

        metrics = evaluate_dialogue_embeddings(FLAGS.eval_file, FLAGS.label_key, embed_and_keep,
                                               runs=FLAGS.runs, spearman_repeats=FLAGS.runs)
    report = {"label_key": FLAGS.label_key, "embedding": embedding, "metrics": metrics}
    if FLAGS.plot_dir:
        written = []
        for view, vectors in captured["views"].items():
            path = os.path.join(FLAGS.plot_dir, f"projection-{view}.png")
            plots.plot_projection(vectors, captured["labels"], path,
                                  title=f"{view} ({FLAGS.embedding})")
            written.append(path)
        history = os.path.join(source.directory, VALIDATION_HISTORY) if source else ""
        if FLAGS.model_dir and os.path.isfile(history):
            with open(history, encoding="utf-8") as f:
                points = [row for row in map(json.loads, f)  # an undefined value is null
                          if row.get("adjusted_alignment") is not None and row.get("uniformity") is not None]
            if points:
                path = os.path.join(FLAGS.plot_dir, "alignment_uniformity.png")
                # The trajectory follows the embedding the model serves (the validation's).
                final = [{"label": f"final {view}", **values}
                         for view, values in metrics["views"].items() if view == settings.get("dialogue_pooling")]
                plots.plot_alignment_uniformity(points, path, labelled_points=final)
                written.append(path)
        report["plots"] = written
    return report


def _intent_probe(source, embedding: dict, settings: dict):
    """(report, (eval-file embeddings, labels)) of intent prediction with the sentence embedding."""
    encode = _sentence_encoder(source, settings)
    label_key = FLAGS.label_key or INTENT_LABEL_KEY
    embedding.update(pooling=settings["pooling"], max_length=settings["max_length"])
    embedded = {}

    def embed_texts(texts):
        vectors = encode(texts)
        embedded.update(zip(texts, vectors))
        return vectors

    result = evaluate_intent(FLAGS.eval_file, embed_texts, label_key=label_key, fit_path=FLAGS.fit_file,
                             test_fraction=FLAGS.probe_test_fraction, seed=FLAGS.probe_seed)
    texts, labels, _, _ = read_utterances(FLAGS.eval_file, label_key)
    return {"label_key": label_key, "embedding": embedding, **result}, (
        np.stack([embedded[text] for text in texts]), labels)


def probe_view(settings: dict) -> str:
    """--probe_view, else the recorded dialogue pooling when it is a probed view, else cls."""
    if FLAGS.probe_view:
        return FLAGS.probe_view
    recorded = settings.get("dialogue_pooling")
    return recorded if recorded in ("cls", "mean") else "cls"


def _domain_probes(source, embedding: dict, settings: dict):
    """(report, (eval-file embeddings, labels)) of the domain probes with the --probe_view."""
    embed_views = _encoder_views(source, embedding, settings)
    view = probe_view(settings)
    embedding.update(view=view)
    evaluated = []

    def embed(dialogues):
        vectors = embed_views(dialogues)[view]
        evaluated.append((vectors, [d.labels[FLAGS.label_key] for d in dialogues]))
        return vectors

    result = evaluate_probes(FLAGS.eval_file, FLAGS.label_key, embed, fit_path=FLAGS.fit_file, k=FLAGS.ndcg_k,
                             test_fraction=FLAGS.probe_test_fraction, seed=FLAGS.probe_seed)
    return {"label_key": FLAGS.label_key, "embedding": embedding, **result}, evaluated[0]


def _invariance_probe(source, embedding: dict, settings: dict):
    """(report, (final embeddings, augmentation classes)) of the invariance analysis."""
    layers = probed_layers(FLAGS.hidden_layers)
    embed_views = _encoder_views(source, embedding, settings, hidden_layers=layers)
    view = probe_view(settings)
    embedding.update(view=view, hidden_layers=layers,
                     hidden_state_pooling=layer_pooling(view, FLAGS.hidden_state_pooling))
    evaluated = []

    def embed_representations(dialogues):
        probed = representations(embed_views(dialogues), view, layers, FLAGS.hidden_state_pooling)
        evaluated.append((probed["embedding"], [view_class(d) for d in dialogues]))
        return probed

    result = evaluate_invariance(FLAGS.augmented_file, embed_representations, sampling=FLAGS.invariance_sampling,
                                 test_fraction=FLAGS.probe_test_fraction, seed=FLAGS.probe_seed,
                                 k=FLAGS.invariance_knn, embeddings=FLAGS.invariance_embeddings)
    return {"embedding": embedding, **result}, evaluated[0]


PROBE_RUNS = {"intent": _intent_probe, "probes": _domain_probes, "invariance": _invariance_probe}


def _probe_task(source, embedding: dict, settings: dict) -> dict:
    """The thesis' probes, intent prediction or invariance analysis, plus the PCA projection of
    the evaluated L2-normalised embeddings coloured by label under --plot_dir (thesis Figs. 1-2;
    released scatter-analysis.py `get_pca_df` normalises too)."""
    # pylint: disable=import-outside-toplevel
    from tfdialemb.eval import plots

    report, (vectors, labels) = PROBE_RUNS[FLAGS.task](source, embedding, settings)
    if FLAGS.plot_dir:
        path = os.path.join(FLAGS.plot_dir, f"projection-{FLAGS.task}.png")
        view = embedding.get("view") or f"{embedding['pooling']}-pooled sentence"
        plots.plot_projection(unit_rows(vectors), labels, path, title=f"{FLAGS.task}: PCA of the {view} embeddings")
        report["plots"] = [path]
    return report


def curved_mode(source) -> str:
    """--curved_mode, checked against a trained curved model; by default the model's own scoring
    (ccl for a CCL model, else c3l)."""
    curved = (source.recorded("triple") or {}).get("curved")
    if FLAGS.curved_mode is None:
        return "ccl" if curved == "ccl" else "c3l"
    if curved and FLAGS.curved_mode not in CURVED_MODES[curved]:
        raise ValueError(f"--curved_mode={FLAGS.curved_mode} does not score a {curved} model "
                         f"({source.directory}); use one of {', '.join(CURVED_MODES[curved])}")
    return FLAGS.curved_mode


def _curved_task(source, embedding: dict, settings: dict) -> dict:
    """Triple-encoder sequence modelling or short-term planning."""
    mode = curved_mode(source)
    encode = _sentence_encoder(source, settings)
    embedding.update(mode=mode, speaker_tokens=settings["speaker_tokens"], max_length=settings["max_length"],
                     rank_ties=FLAGS.rank_ties)
    if FLAGS.task == "stp":
        embedding.update(c3l_stp_scorer=FLAGS.c3l_stp_scorer)
        metrics = evaluate_short_term_planning(FLAGS.eval_file, encode, mode=mode,
                                               speaker_tokens=settings["speaker_tokens"],
                                               scorer=FLAGS.c3l_stp_scorer, ties=FLAGS.rank_ties)
    else:
        try:
            lengths = [int(h) for h in FLAGS.history_lengths]
        except ValueError:
            raise ValueError(f"--history_lengths must be integers, got {FLAGS.history_lengths}") from None
        embedding.update(k_last_rows=FLAGS.k_last_rows,
                         merge_consecutive_turns=settings["merge_consecutive_turns"])
        metrics = evaluate_sequence_modeling(FLAGS.eval_file, encode, mode=mode,
                                             k_last_rows=FLAGS.k_last_rows, history_lengths=lengths,
                                             speaker_tokens=settings["speaker_tokens"],
                                             merge_turns=settings["merge_consecutive_turns"],
                                             ties=FLAGS.rank_ties)
    return {"embedding": embedding, "metrics": metrics}


def _response_selection_task(source, embedding: dict, settings: dict) -> dict:
    """A trained cross-encoder ranking each context's candidates (`response_selection`), or the
    similarity of its pair representations (`fgc_similarity`, FGC Table 7)."""
    def over_pairs(method):
        def run_pairs(contexts, responses):
            trained = source.trained
            scorer = PairScorer.from_settings(trained.model, trained.tokenizer, settings)
            embedding.update(fgc_input=settings["fgc_input"], max_length=scorer.max_length)
            progress = Progress(len(responses), "pairs")
            return getattr(scorer, method)(contexts, responses, batch_size=FLAGS.batch_size,
                                           on_batch=progress.advance)
        return run_pairs

    block_size = FLAGS.block_size if FLAGS["block_size"].present else None
    if FLAGS.task == "fgc_similarity":
        metrics = evaluate_pair_similarity(FLAGS.eval_file, over_pairs("represent"), block_size)
    else:
        metrics = evaluate_response_selection(FLAGS.eval_file, over_pairs("score"),
                                              keep_empty_blocks=FLAGS.keep_empty_blocks, block_size=block_size)
    return {"embedding": embedding, "metrics": metrics}


def _context_response_task(source, embedding: dict, settings: dict) -> dict:
    """In-batch accuracy of a trained context-response model's projections."""
    encoder = ContextResponseEncoder.from_settings(source.trained.model, source.trained.tokenizer, settings)
    embedding.update(context=encoder.context, max_length=encoder.max_length,
                     merge_consecutive_turns=settings["merge_consecutive_turns"])
    metrics = evaluate_context_response(FLAGS.eval_file, encoder, batch_size=FLAGS.pairs_per_batch,
                                        seed=FLAGS.pair_seed, merge_turns=settings["merge_consecutive_turns"])
    return {"embedding": embedding, "metrics": metrics}


def run():
    app.run(guarded(main), flags_parser=parse_flags)


if __name__ == "__main__":
    run()
