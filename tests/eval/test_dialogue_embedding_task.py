"""The dial2vec evaluation task on a hand-made labelled file with a fake embedder."""
import json

import numpy as np
import pytest

from tfdialemb.eval import dialogue_metrics as dm
from tfdialemb.eval.dialogue_embedding import evaluate_dialogue_embeddings, read_labelled_dialogues

DOMAINS = ["hotel", "taxi"] * 8


def _record(i, labels):
    return {"id": f"d{i}", "turns": [{"speaker": "user", "text": f"need a {i}"},
                                     {"speaker": "system", "text": "sure"}], "labels": labels}


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.fixture
def labelled_file(tmp_path):
    records = [_record(i, {"domain": domain}) for i, domain in enumerate(DOMAINS)]
    records.insert(3, _record(100, {}))                       # unlabelled
    records.insert(7, _record(101, {"intent": "book"}))       # another label only
    return _write(tmp_path / "test.jsonl", records)


class FakeViews:
    """'perfect': hotel → (1, 0), taxi → (0, 1), keyed on the dialogue's domain; 'noise': seeded."""

    def __init__(self):
        self.calls = []

    def __call__(self, dialogues):
        self.calls.append([d.id for d in dialogues])
        perfect = np.array([[1.0, 0.0] if d.labels["domain"] == "hotel" else [0.0, 1.0]
                            for d in dialogues], np.float32)
        noise = np.random.default_rng(0).normal(size=[len(dialogues), 3]).astype(np.float32)
        return {"perfect": perfect, "noise": noise}


def test_report_of_perfectly_separated_domains(labelled_file):
    views = FakeViews()
    report = evaluate_dialogue_embeddings(labelled_file, "domain", views, runs=3, seed=1)
    assert views.calls == [[f"d{i}" for i in range(16)]]
    assert {k: v for k, v in report.items() if k != "views"} == {
        "dialogues": 16, "labels": 2, "skipped_unlabelled": 2, "queries_without_relevant": 0}
    assert list(report["views"]) == ["perfect", "noise"]
    # Within a domain ‖·‖² = 0 (8·7·2 ordered pairs), across domains 2 (8·8·2 pairs).
    assert report["views"]["perfect"] == pytest.approx({
        "purity": 1.0, "purity_std": 0.0, "ari": 1.0, "nmi": 1.0, "accuracy": 1.0,
        "spearman": 1.0, "spearman_all_pairs": 1.0, "map": 1.0, "mrr": 1.0,
        "alignment": 0.0, "adjusted_alignment": -2.0,
        "uniformity": np.log((112 + 128 * np.exp(-4)) / 240), "zero_rows": 0})


def test_zero_rows_are_left_out_of_alignment_and_uniformity_only(labelled_file):
    """p2 of a monologue is a zero vector: it has no direction, but clustering still sees it."""
    def views(dialogues):
        perfect = FakeViews()(dialogues)["perfect"]
        perfect[0] = 0.0
        return {"perfect": perfect}

    report = evaluate_dialogue_embeddings(labelled_file, "domain", views, runs=2)["views"]["perfect"]
    assert report["zero_rows"] == 1
    # 15 unit rows remain (7 of one domain, 8 of the other): within 0, across ‖·‖² = 2.
    assert report["adjusted_alignment"] == pytest.approx(-2.0)
    assert report["uniformity"] == pytest.approx(np.log((7 * 6 + 8 * 7 + 2 * 7 * 8 * np.exp(-4)) / (15 * 14)))


def test_every_view_gets_its_own_metrics(labelled_file):
    report = evaluate_dialogue_embeddings(labelled_file, "domain", FakeViews(), runs=2, seed=4,
                                          spearman_repeats=3, alignment_variant="released")
    noise = FakeViews()(read_labelled_dialogues(labelled_file, "domain").dialogues)["noise"]
    results = report["views"]["noise"]
    assert results["purity"] == dm.domain_categorization(noise, DOMAINS, runs=2, seed=4)["purity"]
    assert results["spearman"] == pytest.approx(
        dm.spearman_random_pairs(noise, DOMAINS, seed=4, repeats=3))
    assert results["alignment"] == pytest.approx(
        dm.alignment(noise, DOMAINS, variant="released")["alignment"])
    assert results["map"] == pytest.approx(dm.dialogue_retrieval(noise, DOMAINS)["map"])


def test_reading_skips_and_counts_unlabelled_dialogues(labelled_file):
    data = read_labelled_dialogues(labelled_file, "domain")
    assert data.labels == DOMAINS
    assert data.skipped_unlabelled == 2


def test_singleton_domains_are_counted(tmp_path):
    path = _write(tmp_path / "t.jsonl",
                  [_record(i, {"domain": d}) for i, d in enumerate(["a", "a", "b", "b", "c"])])
    embed = lambda dialogues: {"v": np.eye(3)[[0, 0, 1, 1, 2]]}  # noqa: E731
    report = evaluate_dialogue_embeddings(path, "domain", embed, runs=1)
    assert report["labels"] == 3 and report["queries_without_relevant"] == 1


@pytest.mark.parametrize("records, message", [
    ([_record(0, {"domain": "a"}), _record(1, {"domain": "a"}), _record(2, {})],
     "2 dialogues carry label 'domain' with 1 distinct value"),
    ([_record(0, {"domain": ["a"]}), _record(1, {"domain": "b"})],
     "dialogue 'd0': label 'domain' must be a string"),
    ([_record(0, {"domain": 3}), _record(1, {"domain": 4}), _record(2, {"domain": "3"})],
     r"label 'domain' is a number in dialogue 'd0' \(3\) but a string in dialogue 'd2' \('3'\); a class is "
     "spelled one way"),
    ([_record(0, {"domain": True}), _record(1, {"domain": 1})], "a boolean in dialogue 'd0'"),
])
def test_bad_label_files_are_refused(tmp_path, records, message):
    with pytest.raises(ValueError, match=message):
        read_labelled_dialogues(_write(tmp_path / "bad.jsonl", records), "domain")


@pytest.mark.parametrize("views, message", [
    ([np.eye(2)], "non-empty dict of views"),
    ({}, "non-empty dict of views"),
    ({"mean": np.ones([3, 2])}, r"view 'mean' has shape \(3, 2\); expected \[16, H\]"),
    ({"mean": np.ones(16)}, r"view 'mean' has shape \(16,\)"),
])
def test_bad_views_are_refused(labelled_file, views, message):
    with pytest.raises(ValueError, match=message):
        evaluate_dialogue_embeddings(labelled_file, "domain", lambda dialogues: views)
