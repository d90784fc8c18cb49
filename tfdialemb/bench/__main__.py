r"""Benchmarks, reported as throughput and ratios measured in one run.

  python -m tfdialemb.bench --what=encoder --config=mini --seq_len=128 --batch=32
  python -m tfdialemb.bench --what=pipeline [--dialogues=2000] [--method=mge] [--max_length=64]
  python -m tfdialemb.bench --method=mge [--batch=32] [--max_length=64] [--freeze_layers=3]
  python -m tfdialemb.bench --method=dial2vec [--batch=2] [--negatives=9] [--max_length=512] \
      [--dialogues=500] [--freeze_layers=3]
  python -m tfdialemb.bench --method=c3l [--history_lengths=5,20,50] [--candidates=100] \
      [--k_last_rows=K] [--scorer_mode=c3l]

encoder: forward and forward+backward tokens/s with random weights, the machine's dense float32
matmul FLOP/s measured the same way, and the model-FLOPs utilisation (MFU) against it.
pipeline: padding efficiency with length bucketing vs dynamic padding vs padding to max_length on
the demo corpus, and the pipeline's token rate vs the encoder's (default: the packaged MiniLM).
mge, dial2vec: the method's training step vs the bare encoder's forward+backward on the same
sequences; dial2vec also the padding efficiency of the library's batches vs padding every
dialogue to 512 tokens as the released code does.
c3l: per-turn latency of incremental triple-encoder scoring (encode the newest utterance, update
the cached rows) vs re-encoding the whole history, per history length, with equal scores checked.

Flags left unset take the benchmark's own default (DEFAULTS); every benchmark that loads a
checkpoint uses the packaged MiniLM unless --init_checkpoint names one.
"""
import json

from absl import app, flags

STEP_METHODS = ("mge", "dial2vec")
DEFAULTS = {
    "encoder": {"batch": 32, "steps": 10, "warmup": 2},
    "pipeline": {"batch": 32, "dialogues": 2000, "max_length": 64, "steps": 10, "warmup": 2},
    "mge": {"batch": 32, "dialogues": 2000, "max_length": 64, "steps": 10, "warmup": 2},
    "dial2vec": {"batch": 2, "dialogues": 500, "max_length": 512, "steps": 5, "warmup": 1},
    "c3l": {"max_length": 128, "steps": 5, "warmup": 1},
}

FLAGS = flags.FLAGS
flags.DEFINE_enum("what", "encoder", ["encoder", "pipeline", "method"],
                  "What to benchmark (--method=NAME alone implies method).")
flags.DEFINE_enum("config", "mini", ["base", "mini", "tiny"],
                  "Encoder size (--what=encoder): base 12 x 768, mini 6 x 384, tiny 2 x 32.")
flags.DEFINE_integer("seq_len", 128, "Tokens per sequence (--what=encoder).")
flags.DEFINE_integer("batch", None, "Sequences per step (encoder), examples per batch (pipeline, mge) "
                     "or dialogues per batch (dial2vec); default per benchmark.")
flags.DEFINE_integer("steps", None, "Timed steps (after warm-up); default per benchmark.")
flags.DEFINE_integer("warmup", None, "Untimed steps that trace and warm caches; default per benchmark.")
flags.DEFINE_integer("matmul_size", 2048, "Square matrix size for the matmul FLOP/s probe.")
flags.DEFINE_bool("jit_compile", False, "Compile the timed encoder steps with XLA.")
flags.DEFINE_integer("dialogues", None, "Demo dialogues to generate (pipeline, mge, dial2vec).")
flags.DEFINE_string("method", None, "pipeline: the builder whose batches are measured (default mge); "
                    "method: the method benchmarked: mge, dial2vec or c3l.")
flags.DEFINE_integer("freeze_layers", 3, "Frozen bottom layers (mge, dial2vec; MiniLM has 6).")
flags.DEFINE_integer("max_length", None, "Build max_length (pipeline, mge, dial2vec) or utterance "
                     "max_length (c3l); default per benchmark.")
flags.DEFINE_integer("negatives", 9, "dial2vec: negatives per dialogue (samples = negatives + 1).")
flags.DEFINE_list("history_lengths", ["5", "20", "50"], "c3l: history lengths (utterances) timed.")
flags.DEFINE_integer("candidates", 100, "c3l: pre-encoded candidates scored per turn.")
flags.DEFINE_integer("k_last_rows", None, "c3l: score only the last k rows of the triangle "
                     "(003 Sec. 4.1.2); unset: the full triangle.")
flags.DEFINE_enum("scorer_mode", "c3l", ["c3l", "c3l_maxsim", "bi_b2", "ccl"],
                  "c3l: the SequenceScorer mode timed.")
flags.DEFINE_string("init_checkpoint", None, "Tokenizer and encoder (pipeline, mge, dial2vec, c3l); "
                    "default the packaged MiniLM.")
flags.DEFINE_string("output", None, "Also write the figures to this JSON file.")


def setting(benchmark: str, name: str):
    """The flag's value if given, else the benchmark's default from DEFAULTS."""
    value = getattr(FLAGS, name)
    return DEFAULTS[benchmark][name] if value is None else value


def _checkpoint() -> str:
    from tfdialemb.encoders import packaged_minilm_path  # pylint: disable=import-outside-toplevel

    return FLAGS.init_checkpoint or packaged_minilm_path()


def _method_report(benchmark: str):
    if benchmark == "c3l":
        from tfdialemb.bench.incremental import bench_incremental, format_report  # pylint: disable=import-outside-toplevel

        try:
            lengths = [int(n) for n in FLAGS.history_lengths]
        except ValueError:
            raise app.UsageError(f"--history_lengths must be integers, got {FLAGS.history_lengths}") from None
        report = bench_incremental(_checkpoint(), lengths, FLAGS.candidates, FLAGS.scorer_mode,
                                   FLAGS.k_last_rows, steps=setting(benchmark, "steps"),
                                   warmup=setting(benchmark, "warmup"),
                                   max_length=setting(benchmark, "max_length"))
        return report, format_report
    from tfdialemb.bench import method  # pylint: disable=import-outside-toplevel

    if benchmark not in STEP_METHODS:
        raise app.UsageError(f"--method={benchmark}: the method benchmarks are {STEP_METHODS + ('c3l',)}")
    common = dict(dialogues=setting(benchmark, "dialogues"), batch=setting(benchmark, "batch"),
                  max_length=setting(benchmark, "max_length"), checkpoint=_checkpoint(),
                  freeze_layers=FLAGS.freeze_layers, steps=setting(benchmark, "steps"),
                  warmup=setting(benchmark, "warmup"))
    if benchmark == "dial2vec":
        return method.bench_dial2vec(negatives=FLAGS.negatives, **common), method.format_report
    return method.bench_mge(**common), method.format_report


def main(argv):
    del argv
    from tfdialemb.cli import report_error  # pylint: disable=import-outside-toplevel

    try:
        return _bench()
    except (OSError, ValueError) as e:
        return report_error(e)


def _bench() -> int:
    what = "method" if FLAGS.method and FLAGS.what == "encoder" else FLAGS.what
    if what == "method":
        report, format_report = _method_report(FLAGS.method)
    elif what == "encoder":
        from tfdialemb.bench.encoder import bench_encoder, format_report  # pylint: disable=import-outside-toplevel

        report = bench_encoder(FLAGS.config, FLAGS.seq_len, setting("encoder", "batch"),
                               setting("encoder", "steps"), setting("encoder", "warmup"),
                               FLAGS.matmul_size, FLAGS.jit_compile)
    else:
        from tfdialemb.bench.pipeline import bench_pipeline, format_report  # pylint: disable=import-outside-toplevel

        report = bench_pipeline(setting("pipeline", "dialogues"), FLAGS.method or "mge",
                                setting("pipeline", "max_length"), setting("pipeline", "batch"),
                                _checkpoint(), steps=setting("pipeline", "steps"),
                                warmup=setting("pipeline", "warmup"))
    print(format_report(report))
    if FLAGS.output:
        from tfdialemb.files import atomic_open  # pylint: disable=import-outside-toplevel

        with atomic_open(FLAGS.output) as f:
            json.dump(report, f, indent=2)
    return 0


def run():
    app.run(main)


if __name__ == "__main__":
    run()
