r"""The data command line: convert, validate, stats, split and build.

  python -m tfdialemb.data convert  --format=NAME --input=PATH --output=x.jsonl [--on_error=skip] \
      [--text_key=text] [--speaker_key=speaker] [--label_key=KEY,...] [--turns_key=turns] \
      [--dialogues_key=KEY]                           # json, jsonl, yaml, text: your own dialogues
      [--max_utterance_tokens=N] [--max_dialogue_tokens=N] [--vocab_file=vocab.txt] \
      [--block_size=10]                               # ubuntu, douban: lines per candidate block (training files: 2)
      [--max_log_turns=N] [--drop_empty_utterances]   # dialogstudio
      [--multiwoz_split=train]                        # multiwoz21: one official split
  python -m tfdialemb.data validate --input=x.jsonl
  python -m tfdialemb.data stats    --input=x.jsonl [--init_checkpoint=DIR] [--output=stats.json]
  python -m tfdialemb.data split    --input=x.jsonl --output_dir=DIR [--seed=0] [--fractions=0.8,0.1,0.1] \
      [--split_method=id_hash]                        # released: the thesis corpus' split of the file's order
  python -m tfdialemb.data build    --method=M --input=x.jsonl --output_dir=DIR --init_checkpoint=DIR \
      [--max_length=128] [--seed=0] [--num_shards=4] [--builder_param=negatives=9 ...]

Exit status: 0 done; 1 the input has bad lines (reported with file, line and reason; with
--on_error=skip they are counted and skipped instead); 2 the command itself is wrong (unknown
format or method, missing file or checkpoint, existing output) or the output cannot be written
(a read-only or full target, named); 130 interrupted (Ctrl-C), with nothing written.
"""
import os
import sys

from absl import flags

from tfdialemb.core import options
from tfdialemb.core.cli import OVERWRITE, claim_output, report_error, run_command
from tfdialemb.core.progress import Progress
from tfdialemb.converters import converter_options, converters, descriptions, partial_records
from tfdialemb.data.examples import make_builder
from tfdialemb.data.records import describe_cuts
from tfdialemb.data.stats import corpus_stats
from tfdialemb.dialogue import (
    SPLIT_METHODS,
    SPLITS,
    ErrorPolicy,
    read_dialogues,
    split_dialogues,
    write_dialogues,
)
from tfdialemb.core.files import check_output
from tfdialemb.inference_settings import MERGE_TURNS, MIN_TURNS, POOL_DIALOGUES
from tfdialemb.core.reports import report_json, write_report

COMMANDS = ("convert", "validate", "stats", "split", "build")
INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""
FLAGS = flags.FLAGS


def _define_format_options() -> set:
    """One flag per converter option (convert), its help naming the formats that take it."""
    declared = [(name, option) for name, taken in converter_options().items() for option in taken]
    options.define_all(declared)
    return {option.name for _, option in declared}


flags.DEFINE_string("input", None, "Input file (native corpus for convert, canonical JSONL otherwise).")
flags.DEFINE_string("output", None, "Output file (convert: JSONL; stats: JSON report).")
flags.DEFINE_string("output_dir", None, "Output directory (split, build).")
flags.DEFINE_string("format", None, "Native format for convert; see `convert --format=help`.")
flags.DEFINE_enum("on_error", "fail", ["fail", "skip"], "Bad input lines: stop, or skip and count.")
flags.DEFINE_string("init_checkpoint", None, "Checkpoint whose vocabulary tokenizes (build, stats).")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary (vocab.txt) that counts the tokens of convert's "
                    "--max_utterance_tokens and --max_dialogue_tokens.")
flags.DEFINE_string("method", None, "Example builder for build (e.g. mlm, mge).")
flags.DEFINE_multi_string("builder_param", [], "Builder parameter as key=value; repeatable.")
flags.DEFINE_integer("max_length", 128, "Tokens per sequence, [CLS] and [SEP] included (build).")
flags.DEFINE_integer("seed", 0, "Seed for negative sampling (build) and splits (split).")
flags.DEFINE_integer("num_shards", 4, "TFRecord shards (build); at least the number of workers.")
FORMAT_OPTION_NAMES = _define_format_options()
MERGE_TURNS.define()
MIN_TURNS.define()
POOL_DIALOGUES.define()
OVERWRITE.define()
flags.adopt_module_key_flags(options)
flags.DEFINE_enum("dialogue_separator", "sep", ["sep", "eou"],
                  "Token between the turns of a whole-dialogue sequence (build, dial2vec).")
flags.DEFINE_list("fractions", ["0.8", "0.1", "0.1"], "train,dev,test fractions (split).")
flags.DEFINE_enum("split_method", "id_hash", SPLIT_METHODS, "split: id_hash puts each dialogue by a hash of "
                  "--seed and its id (independent of file order); released reproduces the thesis' released "
                  "corpus split from the file's order (mylib/datamakers/source.py:111-120: Hugging Face "
                  "train_test_split with seed --seed, --fractions=0.9,0.05,0.05).")
flags.DEFINE_integer("max_utterance_tokens", 0, "convert (formats of whole dialogues): drop a dialogue with "
                     "an utterance of more tokens than this, [CLS] and [SEP] counted, by --vocab_file (the "
                     "augmentation thesis' DialogStudio corpus: 96 mpnet tokens, 60 for Disambiguation); "
                     "0: no bound.", lower_bound=0)
flags.DEFINE_integer("max_dialogue_tokens", 0, "convert (formats of whole dialogues): drop a dialogue of more "
                     "tokens than this as the augmentation thesis' encoder reads it ('0 text[SEP]1 text' in "
                     "[CLS] ... [SEP]) by --vocab_file (its SGD probe sets: 512); 0: no bound.", lower_bound=0)


class UsageError(Exception):
    """The command line is wrong; exit status 2."""


def _require(*names):
    missing = [f"--{n}" for n in names if getattr(FLAGS, n) in (None, "")]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}")


def _errors():
    return ErrorPolicy(FLAGS.on_error)


def _print_bad_lines(errors, prefix: str) -> str:
    """Prints each kept message of a bad line on stderr after `prefix`; returns " (N not shown)"
    for the messages not kept, or ""."""
    for message in errors.messages:
        print(f"{prefix} {message}", file=sys.stderr)
    more = errors.skipped - len(errors.messages)
    return f" ({more} not shown)" if more else ""


def _report_skipped(errors) -> None:
    """Prints the kept messages of skipped lines and how many there were."""
    hidden = _print_bad_lines(errors, "skipped")
    if errors.skipped:
        print(f"skipped {errors.skipped} bad record(s){hidden}", file=sys.stderr)


def convert() -> int:
    import collections  # pylint: disable=import-outside-toplevel
    import inspect  # pylint: disable=import-outside-toplevel


    table = converters()
    if FLAGS.format == "help" or FLAGS.format not in table:
        known = ", ".join(sorted(table))
        if FLAGS.format == "help":
            lines = descriptions()
            width = max(map(len, lines))
            print("formats:\n" + "\n".join(f"  {name:<{width}}  {lines[name]}" for name in sorted(lines)))
            return 0
        raise UsageError(f"unknown --format={FLAGS.format}; known: {known}")
    _require("input", "output")
    taken = {option.name for option in converter_options().get(FLAGS.format, ())}
    stray = sorted(name for name in FORMAT_OPTION_NAMES - taken if FLAGS[name].present)
    if stray:
        raise UsageError(f"{', '.join('--' + name for name in stray)} does not apply to --format={FLAGS.format}")
    bounds = {"max_utterance_tokens": FLAGS.max_utterance_tokens, "max_dialogue_tokens": FLAGS.max_dialogue_tokens}
    if any(bounds.values()):
        given = ", ".join(f"--{name}" for name, value in bounds.items() if value)
        if FLAGS.format in partial_records():
            raise UsageError(f"{given} drops whole dialogues, but a --format={FLAGS.format} record is "
                             f"{partial_records()[FLAGS.format]}, which must not be left out alone")
        _require("vocab_file")
    check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
    folder = os.path.realpath(FLAGS.input)
    if os.path.isdir(folder) and os.path.commonpath([folder, os.path.realpath(FLAGS.output)]) == folder:
        raise UsageError(f"{FLAGS.output}: inside the input folder {FLAGS.input}, whose files are read as input "
                         "(the output among them); write it elsewhere")
    claim_output(FLAGS.output)
    errors = _errors()
    dropped = collections.Counter()
    convert_format = table[FLAGS.format]
    counted = {"dropped": dropped} if "dropped" in inspect.signature(convert_format).parameters else {}
    dialogues = convert_format(FLAGS.input, errors, **{name: FLAGS[name].value for name in taken}, **counted)
    if any(bounds.values()):
        from tfdialemb.data.length_filter import TokenLengthFilter  # pylint: disable=import-outside-toplevel
        from tfdialemb.encoders.checkpoint import vocab_file_tokenizer  # pylint: disable=import-outside-toplevel

        by_length = TokenLengthFilter(vocab_file_tokenizer(FLAGS.vocab_file), **bounds)
        dialogues = by_length(dialogues)
    count = write_dialogues(dialogues, FLAGS.output)
    if any(bounds.values()):
        dropped.update(by_length.dropped)
    # A reason is why dialogues were dropped, or (verb, what) for parts of kept dialogues.
    print(f"wrote {count} dialogues to {FLAGS.output}"
          + "".join(f"; {reason[0]} {n} {reason[1]}" if isinstance(reason, tuple) else f"; dropped {n} with {reason}"
                    for reason, n in dropped.items()))
    _report_skipped(errors)
    return 0


def validate() -> int:
    _require("input")
    errors = ErrorPolicy("skip", keep=1000)
    count = sum(1 for _ in read_dialogues(FLAGS.input, errors))
    hidden = _print_bad_lines(errors, "bad line")
    print(f"{FLAGS.input}: {count} valid dialogues, {errors.skipped} bad line(s){hidden}")
    return 1 if errors.skipped else 0


def stats() -> int:
    _require("input")
    if FLAGS.output:
        check_output(FLAGS.output, [FLAGS.input], FLAGS.overwrite)
        claim_output(FLAGS.output)
    tokenizer = _load_tokenizer() if FLAGS.init_checkpoint else None
    errors = _errors()
    report = corpus_stats(read_dialogues(FLAGS.input, errors), tokenizer)
    report["skipped_lines"] = errors.skipped
    _report_skipped(errors)
    print(write_report(FLAGS.output, report) if FLAGS.output else report_json(report))
    return 0


def split() -> int:
    _require("input", "output_dir")
    for name in SPLITS:
        check_output(os.path.join(FLAGS.output_dir, f"{name}.jsonl"), [FLAGS.input], FLAGS.overwrite)
    try:
        fractions = [float(x) for x in FLAGS.fractions]
    except ValueError:
        raise UsageError(f"--fractions must be three numbers, got {FLAGS.fractions}") from None
    for name in SPLITS:
        claim_output(os.path.join(FLAGS.output_dir, f"{name}.jsonl"))
    errors = _errors()
    counts = split_dialogues(FLAGS.input, FLAGS.output_dir, FLAGS.seed, fractions, errors, FLAGS.split_method)
    print(", ".join(f"{name}: {n}" for name, n in counts.items()) + f" (in {FLAGS.output_dir})")
    _report_skipped(errors)
    return 0


def build() -> int:
    from tfdialemb.data.build import BuildOptions  # pylint: disable=import-outside-toplevel
    from tfdialemb.data.build import build as build_shards

    _require("method", "input", "output_dir", "init_checkpoint")
    params = {}
    for item in FLAGS.builder_param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--builder_param must be key=value, got {item!r}")
        params[key] = value
    builder = make_builder(FLAGS.method, params)
    tokenizer = _load_tokenizer()
    options = BuildOptions(
        max_length=FLAGS.max_length, seed=FLAGS.seed, num_shards=FLAGS.num_shards,
        merge_consecutive_turns=FLAGS.merge_consecutive_turns, min_turns=FLAGS.min_turns,
        pool_dialogues=FLAGS.pool_dialogues, overwrite=FLAGS.overwrite,
        dialogue_separator=f"[{FLAGS.dialogue_separator.upper()}]",
    )
    progress = Progress(None, "dialogues")
    errors = _errors()
    try:
        manifest = build_shards(FLAGS.input, FLAGS.output_dir, builder, tokenizer, options, errors,
                                on_dialogue=progress.advance)
    except BaseException:
        if progress.done:
            progress.finish()  # ends the progress line, so the error starts a line of its own
        raise
    progress.finish()
    _report_skipped(errors)
    counts = manifest["counts"]
    short, long = counts["dropped_under_min_turns"], counts["dropped_over_length"]
    merged = " after merging consecutive turns" if manifest["merge_consecutive_turns"] else ""
    dropped = ([f"{short} dialogue(s) of fewer than {manifest['min_turns']} turns{merged}"] if short else []) + (
        [f"{long} example(s) over {manifest['max_length']} tokens"] if long else [])
    cuts = describe_cuts(manifest)
    print(f"built {counts['examples']} {FLAGS.method} examples from {counts['dialogues']} dialogues "
          f"into {len(manifest['shards'])} shards in {FLAGS.output_dir}"
          + (f"; dropped {' and '.join(dropped)}" if dropped else "") + (f"; {cuts}" if cuts else ""))
    return 0


def _load_tokenizer():
    from tfdialemb.encoders.checkpoint import load_tokenizer  # pylint: disable=import-outside-toplevel

    return load_tokenizer(FLAGS.init_checkpoint)


def main(argv):
    if len(argv) != 2 or argv[1] not in COMMANDS:
        print(f"usage: python -m tfdialemb.data {{{'|'.join(COMMANDS)}}} --flags...", file=sys.stderr)
        return 2

    command = globals()[argv[1]]
    try:
        return command()
    except KeyboardInterrupt:
        print("error: interrupted; no output was written", file=sys.stderr)
        return INTERRUPTED
    except (UsageError, OSError, ValueError) as e:
        status = report_error(e)
        if status == 1:
            print("(use --on_error=skip to skip and count bad lines)", file=sys.stderr)
        return status


def run():
    run_command(main, __name__)


if __name__ == "__main__":
    run()
