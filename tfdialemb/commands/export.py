r"""Exports a TF Serving SavedModel: strings in, embeddings or scores out.

  python -m tfdialemb.export (--model_dir=DIR | --init_checkpoint=DIR) --export_dir=DIR \
      [--kind=sentence|dialogue|curved|selection|context_response] [--version=N] [--max_length=N] [kind's flags]

--model_dir is a trained tfdialemb model: its method.json names what it serves (the default
--kind) and the settings inference repeats from training (--separator, --num_roles,
--speaker_prefix, --final_separator, --speaker_tokens, --merge_consecutive_turns, --curved), so
no method flag is needed and a contradicting one is refused; --max_length, --pooling and
--dialogue_pooling override the record with a warning.
--init_checkpoint is any checkpoint the project loads (Hugging Face BERT, Google TF1 BERT), with
the flags' values or their defaults. The model is written to EXPORT_DIR/N/, TF Serving's
versioned layout; N defaults to one more than the highest numeric subdirectory, else 1
(`tfdialemb.serving.layout`). The tokenizer and its vocabulary are inside the graph, so clients
send raw text. Kinds:

  sentence  (`serving.sentence`) serving_default: `sentences` string [None] -> `embeddings`
            float32 [None, H]. --pooling=mean|cls, --max_length (default 128), --normalize (unit
            vectors), warm-up: each line of --warmup_sentences alone, then all of them.
  dialogue  (`serving.dialogue`) whole-dialogue embeddings; serving_default: `turns` string
            [N], `turn_counts` int32 [B], `speakers` int32 [N] -> `embeddings` float32 [B, H]
            (--dialogue_pooling=interlocutor (dial2vec Eq. 4)|mean|cls; a trained model's own by
            default), `p1` ... `pR` (each interlocutor's mean, R = --num_roles).
            --separator=sep|eou, --speaker_prefix and --final_separator (the augcl layout
            "[CLS] 0 t_0 [SEP] 1 t_1 [SEP]"), --max_length (default 512), consecutive turns of
            one speaker merged in the graph when the model was trained so; the role and turn
            embeddings are used when the checkpoint has them; --normalize scales every output to
            unit length.
  curved    (`serving.curved`) triple-encoder (C3L) / CCL stateless incremental scoring, the
            client holding the state (`--kind=triple`, its former name, is accepted with a warning):
            encode_context, encode_candidates, score (Eq. 3), score_maxsim, score_bi;
            --curved=ccl: encode_context, encode_candidates, score_bi. --speaker_tokens,
            --pooling, --max_length (default 512).
  selection (`serving.selection`) a trained FGC cross-encoder: serving_default takes `turns`
            string [N], `turn_counts` int32 [B], `responses` string [B] -> `probabilities`
            float32 [B]; `rank` takes one context's `turns` [n] and `candidates` [C] -> `scores`
            [C]. --pair_layout=paper|ums (recorded), --max_length (default 512).
  context_response  (`serving.context_response`) a trained context-response model (the augmentation
            thesis' auxiliary model): serving_default takes `turns` string [N] and `turn_counts`
            int32 [B] (each context's last utterances, 1 to the recorded context size) ->
            `embeddings` float32 [B, P]; `responses` takes `responses` string [B] -> `embeddings`
            float32 [B, P]; unit vectors whose dot product is the model's similarity. --max_length
            (recorded, default 512).

Dialogue, curved, selection and context_response warm-ups use the dialogues of --warmup_dialogues
(canonical JSONL; default: the packaged `resources/warmup_dialogues.jsonl`, four demo dialogues). A --max_length beyond the
encoder's position embeddings is lowered to them, with a warning. N/ appears complete or not at
all, and an existing version is never overwritten. Besides core TensorFlow ops the graphs use
tensorflow-text's RegexSplitWithOffsets, NormalizeUTF8, FastWordpieceTokenizeWithOffsets and
(sentence, curved) TFText>RoundRobinTrim: TF Serving's model server links them; Python code must
`import tensorflow_text` before `tf.saved_model.load`.

A trained --model_dir serves only the kinds its method offers, is refused while a training run
holds it (its checkpoints still change), and the step whose weights were shipped is printed. The
staging directory of a killed export is removed by the next export into the same --export_dir.

Exit status: 0 written; 1 a bad line in --warmup_dialogues; 2 the command is wrong (missing
checkpoint or warm-up file, an existing version, a flag contradicting the model's record, a kind
the model does not serve, a directory in training, an unwritable --export_dir); 130 Ctrl-C.
"""
import os
import sys

from absl import flags

from tfdialemb.core import precision

from tfdialemb.core import options
from tfdialemb.core.cli import read_lines, report_error, report_removed, run_command
from tfdialemb.dialogue import read_dialogues
from tfdialemb.core.files import check_writable, lock_holder, remove_stale_staging
from tfdialemb.core.resources import resource_path
from tfdialemb.inference.kinds import runtime
from tfdialemb.inference_settings import (
    CURVED,
    DIALOGUE_POOLING,
    FINAL_SEPARATOR,
    MAX_LENGTH,
    MERGE_TURNS,
    NORMALIZE,
    NUM_ROLES,
    PAIR_LAYOUT,
    POOLING,
    SEPARATOR,
    SPEAKER_PREFIX,
    SPEAKER_TOKENS,
)
from tfdialemb.kind_registry import KINDS, RENAMED_KINDS, current_kind
from tfdialemb.methods.spec import get_method
from tfdialemb.model_dir import ModelSource

DEFAULT_WARMUP_SENTENCES = resource_path("demo_sentences.txt")
DEFAULT_WARMUP_DIALOGUES = resource_path("warmup_dialogues.jsonl")
EXPORT_SETTINGS = (POOLING, MAX_LENGTH, SEPARATOR, NUM_ROLES, SPEAKER_TOKENS, MERGE_TURNS, CURVED, PAIR_LAYOUT,
                   SPEAKER_PREFIX, FINAL_SEPARATOR, DIALOGUE_POOLING)

FLAGS = flags.FLAGS


def define_flags() -> None:
    """The command's flags, defined only when it runs: importing the library defines none."""
    flags.DEFINE_enum("kind", None, list(KINDS) + list(RENAMED_KINDS), "What to serve: " + ", ".join(
        f"{name} ({kind.summary})" for name, kind in KINDS.items()) + " (default: what a trained model "
                      "directory offers first, else sentence).")
    flags.DEFINE_string("model_dir", None, "Trained tfdialemb model directory to export.")
    flags.DEFINE_string("init_checkpoint", None, "Any loadable checkpoint, e.g. an untrained BERT.")
    flags.DEFINE_string("export_dir", None, "TF Serving model base path; versions go under it.")
    flags.DEFINE_integer("version", None, "Model version (default: one more than the highest "
                         "numeric subdirectory of --export_dir, else 1).", lower_bound=1)
    for setting in EXPORT_SETTINGS:
        setting.define()
    NORMALIZE.define(f"{', '.join(name for name, kind in KINDS.items() if kind.normalizable)}: {NORMALIZE.help}")
    precision.define_flags(default_policy="float32")
    flags.adopt_module_key_flags(options)
    flags.DEFINE_string("warmup_sentences", DEFAULT_WARMUP_SENTENCES,
                        "sentence: UTF-8 text file, one typical request sentence per line, "
                        "replayed by TF Serving when it loads the model.")
    flags.DEFINE_string("warmup_dialogues", DEFAULT_WARMUP_DIALOGUES, "the other kinds: canonical "
                        "JSONL dialogues for the warm-up requests.")
    flags.mark_flags_as_required(["export_dir"])
    flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint"], required=True)


def _warmup_inputs(what: str) -> list:
    """The warm-up sentences or dialogues (`ServedKind.warmup`) from their flag's file."""
    if what == "sentences":
        return read_lines(FLAGS.warmup_sentences)
    if not os.path.isfile(FLAGS.warmup_dialogues):
        raise FileNotFoundError(f"{FLAGS.warmup_dialogues}: warm-up file does not exist")
    return list(read_dialogues(FLAGS.warmup_dialogues))


def export_kind(source) -> str:
    """--kind, else what the trained model offers first, else sentence; a kind the trained
    model's method does not offer is refused."""
    given = current_kind(FLAGS.kind)
    if not source.method:
        return given or "sentence"
    offers = get_method(source.method).offers
    if given and given not in offers:
        raise ValueError(f"{source.directory}: a {source.method} model serves --kind={' or '.join(offers)}, "
                         f"not --kind={given}")
    return given or offers[0]


def check_not_training(source) -> None:
    """Refuses a model directory a training run holds: it still replaces its checkpoints, so
    the export would ship whichever one it found first."""
    holder = lock_holder(source.directory) if source.method else None
    if holder:
        from tfdialemb.encoders.checkpoint import latest_own_checkpoint  # pylint: disable=import-outside-toplevel

        step = checkpoint_step(latest_own_checkpoint(source.directory))
        raise ValueError(f"{source.directory}: a training run holds it ({holder}) and is still writing "
                         f"checkpoints (the latest is step {step}); export it when the run ends")


def checkpoint_step(path: str) -> int:
    """N of a `.../ckpt-N` checkpoint prefix."""
    return int(path.rsplit("-", 1)[1])


def main(argv):
    """Exports; the SavedModel writing (TensorFlow) is imported here, after the flags parsed."""
    from tfdialemb.serving import layout  # pylint: disable=import-outside-toplevel
    from tfdialemb.serving.kinds import served_kind  # pylint: disable=import-outside-toplevel

    del argv
    precision.apply_flags()

    try:
        source = ModelSource(FLAGS.model_dir or FLAGS.init_checkpoint)
        kind = export_kind(source)
        stray = [s.name for s in EXPORT_SETTINGS if FLAGS[s.name].present and s.name not in KINDS[kind].settings]
        stray += ["normalize"] if FLAGS.normalize and not KINDS[kind].normalizable else []
        if stray:
            raise ValueError(f"{', '.join('--' + n for n in stray)} do(es) not apply to --kind={kind}")
        settings = source.settings(kind, {s.name: FLAGS[s.name].value for s in EXPORT_SETTINGS
                                          if FLAGS[s.name].present})
        check_not_training(source)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        report_removed(remove_stale_staging(FLAGS.export_dir, layout.VERSION_NAME), FLAGS.export_dir)
        check_writable(FLAGS.export_dir, directory_output=True)
        version = FLAGS.version or layout.next_version(FLAGS.export_dir)
        layout.version_dir(FLAGS.export_dir, version)  # fails before the slow load
        served = served_kind(kind)
        inputs = _warmup_inputs(served.warmup)
        options = {"normalize": FLAGS.normalize} if KINDS[kind].normalizable else {}
        servable = served.build(runtime(source, kind, settings, **options), settings, inputs)
        target = layout.write_version(*servable, FLAGS.export_dir, version)
    except (OSError, ValueError) as e:
        return report_error(e)
    print(f"wrote TF Serving model version {version} to {target}")
    print(f"kind: {kind}" + (" (unit-length embeddings)" if FLAGS.normalize else ""))
    if source.method:
        print(f"weights: step {checkpoint_step(source.trained.checkpoint)} of {source.directory}")
    for name, function in servable.signatures.items():
        print(f"signature {layout.describe_signature(name, function)}")
    print(f"warm-up: {served.describe_warmup(servable, inputs)} in {os.path.join(target, layout.WARMUP_FILE)}")
    return 0


def run():
    define_flags()
    run_command(main, __name__)


if __name__ == "__main__":
    run()
