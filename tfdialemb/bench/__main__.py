r"""Benchmarks, reported as throughput and ratios measured in one run.

  python -m tfdialemb.bench --what=encoder --config=mini --seq_len=128 --batch=32
  python -m tfdialemb.bench --what=pipeline [--dialogues=2000] [--method=mge] [--max_length=64]
  python -m tfdialemb.bench --method=mge [--batch=20] [--max_length=32] [--freeze_layers=3]

encoder: forward and forward+backward tokens/s with random weights, the machine's dense float32
matmul FLOP/s measured the same way, and the model-FLOPs utilisation (MFU) against it.
pipeline: padding efficiency with length bucketing vs dynamic padding vs padding to max_length on
the demo corpus, and the pipeline's token rate vs the encoder's (default: the packaged MiniLM).
method: a method's training step vs the bare encoder's forward+backward on the same tokens.
"""
import json

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_enum("what", "encoder", ["encoder", "pipeline", "method"],
                  "What to benchmark (--method=NAME alone implies method).")
flags.DEFINE_enum("config", "mini", ["base", "mini", "tiny"],
                  "Encoder size (--what=encoder): base 12 x 768, mini 6 x 384, tiny 2 x 32.")
flags.DEFINE_integer("seq_len", 128, "Tokens per sequence (--what=encoder).")
flags.DEFINE_integer("batch", 32, "Sequences per step (encoder) or examples per batch (pipeline).")
flags.DEFINE_integer("steps", 10, "Timed steps (after warm-up).")
flags.DEFINE_integer("warmup", 2, "Untimed steps that trace and warm caches.")
flags.DEFINE_integer("matmul_size", 2048, "Square matrix size for the matmul FLOP/s probe.")
flags.DEFINE_bool("jit_compile", False, "Compile the timed encoder steps with XLA.")
flags.DEFINE_integer("dialogues", 2000, "Demo dialogues to generate (--what=pipeline).")
flags.DEFINE_string("method", None, "pipeline: the builder whose batches are measured (default mge); "
                    "method: the method whose training step is timed (mge).")
flags.DEFINE_integer("freeze_layers", 3, "Frozen bottom layers (--what=method; MiniLM has 6).")
flags.DEFINE_integer("max_length", 64, "Build max_length (--what=pipeline).")
flags.DEFINE_string("init_checkpoint", None, "Tokenizer and encoder (--what=pipeline); default MiniLM.")
flags.DEFINE_string("output", None, "Also write the figures to this JSON file.")


def main(argv):
    del argv
    what = "method" if FLAGS.method and FLAGS.what == "encoder" else FLAGS.what
    if what == "method":
        from tfdialemb.bench.method import bench_mge, format_report  # pylint: disable=import-outside-toplevel
        from tfdialemb.encoders import packaged_minilm_path  # pylint: disable=import-outside-toplevel

        if FLAGS.method != "mge":
            raise app.UsageError(f"--method={FLAGS.method}: only mge has a step benchmark so far")
        report = bench_mge(FLAGS.dialogues, FLAGS.batch, FLAGS.max_length,
                           FLAGS.init_checkpoint or packaged_minilm_path(), FLAGS.freeze_layers,
                           steps=FLAGS.steps, warmup=FLAGS.warmup)
    elif what == "encoder":
        from tfdialemb.bench.encoder import bench_encoder, format_report  # pylint: disable=import-outside-toplevel

        report = bench_encoder(FLAGS.config, FLAGS.seq_len, FLAGS.batch, FLAGS.steps, FLAGS.warmup,
                               FLAGS.matmul_size, FLAGS.jit_compile)
    else:
        from tfdialemb.bench.pipeline import bench_pipeline, format_report  # pylint: disable=import-outside-toplevel
        from tfdialemb.encoders import packaged_minilm_path  # pylint: disable=import-outside-toplevel

        report = bench_pipeline(FLAGS.dialogues, FLAGS.method or "mge", FLAGS.max_length, FLAGS.batch,
                                FLAGS.init_checkpoint or packaged_minilm_path(), steps=FLAGS.steps,
                                warmup=FLAGS.warmup)
    print(format_report(report))
    if FLAGS.output:
        with open(FLAGS.output, "w") as f:
            json.dump(report, f, indent=2)


def run():
    app.run(main)


if __name__ == "__main__":
    run()
