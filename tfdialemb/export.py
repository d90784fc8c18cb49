r"""Exports a sentence encoder as a TF Serving SavedModel: strings in, embeddings out.

  python -m tfdialemb.export (--model_dir=DIR | --init_checkpoint=DIR) --export_dir=DIR \
      [--version=N] [--pooling=mean|cls] [--max_length=128] [--warmup_sentences=FILE]

--model_dir is a trained tfdialemb model, --init_checkpoint any checkpoint the project loads
(Hugging Face BERT, Google TF1 BERT); both are read by the same loader. The model is written to
EXPORT_DIR/N/, TF Serving's versioned layout; N defaults to one more than the highest numeric
subdirectory, else 1:

  N/saved_model.pb, N/variables/   signature `serving_default`: `sentences` tf.string [None] ->
                                   `embeddings` float32 [None, H]; the tokenizer and its
                                   vocabulary are inside the graph, so clients send raw text
  N/assets.extra/tf_serving_warmup_requests
                                   PredictionLog records that TF Serving replays before it
                                   reports the version available: each line of
                                   --warmup_sentences (default: the packaged demo sentences)
                                   alone, then all of them in one request

N/ appears complete or not at all, and an existing version is never overwritten. Besides core
TensorFlow ops the graph uses four tensorflow-text ops (RegexSplitWithOffsets, NormalizeUTF8,
FastWordpieceTokenizeWithOffsets, TFText>RoundRobinTrim): TF Serving's model server links them;
Python code must `import tensorflow_text` before `tf.saved_model.load`.

Exit status: 0 written; 2 the command is wrong (missing checkpoint or warm-up file, existing
version, a max_length the encoder cannot take).
"""
import os
import re
from typing import Optional, Sequence

import tensorflow as tf
from absl import app, flags
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from tfdialemb.cli import read_lines, report_error
from tfdialemb.embedder import SentenceEmbedder
from tfdialemb.encoders import load_pretrained
from tfdialemb.files import atomic_directory

SIGNATURE_KEY = "serving_default"
INPUT_NAME = "sentences"
OUTPUT_NAME = "embeddings"
WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
MAX_WARMUP_RECORDS = 1000
"""TF Serving refuses to load a version whose warm-up file holds more records than this."""
DEFAULT_WARMUP_SENTENCES = os.path.join(os.path.dirname(__file__), "resources",
                                        "demo_sentences.txt")


def next_version(export_dir: str) -> int:
    """One more than the highest numeric subdirectory of `export_dir`, else 1.

    TF Serving serves only numeric subdirectories, so anything else there is ignored.
    """
    if not os.path.isdir(export_dir):
        return 1
    versions = [int(name) for name in os.listdir(export_dir)
                if re.fullmatch(r"[0-9]+", name) and os.path.isdir(os.path.join(export_dir, name))]
    return max(versions, default=0) + 1


def version_dir(export_dir: str, version: Optional[int] = None) -> str:
    """Absolute path of the version to write (default: `next_version`); it must not exist."""
    export_dir = os.path.abspath(export_dir)
    version = next_version(export_dir) if version is None else version
    if version < 1:
        raise ValueError(f"version must be a positive integer, got {version}")
    target = os.path.join(export_dir, str(version))
    if os.path.exists(target):
        raise FileExistsError(f"{target}: version {version} already exists; pick another --version")
    return target


def serving_module(embedder: SentenceEmbedder) -> tf.Module:
    """The object to save: the tokenizer's resources, the encoder's variables, the signature.

    The Keras encoder itself is left out: saving it would also trace Keras' own restore
    functions, which TF Serving never calls (a third of the export time for MiniLM-L6).
    """
    module = tf.Module()
    module.tokenizer = embedder.tokenizer
    module.encoder_variables = list(embedder.encoder.variables)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def serve(sentences):
        return {OUTPUT_NAME: embedder.embed_batch(sentences)}

    module.serve = serve
    return module


def warmup_records(sentences: Sequence[str]) -> list:
    """Serialized PredictionLogs: each sentence alone (the usual one-sentence request), then all
    of them in one request, so that both a single row and a full batch are run before serving."""
    if not sentences:
        raise ValueError("warm-up needs at least one sentence")
    if len(sentences) + 1 > MAX_WARMUP_RECORDS:
        raise ValueError(
            f"{len(sentences)} warm-up sentences make {len(sentences) + 1} records; TF Serving "
            f"loads at most {MAX_WARMUP_RECORDS}")
    records = []
    for batch in [[s] for s in sentences] + [list(sentences)]:
        request = predict_pb2.PredictRequest()
        request.model_spec.signature_name = SIGNATURE_KEY
        request.inputs[INPUT_NAME].CopyFrom(tf.make_tensor_proto(batch, dtype=tf.string))
        log = prediction_log_pb2.PredictionLog(
            predict_log=prediction_log_pb2.PredictLog(request=request))
        records.append(log.SerializeToString())
    return records


def export_saved_model(embedder: SentenceEmbedder, export_dir: str,
                       warmup_sentences: Sequence[str], version: Optional[int] = None) -> str:
    """Writes `export_dir/<version>/` (SavedModel and warm-up requests) and returns its path.

    Everything is written to a hidden sibling first and renamed into place when complete: TF
    Serving polls `export_dir` and would otherwise load a half-written version.
    """
    target = version_dir(export_dir, version)
    records = warmup_records(warmup_sentences)
    with atomic_directory(target) as staging:
        module = serving_module(embedder)
        tf.saved_model.save(module, staging, signatures={SIGNATURE_KEY: module.serve})
        os.makedirs(os.path.dirname(os.path.join(staging, WARMUP_FILE)))
        with tf.io.TFRecordWriter(os.path.join(staging, WARMUP_FILE)) as writer:
            for record in records:
                writer.write(record)
    return target


def describe_signature(embedder: SentenceEmbedder) -> str:
    """`serving_default: sentences string [None] -> embeddings float32 [None, H]`."""
    function = embedder.embed_batch.get_concrete_function()
    spec, = function.structured_input_signature[0]
    output = function.structured_outputs
    return (f"{SIGNATURE_KEY}: {INPUT_NAME} {spec.dtype.name} {spec.shape.as_list()} -> "
            f"{OUTPUT_NAME} {output.dtype.name} {output.shape.as_list()}")


FLAGS = flags.FLAGS


def define_flags() -> None:
    """The command's flags, defined only when it runs: importing the library defines none."""
    flags.DEFINE_string("model_dir", None, "Trained tfdialemb model directory to export.")
    flags.DEFINE_string("init_checkpoint", None, "Any loadable checkpoint, e.g. an untrained BERT.")
    flags.DEFINE_string("export_dir", None, "TF Serving model base path; versions go under it.")
    flags.DEFINE_integer("version", None, "Model version (default: one more than the highest "
                         "numeric subdirectory of --export_dir, else 1).", lower_bound=1)
    flags.DEFINE_enum("pooling", "mean", ["mean", "cls"], "Token pooling of the last layer.")
    flags.DEFINE_integer("max_length", 128, "Tokens per sentence, [CLS] and [SEP] included; "
                         "longer sentences are truncated.", lower_bound=2)
    flags.DEFINE_string("warmup_sentences", DEFAULT_WARMUP_SENTENCES,
                        "UTF-8 text file, one typical request sentence per line, replayed by TF "
                        "Serving when it loads the model.")
    flags.mark_flags_as_required(["export_dir"])
    flags.mark_flags_as_mutual_exclusive(["model_dir", "init_checkpoint"], required=True)


def main(argv):
    del argv
    try:
        version = FLAGS.version or next_version(FLAGS.export_dir)
        version_dir(FLAGS.export_dir, version)  # fails before the slow load
        sentences = read_lines(FLAGS.warmup_sentences)
        embedder = SentenceEmbedder.from_pretrained(
            load_pretrained(FLAGS.model_dir or FLAGS.init_checkpoint),
            pooling=FLAGS.pooling, max_length=FLAGS.max_length)
        target = export_saved_model(embedder, FLAGS.export_dir, sentences, version)
    except (OSError, ValueError) as e:
        return report_error(e)
    print(f"wrote TF Serving model version {version} to {target}")
    print(f"signature {describe_signature(embedder)}")
    print(f"warm-up: {len(sentences)} sentences in {os.path.join(target, WARMUP_FILE)}")
    return 0


def run():
    define_flags()
    app.run(main)


if __name__ == "__main__":
    run()
