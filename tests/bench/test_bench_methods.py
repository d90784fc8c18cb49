"""The method step (dial2vec, MGE) and C3L incremental-scoring benchmarks on a tiny BERT (no timed assertions)."""

import numpy as np
import pytest

from tfdialemb.bench.demo_data import demo_utterances
from tfdialemb.bench.incremental import bench_incremental, format_report as incremental_text
from tfdialemb.bench.method import bench_method, format_report as method_text
from tfdialemb.demo.corpus import generate
from tfdialemb.inference.sequence_scorer import SequenceScorer
from tfdialemb.methods.spec import get_method

NEGATIVES = 3


@pytest.mark.slow
def test_dial2vec_bench_reports_steps_and_padding(hf_safetensors_dir):
    report = bench_method(get_method("dial2vec"), 24, batch=2, max_length=48, checkpoint=hf_safetensors_dir,
                          freeze_layers=1, steps=1, warmup=1, params={"negatives": NEGATIVES})
    samples = NEGATIVES + 1
    # The bare encoder sees every sample of every dialogue: [B·S, T].
    assert report["sequences"] == 2 * samples
    assert report["processed_positions"] % (2 * samples) == 0
    assert 0 < report["real_tokens"] <= report["processed_positions"]
    for key in ("method_step_s", "encoder_step_s", "method_tokens_per_s", "encoder_tokens_per_s",
                "throughput_ratio", "uniform_step_s", "length_sorted_step_s", "uniform_one_call_step_s"):
        assert report[key] > 0, key
    np.testing.assert_allclose(report["uniform_vs_length_sorted_step"],
                               report["uniform_step_s"] / report["length_sorted_step_s"])
    np.testing.assert_allclose(report["one_call_vs_row_groups_step"],
                               report["uniform_one_call_step_s"] / report["uniform_step_s"])
    assert report["timed_batches"] == 1
    uniform, bucketed, padded = (report[f"padding_efficiency_{name}"]
                                 for name in ("uniform", "bucketed", "padded"))
    assert 0 < padded <= uniform <= 1 and 0 < padded <= bucketed <= 1
    # The padded feed is the uniform one padded further: the same real tokens, so the position
    # ratio is the efficiency ratio.
    np.testing.assert_allclose(report["processed_positions_padded_vs_uniform"], uniform / padded)
    assert "dial2vec step" in method_text(report)


@pytest.mark.slow
def test_mge_bench_encodes_the_chosen_context_and_candidates(hf_safetensors_dir):
    report = bench_method(get_method("mge"), 24, batch=4, max_length=24, checkpoint=hf_safetensors_dir,
                          freeze_layers=1, steps=1, warmup=0, params={"turns": 1, "context_split": "nearest", "negatives": 2})
    # Each of the 4 examples: one context turn (the nearest, and every example has a neighbour) and
    # 1 + 2 candidates.
    assert report["sequences"] == 4 * (1 + 3)


def test_demo_utterances_are_the_corpus_turns_in_order():
    turns = [turn.text for dialogue in generate(10) for turn in dialogue.turns]
    assert demo_utterances(23) == turns[:23]


@pytest.mark.parametrize("k_last_rows", [None, 2])
def test_c3l_bench_times_both_paths_with_equal_scores(hf_safetensors_dir, k_last_rows):
    report = bench_incremental(hf_safetensors_dir, history_lengths=(4, 2), candidates=5,
                               k_last_rows=k_last_rows, steps=2, warmup=1, max_length=32)
    assert (report["mode"], report["k_last_rows"], report["candidates"]) == ("c3l", k_last_rows, 5)
    assert [row["history_length"] for row in report["lengths"]] == [2, 4]
    for row in report["lengths"]:
        assert row["incremental_ms_per_turn"] > 0 and row["reencode_ms_per_turn"] > 0
        np.testing.assert_allclose(row["reencode_vs_incremental"],
                                   row["reencode_ms_per_turn"] / row["incremental_ms_per_turn"])
        assert row["max_abs_score_difference"] < 1e-4
    assert "re-encode / incremental" in incremental_text(report)


def test_c3l_bench_fails_when_the_paths_disagree(hf_safetensors_dir, monkeypatch):
    from_scratch = SequenceScorer.score_from_scratch
    monkeypatch.setattr(SequenceScorer, "score_from_scratch",
                        lambda self, history, candidates: from_scratch(self, history, candidates) + 0.1)
    with pytest.raises(AssertionError, match="history length 2"):
        bench_incremental(hf_safetensors_dir, history_lengths=(2,), candidates=3, steps=1, warmup=0,
                          max_length=32)


@pytest.mark.parametrize("arguments,message", [
    (dict(history_lengths=(0, 5)), "history_lengths"),
    (dict(candidates=0), "candidates"),
    (dict(mode="ccl", k_last_rows=2), "k_last_rows"),
])
def test_c3l_bench_rejects_bad_settings(hf_safetensors_dir, arguments, message):
    with pytest.raises(ValueError, match=message):
        bench_incremental(hf_safetensors_dir, **arguments)


@pytest.mark.slow
def test_fgc_bench_encodes_the_four_passes_of_each_context(hf_safetensors_dir):
    report = bench_method(get_method("fgc"), 24, batch=3, max_length=32, checkpoint=hf_safetensors_dir,
                          freeze_layers=1, steps=1, warmup=0, params={})
    # (c, r+), (c, r̄+), (c, r−), (c, r̄−) per context, one packed sequence each.
    assert report["sequences"] == 3 * 4
    assert report["throughput_ratio"] > 0


def test_selection_bench_times_the_export_against_the_encoder(hf_safetensors_dir):
    from tfdialemb.bench.selection import bench_selection, format_report as selection_text

    report = bench_selection(hf_safetensors_dir, candidates=3, context_turns=2, max_length=32, steps=1, warmup=0)
    assert report["candidates"] == 3 and report["padded_length"] <= 32
    for key in ("export_ms_per_request", "export_ms_per_candidate", "encoder_ms_per_request", "export_vs_encoder"):
        assert report[key] > 0, key
    assert "exported `rank` signature" in selection_text(report)
