import os

import pytest

from tfdialemb.bench.encoder import CONFIGS, bench_encoder, encoder_flops_per_token
from tfdialemb.encoders import EncoderConfig


def test_flops_per_token_hand_worked():
    # One layer, H=2, I=4, T=3: 8*4 + 4*2*4 + 4*3*2 = 32 + 32 + 24.
    config = EncoderConfig(vocab_size=10, hidden_size=2, num_layers=1, num_attention_heads=1,
                           intermediate_size=4)
    assert encoder_flops_per_token(config, 3) == 88
    mini = EncoderConfig(**CONFIGS["mini"])
    assert encoder_flops_per_token(mini, 128) == 6 * (8 * 384**2 + 4 * 384 * 1536 + 4 * 128 * 384)


def test_tiny_benchmark_reports_every_figure():
    import tf_keras

    report = bench_encoder("tiny", seq_len=16, batch=4, steps=1, warmup=1, matmul_size=64,
                           jit_compile=False, mixed_precision="mixed_bfloat16")
    for key in ("forward_tokens_per_s", "forward_backward_tokens_per_s", "matmul_flops_per_s",
                "forward_mfu", "forward_backward_mfu", "train_vs_forward_time_ratio",
                "mixed_forward_tokens_per_s", "mixed_forward_backward_tokens_per_s", "mixed_forward_speedup",
                "mixed_forward_backward_speedup"):
        assert report[key] > 0, key
    assert 0.99 < report["mixed_embedding_cosine_min"] <= report["mixed_embedding_cosine_mean"] < 1.0 + 1e-6
    assert tf_keras.mixed_precision.global_policy().name == "float32"  # restored after the comparison


def test_batch_tokens_hand_worked():
    import tensorflow as tf

    from tfdialemb.bench.pipeline import batch_tokens

    batch = {"a": tf.zeros([2, 3]), "a_mask": tf.constant([[1, 1, 0], [1, 0, 0]]),
             "b": tf.zeros([1, 2, 2]), "b_mask": tf.constant([[[1, 1], [0, 0]]])}
    assert batch_tokens(batch) == (5, 10)


def test_pipeline_benchmark_on_a_tiny_checkpoint(hf_safetensors_dir):
    from tfdialemb.bench.pipeline import bench_pipeline

    report = bench_pipeline(60, "mlm", max_length=24, batch=8, checkpoint=hf_safetensors_dir, steps=1,
                            warmup=1)
    assert report["examples"] > 60
    assert 0 < report["padding_efficiency_max_length"] <= report["padding_efficiency_uniform"] <= 1
    assert report["padding_efficiency_bucketed"] >= report["padding_efficiency_uniform"] - 0.05
    assert report["pipeline_vs_encoder"] > 0


def test_cold_process_measures_stages_in_order_and_skips_a_missing_reference(hf_safetensors_dir, tmp_path):
    """A fresh process of each tfdialemb side reaches its stages in order, memory only growing;
    an interpreter without sentence-transformers gives the reason its column is skipped."""
    import importlib.util
    import sys

    from tfdialemb.bench.processes import reference_unavailable, run_side
    from tfdialemb.bench.startup import format_report

    sentences = tmp_path / "sentences.txt"
    sentences.write_text("hello there\nbook a taxi\nfine thanks\n", encoding="utf-8")
    stages = run_side("tfdialemb", sys.executable, hf_safetensors_dir, str(sentences), 2, threads=1)
    assert list(stages) == ["start", "imported", "loaded", "first", "all", "again"]
    seconds = [stage["seconds"] for stage in stages.values()]
    peaks = [stage["peak_mib"] for stage in stages.values()]
    assert seconds == sorted(seconds) and peaks == sorted(peaks) and seconds[0] >= 0
    message = reference_unavailable(sys.executable)
    if importlib.util.find_spec("sentence_transformers") is not None:
        assert message is None
        message = "skipped"
    else:
        assert "sentence-transformers is not importable" in message and "--reference_python" in message
    figures = {"imports_s": 1.0, "load_to_first_s": 2.0, "start_to_first_s": 3.0}
    text = format_report({"checkpoint": "c", "threads": 1, "repeats": 1, "sides": {"tfdialemb": figures},
                          "reference_skipped": message})
    assert text.splitlines()[-1] == message


def test_training_step_bench_times_a_ccl_step_in_a_fresh_process(hf_safetensors_dir):
    import importlib.util
    import sys

    from tfdialemb.bench.training_step import bench_training_step, format_report

    from tfdialemb.bench.processes import BFLOAT16_SIDE, bfloat16_measured

    report = bench_training_step(hf_safetensors_dir, sys.executable, batch=4, max_length=16, steps=1, warmup=1,
                                 threads=1)
    assert report["step_s"]["tfdialemb"] > 0 and report["trace_s"] > 0 and report["first_step_s"] > 0
    if bfloat16_measured():  # a row of its own, against tfdialemb's float32 step
        assert report["bfloat16_vs_float32"] == report["step_s"][BFLOAT16_SIDE] / report["step_s"]["tfdialemb"]
    if importlib.util.find_spec("sentence_transformers") is None:
        assert "ratio" not in report and report["reference_skipped"] in format_report(report).splitlines()


def test_training_step_bench_gives_the_reference_the_arguments_its_preamble_reads(monkeypatch):
    """Both sides start from one preamble reading seven arguments (the last the precision)."""
    from tfdialemb.bench import training_step

    calls = []
    monkeypatch.setattr(training_step, "reference_unavailable", lambda python: None)
    monkeypatch.setattr(training_step, "bfloat16_measured", lambda: False)
    monkeypatch.setattr(training_step, "_child_figures", lambda argv, threads: calls.append(argv) or {
        "step_s": 1.0, "first_step_s": 2.0, "trace_s": 0.5})
    report = training_step.bench_training_step("ckpt", "reference-python", batch=2, max_length=8, steps=1,
                                               warmup=0, threads=1)
    ours, reference = calls
    read = training_step.PREAMBLE.count("sys.argv[")
    assert (len(ours) - 3, len(reference) - 3, read) == (7, 7, 7)
    assert reference[0] == "reference-python" and reference[3:] == ours[3:] and report["ratio"] == 1.0


def test_augment_bench_on_a_tiny_checkpoint(hf_safetensors_dir):
    """The a-l-m-dse set writes each dialogue and its views, batched and one dialogue at a time
    alike (the bench checks it), and is timed against the encoder-forward bound."""
    from tfdialemb.bench.augment import bench_augment, format_report

    report = bench_augment(hf_safetensors_dir, dialogues=3, fill_batch_size=4, turns=13)
    assert report["set"] == "a-l-m-dse" and report["set_operations"] == ["insert", "replace", "crop", "shuffle"]
    assert report["utterances"] == 3 * 13 and report["lines_written"] == 3 * 5  # each operation applies
    assert report["ratio_to_bound"] == report["set_s"] / report["bound_s"] > 0
    assert "x the bound (same lines)" in format_report(report)


def test_memory_report_compares_float32_with_the_reference_and_bfloat16_with_float32():
    from tfdialemb.bench.memory import format_report

    report = {"checkpoint": "c", "sentences": 10, "batch_size": 2, "threads": 1, "reference_skipped": None,
              "peak_mib": {"tfdialemb": 800.0, "tfdialemb_saved_model": 900.0, "tfdialemb_bfloat16": 880.0,
                           "sentence_transformers": 500.0},
              "tfdialemb_stages_peak_mib": {"start": 10.0},
              "encoding_s": {"tfdialemb": 4.0, "tfdialemb_saved_model": 6.0, "tfdialemb_bfloat16": 3.0,
                             "sentence_transformers": 8.0},
              "ratios": {"tfdialemb": 1.6, "tfdialemb_saved_model": 1.8},
              "encoding_ratios": {"tfdialemb": 0.5, "tfdialemb_saved_model": 0.75},
              "bfloat16_vs_float32": {"peak": 1.1, "encoding": 0.75}}
    lines = format_report(report).splitlines()
    assert "  tfdialemb                    800 MiB  1.60x sentence_transformers" in lines
    assert "  tfdialemb_bfloat16           880 MiB  1.10x tfdialemb (float32)" in lines
    assert "  tfdialemb_bfloat16          3.00 s  0.75x tfdialemb (float32)" in lines
    assert "  tfdialemb_saved_model       6.00 s  0.75x sentence_transformers" in lines


def test_chitchat_dialogues_pair_consecutive_demo_utterances():
    from tfdialemb.bench.build_memory import with_views
    from tfdialemb.bench.demo_data import chitchat_dialogues
    from tfdialemb.demo.corpus import generate

    utterances = [turn.text for dialogue in generate(10) for turn in dialogue.turns]
    first, second = chitchat_dialogues(2, turns=5)
    assert [turn.speaker for turn in first.turns] == ["a", "b", "a", "b", "a"]
    assert [turn.text for turn in first.turns + second.turns] == [
        f"{utterances[2 * k]} {utterances[2 * k + 1]}" for k in range(10)]
    original, *views = with_views(iter([first]), views=2)
    assert original.labels == {"source_id": first.id, "augmentations": []}
    assert [view.id for view in views] == [f"{first.id}/span/1", f"{first.id}/span/2"]
    assert [view.turns for view in views] == [first.turns[1:4], first.turns[2:3]]
    assert all(view.labels == {"source_id": first.id, "augmentations": ["span"]} for view in views)


def test_build_memory_bench_runs_one_build_command_per_builder_and_size(monkeypatch):
    """Each build is its own `data build` process (its argv recorded here instead of run); augcl
    reads the file with views; the growth is the largest size's peak over the smallest's."""
    import sys

    from tfdialemb.bench import build_memory
    from tfdialemb.dialogue import read_dialogues

    runs = []

    def peak_mib(argv, threads):
        flags = dict(arg[2:].split("=", 1) for arg in argv if arg.startswith("--"))
        runs.append((flags["method"], sum(1 for _ in read_dialogues(flags["input"])), flags["max_length"]))
        assert argv[:4] == [sys.executable, "-m", "tfdialemb.data", "build"] and threads == 1
        assert flags["init_checkpoint"] == "CKPT" and not os.path.exists(flags["output_dir"])
        os.mkdir(flags["output_dir"])  # what the build would write, removed by the bench
        return 100.0 * len(runs)

    monkeypatch.setattr(build_memory, "peak_mib", peak_mib)
    report = build_memory.bench_build_memory("CKPT", ["mlm", "augcl"], sizes=(2, 4), turns=5)
    assert runs == [("mlm", 2, "128"), ("augcl", 2 * 3, "256"), ("mlm", 4, "128"), ("augcl", 4 * 3, "256")]
    assert report["peak_mib"] == {"mlm": {"2": 100.0, "4": 300.0}, "augcl": {"2": 200.0, "4": 400.0}}
    assert report["growth"] == {"mlm": 3.0, "augcl": 2.0}
    lines = build_memory.format_report(report).splitlines()
    assert lines[1].split() == ["builder", "max_len", "2", "4", "4", "/", "2"]
    assert lines[2].split() == ["mlm", "128", "100", "300", "3.00x"]
    assert lines[3].split() == ["augcl", "256", "200", "400", "2.00x"]


def test_build_memory_bench_builds_prefixes_of_a_given_corpus(monkeypatch, tmp_path):
    """--corpus: the first N dialogues of the file, read again from its start when N is larger than
    the file, each id prefixed with its pass (a file holding both "d0" and "d0-1" keeps them apart);
    no line beyond the last taken is read; an empty file is refused."""
    from tfdialemb.bench import build_memory
    from tfdialemb.dialogue import Dialogue, Turn, read_dialogues, write_dialogues

    corpus = tmp_path / "long.jsonl"
    write_dialogues([Dialogue(name, (Turn("a", "word " * 300), Turn("b", "reply"))) for name in ("d0", "d1", "d0-1")],
                    str(corpus))
    built = {}

    def peak_mib(argv, threads):
        flags = dict(arg[2:].split("=", 1) for arg in argv if arg.startswith("--"))
        built[len(built)] = [dialogue.id for dialogue in read_dialogues(flags["input"])]
        os.mkdir(flags["output_dir"])
        return 1.0

    monkeypatch.setattr(build_memory, "peak_mib", peak_mib)
    report = build_memory.bench_build_memory("CKPT", ["mlm"], sizes=(2, 7), corpus=str(corpus))
    assert built == {0: ["0/d0", "0/d1"], 1: ["0/d0", "0/d1", "0/d0-1", "1/d0", "1/d1", "1/d0-1", "2/d0"]}
    assert report["corpus"] == str(corpus) and build_memory.format_report(report).startswith(
        f"peak resident MiB of `data build` on {corpus}")
    with open(corpus, "a", encoding="utf-8") as f:
        f.write("not json\n")
    assert [d.id for d in build_memory.corpus_prefix(str(corpus), 3)] == ["0/d0", "0/d1", "0/d0-1"]
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ValueError, match="holds no dialogues"):
        list(build_memory.corpus_prefix(str(tmp_path / "empty.jsonl"), 1))


@pytest.mark.slow
def test_build_memory_bench_measures_real_builds(hf_safetensors_dir):
    from tfdialemb.bench.build_memory import bench_build_memory

    report = bench_build_memory(hf_safetensors_dir, ["augcl"], sizes=(2, 4), turns=5)
    assert min(report["peak_mib"]["augcl"].values()) > 100


def test_the_augment_bound_encodes_exactly_what_the_set_encodes(hf_safetensors_dir, monkeypatch):
    """The bound's tokens, counted from the operations' inputs, against the fill-mask model's and
    the similarity model's inputs recorded while the set runs."""
    from tfdialemb.augment.augmented_file import Plan, augment_chunk
    from tfdialemb.augment.crop import StageCrop
    from tfdialemb.augment.operations import OperationSet, load_similarity
    from tfdialemb.augment.shuffle import StageShuffle
    from tfdialemb.augment.token_insertion import TokenInsertion
    from tfdialemb.augment.token_replacement import TokenReplacement
    from tfdialemb.bench.augment import CLI_BATCH, _fill_mask_model, bound_inputs
    from tfdialemb.bench.demo_data import chitchat_dialogues

    corpus = list(chitchat_dialogues(CLI_BATCH + 2, turns=6))  # two batches
    model = _fill_mask_model(hf_safetensors_dir, None)
    fill = (TokenInsertion(model, min_fill_prob=0.0), TokenReplacement(model))
    from tfdialemb.inference.kinds import load

    similarity = load_similarity("sentence_encoder", hf_safetensors_dir, load)
    batches, fill_tokens, similarity_tokens = bound_inputs(corpus, fill, 64, 64)
    assert sum(int(mask.sum()) for _, mask in batches) == fill_tokens + similarity_tokens

    fill_seen, texts_seen = [], []
    top_k, embed = model.top_k, similarity.source.embedder.embed
    monkeypatch.setattr(model, "top_k", lambda sequences, positions, k, batch_size: fill_seen.extend(
        len(s) for s, p in zip(sequences, positions) if p) or top_k(sequences, positions, k, batch_size))
    monkeypatch.setattr(similarity.source.embedder, "embed",
                        lambda texts, batch_size: texts_seen.extend(texts) or embed(texts, batch_size=batch_size))
    operations = OperationSet(fill + (StageCrop(similarity), StageShuffle(similarity)), similarity)
    augment_chunk(corpus, operations, Plan("", "", operations.names, batch_size=CLI_BATCH))
    assert sum(fill_seen) == fill_tokens
    tokenizer = model.tokenizer
    assert sum(len(ids) + 2 for ids in tokenizer.tokenize(texts_seen, max_tokens=62).to_list()) == similarity_tokens


def test_same_example_feeds_hold_the_same_examples_grouped_by_length(hf_safetensors_dir, tmp_path):
    """Both feeds hold the build's first 3 × 4 examples, each once; the sorted feed's batches are
    in order of length and pad no more than the uniform ones."""
    import numpy as np

    from tfdialemb.bench.demo_data import demo_build, same_example_feeds
    from tfdialemb.bench.pipeline import batch_tokens
    from tfdialemb.data.build import BuildOptions
    from tfdialemb.data.examples import make_builder
    from tfdialemb.encoders import load_pretrained

    tokenizer = load_pretrained(hf_safetensors_dir).tokenizer
    built = demo_build(str(tmp_path), 20, make_builder("mlm"), tokenizer,
                       BuildOptions(max_length=24, seed=0, num_shards=1))
    feeds = same_example_feeds(built, batch=4, batches=3)

    def rows(dataset):
        found = []
        for batch in dataset:
            assert batch["input_word_ids"].shape[0] == 4
            for ids, mask in zip(batch["input_word_ids"].numpy(), batch["input_word_ids_mask"].numpy()):
                found.append(tuple(ids[mask == 1]))
        return found

    uniform, ordered = rows(feeds["uniform"]), rows(feeds["length_sorted"])
    assert sorted(uniform) == sorted(ordered) and len(uniform) == 12
    assert [len(r) for r in ordered] == sorted(len(r) for r in uniform)
    real_u, positions_u = np.sum([batch_tokens(b) for b in feeds["uniform"]], axis=0)
    real_s, positions_s = np.sum([batch_tokens(b) for b in feeds["length_sorted"]], axis=0)
    assert real_u == real_s and positions_s <= positions_u
    with pytest.raises(ValueError, match="fewer than 100 batches of 4"):
        same_example_feeds(built, batch=4, batches=100)
