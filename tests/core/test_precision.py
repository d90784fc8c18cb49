"""--mixed_precision and --jit_compile reach the models: an encoder compiled with XLA embeds, and a
cross-encoder scores, as the plain one does, its batches padded to a few widths; `encode` in
bfloat16 with XLA stays near float32, and training records its precision."""
import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf
import tiny_bert

from training_flags import training_flags
from tiny_corpus import SR_SELECT_LINES, TOKENIZER, corpus
from tfdialemb.core import precision
from tfdialemb.dialogue import write_dialogues
from tfdialemb.encoders import Encoder, EncoderConfig, load_pretrained
from tfdialemb.encoders.encoder import compiled_width
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.methods.models.fgc import FineGrainedContrastModel
from tfdialemb.methods.spec import get_method
from tfdialemb.training import cli

SENTENCES = ["hello world", "good morning , how are you ?", "book a taxi please", "fine thanks",
             "the hotel is not helpful"]


def test_xla_compiled_encoder_embeds_as_the_plain_one(hf_safetensors_dir, restore_precision):
    pretrained = load_pretrained(hf_safetensors_dir)
    inputs = pretrained.tokenizer(SENTENCES)
    plain = pretrained.encoder.embed(inputs, training=False).numpy()
    precision.apply("float32", jit_compile_encoders=True)
    compiled = pretrained.encoder.embed(inputs, training=False).numpy()
    assert pretrained.encoder._compiled_forward.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(compiled, plain, atol=1e-5)


def test_compiled_widths_are_multiples_of_32_within_the_positions():
    widths = [0, 1, 31, 32, 33, 64, 65, 500, 512]
    assert [int(compiled_width(w, 512)) for w in widths] == [32, 32, 32, 32, 64, 64, 96, 512, 512]
    # An encoder of 510 positions is never padded past them; a width over them is left as it is.
    assert [int(compiled_width(w, 510)) for w in (480, 481, 510, 511)] == [480, 510, 510, 511]


def test_xla_compiled_forward_sees_padded_widths_and_gives_the_plain_states(hf_safetensors_dir,
                                                                           restore_precision):
    pretrained = load_pretrained(hf_safetensors_dir)
    encoder = pretrained.encoder
    batches = [pretrained.tokenizer(SENTENCES[:1]), pretrained.tokenizer(SENTENCES), pretrained.tokenizer([])]
    plain = [encoder(inputs, training=False)["sequence_output"].numpy() for inputs in batches]
    widths, compiled_forward = [], encoder._compiled_forward

    def recording(inputs, training, all_layers):
        widths.append(int(inputs["input_word_ids"].shape[1]))
        return compiled_forward(inputs, training, all_layers)

    encoder._compiled_forward = recording
    precision.apply("float32", jit_compile_encoders=True)
    compiled = [encoder(inputs, training=False)["sequence_output"].numpy() for inputs in batches]
    assert [states.shape for states in compiled] == [states.shape for states in plain]
    assert widths == [32, 32, 32] and [states.shape[1] for states in plain] == [4, 9, 0]
    for ours, theirs in zip(compiled, plain):
        np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_xla_compiled_pair_scores_equal_the_plain_ones(restore_precision):
    tf.keras.utils.set_random_seed(5)
    model = FineGrainedContrastModel(Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables())
    contexts = [["hello there", "how are you"], ["book a taxi"], ["fine", "thanks", "bye"]]
    responses = ["fine thanks", "to the hotel please", "good"]
    plain = PairScorer(model, TOKENIZER, max_length=32).score(contexts, responses)
    precision.apply("float32", jit_compile_encoders=True)
    compiled = PairScorer(model, TOKENIZER, max_length=32).score(contexts, responses)
    assert model.encoder._compiled_forward.experimental_get_tracing_count() >= 1
    np.testing.assert_allclose(compiled, plain, atol=1e-5)


def test_encode_in_bfloat16_with_xla_stays_near_float32(tmp_path, hf_safetensors_dir):
    (tmp_path / "in.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    encode = subprocess.Popen(
        [sys.executable, "-m", "tfdialemb.encode", f"--init_checkpoint={hf_safetensors_dir}",
         f"--input={tmp_path / 'in.txt'}", f"--output={tmp_path / 'out.npy'}",
         "--mixed_precision=mixed_bfloat16", "--jit_compile"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    pretrained = load_pretrained(hf_safetensors_dir)  # the float32 reference, while the command runs
    reference = pretrained.encoder.embed(pretrained.tokenizer(SENTENCES), training=False).numpy()
    _, stderr = encode.communicate(timeout=300)
    assert encode.returncode == 0, stderr[-3000:]
    mixed = np.load(tmp_path / "out.npy")
    cosines = np.sum(mixed * reference, axis=1) / np.linalg.norm(mixed, axis=1) / np.linalg.norm(reference, axis=1)
    assert mixed.dtype == np.float32 and cosines.min() > 0.999
    assert not np.allclose(mixed, reference, atol=1e-5)  # computed in bfloat16, not float32


def test_training_builds_and_records_the_precision_asked_for(tmp_path, hf_safetensors_dir, monkeypatch,
                                                             restore_precision):
    """Training in bfloat16 validates in float32 (a copy of the model, built first) and records both."""
    write_dialogues(corpus(n=16, seed=3), str(tmp_path / "train.jsonl"))
    (tmp_path / "select.txt").write_text("".join(line + "\n" for line in SR_SELECT_LINES), encoding="utf-8")
    monkeypatch.setattr(cli, "FLAGS", training_flags(
        train_file=str(tmp_path / "train.jsonl"), model_dir=str(tmp_path / "model"),
        init_checkpoint=hf_safetensors_dir, max_steps=1, max_length=16, mixed_precision="mixed_bfloat16",
        validate_file=str(tmp_path / "select.txt"), validate_every=1))
    spec = get_method("ccl")
    built = []
    make_model = spec.make_model
    monkeypatch.setattr(spec, "make_model", lambda encoder, params: built.append(make_model(encoder, params))
                        or built[-1])
    assert cli.run(spec, spec.resolve({"curved_window": 3})) == 0
    assert [model.encoder.compute_dtype for model in built] == ["float32", "bfloat16"]
    with open(tmp_path / "model" / "method.json", encoding="utf-8") as f:
        record = json.load(f)["training"]
    assert (record["mixed_precision"], record["jit_compile"], record["validate_mixed_precision"]) == (
        "mixed_bfloat16", False, "float32")
    assert (tmp_path / "model" / "validation.jsonl").read_text(encoding="utf-8").startswith('{"step": 1, ')
    row = json.loads((tmp_path / "model" / "validation.jsonl").read_text(encoding="utf-8"))
    assert "map" in row and "r@10" not in row  # queries of 4 and 5 candidates give no R@10
