r"""Benchmarks, reported as throughput and ratios measured in one run.

  python -m tfdialemb.bench --what=encoder --config=mini --seq_len=128 --batch=32 \
      [--mixed_precision=mixed_bfloat16]
  python -m tfdialemb.bench --what=pipeline [--dialogues=2000] [--method=mge] [--max_length=64]
  python -m tfdialemb.bench --method=NAME [--batch=B] [--max_length=N] [--dialogues=N] \
      [--freeze_layers=3]
  python -m tfdialemb.bench --what=incremental [--history_lengths=5,20,50] [--candidates=100] \
      [--k_last_rows=K] [--scorer_mode=c3l]
  python -m tfdialemb.bench --what=selection [--candidates=10] [--max_length=128]
  python -m tfdialemb.bench --what=startup [--reference_python=PATH] [--repeats=3] [--threads=1]
  python -m tfdialemb.bench --what=memory [--reference_python=PATH] [--sentences=2000] [--threads=1]
  python -m tfdialemb.bench --what=training [--reference_python=PATH] [--batch=64] [--max_length=128]
  python -m tfdialemb.bench --what=augment [--dialogues=32] [--steps=1] [--fill_mask_model=DIR] \
      [--context_response_model=DIR]
  python -m tfdialemb.bench --what=build_memory [--corpus_sizes=250,1000,4000] [--method=NAME] [--corpus=FILE]
  python -m tfdialemb.bench --what=peers --reference_python=PATH [--measures=encode,train_step,cross_encoder,triple] \
      [--lengths=32,64,128,256,512] [--precisions=float32[,bfloat16]] [--thread_counts=1,2] [--batch_tokens=2048]

encoder: forward and forward+backward tokens/s with random weights, the machine's dense float32
matmul FLOP/s measured the same way, and the model-FLOPs utilisation (MFU) against it; with
--mixed_precision, that policy's tokens/s and speed-up over float32 and the cosine of its
mean-pooled embeddings to float32's.
pipeline: padding efficiency with length bucketing vs dynamic padding vs padding to max_length on
the demo corpus, and the pipeline's token rate vs the encoder's (default: the packaged MiniLM).
method (any registered method, `--method=NAME` alone implies it): the method's training step vs
the bare encoder's forward+backward on the same sequences, with the method's paper defaults, and
the padding efficiency of its batches vs padding every sequence to --max_length (the released
dial2vec code pads to 512).
incremental: per-turn latency of incremental triple-encoder scoring (encode the newest utterance,
update the cached rows) vs re-encoding the whole history, per history length, with equal scores
checked.
selection: latency of FGC's exported `rank` signature (one context, --candidates candidates) vs
the bare encoder's forward pass on the same packed pairs.
startup: in fresh processes, process start → first embedding and model load → first embedding
of tfdialemb (from the checkpoint, and from its exported SavedModel) vs sentence-transformers on the
same checkpoint, run by --reference_python (an interpreter with sentence-transformers and torch;
skipped with a message when it has none).
memory: peak resident memory of `python -m tfdialemb.encode` (checkpoint, --saved_model) vs
sentence-transformers encoding the same --sentences demo utterances, and tfdialemb's peak after
imports, loading, the first embedding, all sentences and all of them again, and each side's
steady-state encoding time (the second pass over the sentences).
training: one CCL training step (cosine MSE of two mean-pooled embeddings, AdamW) of tfdialemb vs
sentence-transformers' CosineSimilarityLoss on the same demo pairs, in fresh processes.
startup, memory and training compare float32 with float32 (sentence-transformers computes in it,
and `encode` by default); where the CPU computes bfloat16, memory and training add tfdialemb in
bfloat16 as a row of its own, compared with tfdialemb in float32.
augment: utterances/s of the a-l-m augmentation set (a-l-m-dse, crop and shuffle by the encoder's
cosine, without --context_response_model) on generated dialogues of 45 turns, in batches of 32
dialogues and one dialogue per batch (same outputs checked), and its ratio to the encoder-forward
bound: one forward pass of the fill-mask model's encoder over exactly the tokens the set encodes,
batched; without --fill_mask_model the encoder gets a random masked-LM head (see
tfdialemb/bench/augment.py).
build_memory: peak resident memory of `python -m tfdialemb.data build` per example builder (every
one, or --method's) on --corpus_sizes generated dialogues of 45 turns (or the first dialogues of
--corpus, long real conversations for instance), each build in a fresh process, and the growth
from the smallest corpus to the largest (flat when the build streams).
peers: tfdialemb against sentence-transformers (encode, a contrastive training step, cross-encoder
scoring) and triple-encoders (a turn of incremental scoring) in --reference_python, per length,
precision and thread count, each side in one long-lived process, timed calls interleaved; the
median ratio per measure (JSON `ratios`) and the float32 embeddings' agreement
(tfdialemb/bench/peers.py).

Flags left unset take the benchmark's own default (DEFAULTS, or the method spec's
`bench_defaults`); every benchmark that loads a checkpoint uses the packaged MiniLM unless
--init_checkpoint names one.
"""
import dataclasses
import os
import sys

from absl import app, flags

from tfdialemb.core import precision

from tfdialemb.core import options
from tfdialemb.bench import augment as augment_bench
from tfdialemb.bench import build_memory as build_memory_bench
from tfdialemb.bench import encoder as encoder_bench
from tfdialemb.bench import incremental as incremental_bench
from tfdialemb.bench import memory as memory_bench
from tfdialemb.bench import method as method_bench
from tfdialemb.bench import peers as peers_bench
from tfdialemb.bench import pipeline as pipeline_bench
from tfdialemb.bench import selection as selection_bench
from tfdialemb.bench import startup as startup_bench
from tfdialemb.bench import training_step as training_step_bench
from tfdialemb.core.cli import OVERWRITE, report_error, run_command
from tfdialemb.data.examples import builder_names
from tfdialemb.encoders.packaged import packaged_minilm_path
from tfdialemb.core.files import check_output
from tfdialemb.methods.spec import get_method
from tfdialemb.core.reports import write_report

DEFAULTS = {
    "encoder": {"batch": 32, "steps": 10, "warmup": 2},
    "pipeline": {"batch": 32, "dialogues": 2000, "max_length": 64, "steps": 10, "warmup": 2},
    "incremental": {"max_length": 128, "steps": 5, "warmup": 1},
    "selection": {"max_length": 128, "steps": 10, "warmup": 2},
    "memory": {"batch": 64},
    "training": {"batch": 64, "max_length": 128, "steps": 5, "warmup": 2},
    "augment": {"dialogues": 32, "batch": 64, "steps": 1},
    "peers": {"steps": 5, "warmup": 1},
}

FLAGS = flags.FLAGS
flags.DEFINE_enum("what", "encoder", ["encoder", "pipeline", "method", "incremental", "selection", "startup",
                                      "memory", "training", "augment", "build_memory", "peers"],
                  "What to benchmark (--method=NAME alone implies method).")
flags.DEFINE_enum("config", "mini", ["base", "mini", "tiny"],
                  "Encoder size (--what=encoder): base 12 x 768, mini 6 x 384, tiny 2 x 32.")
flags.DEFINE_integer("seq_len", 128, "Tokens per sequence (--what=encoder).")
flags.DEFINE_integer("batch", None, "Sequences per step (encoder) or examples per batch (pipeline, "
                     "method) or utterance windows per fill-mask call (augment); default per benchmark.", lower_bound=1)
flags.DEFINE_integer("steps", None, "Timed steps (after warm-up); default per benchmark.", lower_bound=1)
flags.DEFINE_integer("warmup", None, "Untimed steps that trace and warm caches; default per benchmark.",
                     lower_bound=0)
flags.DEFINE_integer("matmul_size", 2048, "Square matrix size for the matmul FLOP/s probe.")
flags.DEFINE_bool("jit_compile", False, "Compile the timed encoder steps with XLA (encoder; peers: tfdialemb's "
                  "encoder forward and training step).")
dataclasses.replace(precision.MIXED_PRECISION, default="float32").define(
    "--what=encoder: also time the encoder under this policy (auto: the one train picks here) "
    "against float32, on the same weights and inputs, in alternation, and compare their mean-pooled "
    "embeddings.")
flags.DEFINE_integer("dialogues", None, "Demo dialogues to generate (pipeline, method, augment).", lower_bound=1)
flags.DEFINE_string("method", None, "pipeline: the builder whose batches are measured (default mge); "
                    "method: the registered method benchmarked; build_memory: the one builder measured "
                    "(default all).")
flags.DEFINE_integer("freeze_layers", 3, "Frozen bottom layers (method; MiniLM has 6).", lower_bound=0)
flags.DEFINE_integer("max_length", None, "Build max_length (pipeline, method) or utterance "
                     "max_length (incremental); default per benchmark.", lower_bound=3)
flags.DEFINE_list("history_lengths", ["5", "20", "50"], "incremental: history lengths (utterances) timed.")
flags.DEFINE_integer("candidates", None, "incremental: pre-encoded candidates scored per turn (100); "
                     "selection: candidates per request (10).", lower_bound=1)
flags.DEFINE_integer("k_last_rows", None, "incremental: score only the last k rows of the triangle "
                     "(triple-encoders Sec. 4.1.2); unset: the full triangle.")
flags.DEFINE_enum("scorer_mode", "c3l", ["c3l", "c3l_maxsim", "bi_b2", "ccl"],
                  "incremental: the SequenceScorer mode timed.")
flags.DEFINE_string("init_checkpoint", None, "Tokenizer and encoder (pipeline, method, incremental); "
                    "default the packaged MiniLM.")
flags.DEFINE_string("reference_python", sys.executable, "startup, memory: the interpreter that runs "
                    "sentence-transformers (default: this one).")
flags.DEFINE_integer("repeats", 3, "startup: fresh processes per side (the median is reported).", lower_bound=1)
flags.DEFINE_integer("threads", 1, "startup, memory, training, build_memory: intra- and inter-op threads of every measured process.",
                     lower_bound=1)
flags.DEFINE_integer("sentences", 2000, "memory: demo utterances encoded.", lower_bound=1)
flags.DEFINE_string("fill_mask_model", None, "augment: a checkpoint with a masked-LM head (default: the "
                    "encoder with a random head).")
flags.DEFINE_string("context_response_model", None, "augment: a context_response model directory for crop "
                    "and shuffle (default: the encoder's cosine, set a-l-m-dse).")
flags.DEFINE_list("corpus_sizes", ["250", "1000", "4000"], "build_memory: dialogues per built corpus.")
flags.DEFINE_string("corpus", None, "build_memory: a canonical JSONL whose first --corpus_sizes dialogues are built "
                    "(the file read again from its start as often as a size needs) instead of generated chit-chat.")
flags.DEFINE_list("measures", list(peers_bench.MEASURES), "peers: the measures timed.")
flags.DEFINE_list("lengths", [str(n) for n in peers_bench.LENGTHS], "peers: tokens per sequence timed.")
flags.DEFINE_list("precisions", None, "peers: float32 (both sides) and bfloat16 (mixed_bfloat16 against "
                  "torch's CPU autocast); default float32, and bfloat16 where the CPU computes it.")
flags.DEFINE_list("thread_counts", ["1", str(os.cpu_count() or 1)], "peers: threads of both sides, one run per count.")
flags.DEFINE_integer("batch_tokens", 2048, "peers: tokens per timed call (rows = batch_tokens // length).",
                     lower_bound=1)
flags.DEFINE_string("output", None, "Also write the figures to this JSON file.")
OVERWRITE.define()
flags.adopt_module_key_flags(options)


def setting(defaults, name: str):
    """The flag's value if given, else the benchmark's default."""
    value = getattr(FLAGS, name)
    return defaults[name] if value is None else value


def _checkpoint() -> str:
    return FLAGS.init_checkpoint or packaged_minilm_path()


def _incremental_report():
    try:
        lengths = [int(n) for n in FLAGS.history_lengths]
    except ValueError:
        raise app.UsageError(f"--history_lengths must be integers, got {FLAGS.history_lengths}") from None
    defaults = DEFAULTS["incremental"]
    report = incremental_bench.bench_incremental(_checkpoint(), lengths, FLAGS.candidates or 100, FLAGS.scorer_mode,
        FLAGS.k_last_rows, steps=setting(defaults, "steps"), warmup=setting(defaults, "warmup"),
        max_length=setting(defaults, "max_length"))
    return report, incremental_bench.format_report


def _method_report():
    if not FLAGS.method:
        raise ValueError("--what=method needs --method=NAME")
    spec = get_method(FLAGS.method)
    defaults = spec.bench_defaults
    report = method_bench.bench_method(spec, dialogues=setting(defaults, "dialogues"),
        batch=setting(defaults, "batch"), max_length=setting(defaults, "max_length"), checkpoint=_checkpoint(),
        freeze_layers=FLAGS.freeze_layers, steps=setting(defaults, "steps"), warmup=setting(defaults, "warmup"))
    return report, method_bench.format_report


def _build_memory_report():
    try:
        sizes = [int(n) for n in FLAGS.corpus_sizes]
    except ValueError:
        raise app.UsageError(f"--corpus_sizes must be integers, got {FLAGS.corpus_sizes}") from None
    if not sizes or min(sizes) < 1:
        raise app.UsageError(f"--corpus_sizes must be positive, got {FLAGS.corpus_sizes}")
    methods = builder_names()
    if FLAGS.method:
        if FLAGS.method not in methods:
            raise ValueError(f"--method={FLAGS.method} is not an example builder; known: {', '.join(methods)}")
        methods = [FLAGS.method]
    if FLAGS.corpus and not os.path.isfile(FLAGS.corpus):
        raise ValueError(f"--corpus={FLAGS.corpus}: no such file")
    report = build_memory_bench.bench_build_memory(_checkpoint(), methods, sizes, threads=FLAGS.threads,
                                                   corpus=FLAGS.corpus)
    return report, build_memory_bench.format_report


def _peers_report():
    try:
        lengths = [int(n) for n in FLAGS.lengths]
        thread_counts = sorted({int(n) for n in FLAGS.thread_counts})
    except ValueError:
        raise app.UsageError(f"--lengths and --thread_counts must be integers, got {FLAGS.lengths} and "
                             f"{FLAGS.thread_counts}") from None
    defaults = DEFAULTS["peers"]
    report = peers_bench.bench_peers(_checkpoint(), FLAGS.reference_python, FLAGS.measures, lengths, FLAGS.precisions,
                                     thread_counts, FLAGS.batch_tokens, setting(defaults, "steps"),
                                     setting(defaults, "warmup"), FLAGS.jit_compile,
                                     progress=lambda row: print("done:" + peers_bench.format_row(row),
                                                                file=sys.stderr, flush=True))
    return report, peers_bench.format_report


def main(argv):
    del argv

    try:
        return _bench()
    except (OSError, ValueError) as e:
        return report_error(e)


def _bench() -> int:
    if FLAGS.output:
        check_output(FLAGS.output, overwrite=FLAGS.overwrite)
    what = "method" if FLAGS.method and FLAGS.what == "encoder" else FLAGS.what
    if what == "method":
        report, format_report = _method_report()
    elif what == "incremental":
        report, format_report = _incremental_report()
    elif what == "selection":
        format_report = selection_bench.format_report
        defaults = DEFAULTS["selection"]
        report = selection_bench.bench_selection(_checkpoint(), FLAGS.candidates or 10,
            max_length=setting(defaults, "max_length"), steps=setting(defaults, "steps"),
            warmup=setting(defaults, "warmup"))
    elif what == "startup":
        format_report = startup_bench.format_report
        report = startup_bench.bench_startup(_checkpoint(), FLAGS.reference_python, FLAGS.repeats, FLAGS.threads)
    elif what == "memory":
        format_report = memory_bench.format_report
        report = memory_bench.bench_memory(_checkpoint(), FLAGS.reference_python, FLAGS.sentences,
            setting(DEFAULTS["memory"], "batch"), FLAGS.threads)
    elif what == "training":
        format_report = training_step_bench.format_report
        defaults = DEFAULTS["training"]
        report = training_step_bench.bench_training_step(_checkpoint(), FLAGS.reference_python,
            setting(defaults, "batch"), setting(defaults, "max_length"), setting(defaults, "steps"),
            setting(defaults, "warmup"), FLAGS.threads)
    elif what == "augment":
        format_report = augment_bench.format_report
        defaults = DEFAULTS["augment"]
        report = augment_bench.bench_augment(_checkpoint(), setting(defaults, "dialogues"), setting(defaults, "batch"),
                                             setting(defaults, "steps"), FLAGS.fill_mask_model,
                                             FLAGS.context_response_model)
    elif what == "build_memory":
        report, format_report = _build_memory_report()
    elif what == "peers":
        report, format_report = _peers_report()
    elif what == "encoder":
        format_report = encoder_bench.format_report
        defaults = DEFAULTS["encoder"]
        report = encoder_bench.bench_encoder(FLAGS.config, FLAGS.seq_len, setting(defaults, "batch"),
            setting(defaults, "steps"), setting(defaults, "warmup"), FLAGS.matmul_size, FLAGS.jit_compile,
            precision.resolve(FLAGS.mixed_precision))
    else:
        format_report = pipeline_bench.format_report
        defaults = DEFAULTS["pipeline"]
        report = pipeline_bench.bench_pipeline(setting(defaults, "dialogues"), FLAGS.method or "mge",
            setting(defaults, "max_length"), setting(defaults, "batch"), _checkpoint(),
            steps=setting(defaults, "steps"), warmup=setting(defaults, "warmup"))
    print(format_report(report))
    if FLAGS.output:
        write_report(FLAGS.output, report)
    return 0


def run():
    run_command(main, __name__)


if __name__ == "__main__":
    run()
