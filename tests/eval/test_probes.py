"""The thesis' probes on hand-made embeddings with known answers, and the evaluate CLI's probe tasks
on a tiny BERT."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.eval.classifier_probes import knn_accuracy, logistic_regression, nearest_centroid_accuracy
from tfdialemb.eval.evaluator import OptionValues, get_evaluator
from tfdialemb.eval.intent import evaluate_intent, read_utterances
from tfdialemb.eval.probe_split import held_out_split
from tfdialemb.eval.probes import domain_probes, evaluate_probes


def _unit(degrees):
    return np.array([[math.cos(math.radians(d)), math.sin(math.radians(d))] for d in degrees])


def test_separable_embeddings_are_classified_perfectly():
    train_x, train_y = _unit([0, 10, 20, 90, 100, 110]), np.array([0, 0, 0, 1, 1, 1])
    test_x, test_y = _unit([5, 15, 95, 105]), np.array([0, 0, 1, 1])
    assert logistic_regression(train_x, train_y, test_x, test_y) == {
        "accuracy": 1.0, "macro_f1": 1.0, "converged": True}
    assert knn_accuracy(train_x, train_y, test_x, test_y, k=3) == 1.0
    assert nearest_centroid_accuracy(train_x, train_y, test_x, test_y) == 1.0


def test_knn_votes_by_cosine_and_a_tie_goes_to_the_smallest_class():
    # Neighbours of 45°: 40° and 50° (class 1), 30° and 60° (class 0): 2-2 with k = 4 → class 0.
    train_x, train_y = _unit([40, 50, 30, 60, 180]), np.array([1, 1, 0, 0, 1])
    assert knn_accuracy(train_x, train_y, _unit([45]), np.array([0]), k=4) == 1.0
    assert knn_accuracy(train_x, train_y, _unit([45]), np.array([1]), k=2) == 1.0
    # Lengths do not count: the rows are L2-normalised first.
    assert knn_accuracy(train_x * np.array([[1], [1], [9], [9], [1]]), train_y, _unit([45]), np.array([1]), k=2) == 1.0


def test_nearest_centroid_follows_the_class_mean_not_the_nearest_point():
    # Class 0 at 0° and 80° has its centroid at 40°; class 1 sits at 50°. A query at 43° is
    # nearest to the class-1 point (7° away) but to the class-0 centroid (3° away).
    train_x, train_y = _unit([0, 80, 50]), np.array([0, 0, 1])
    assert knn_accuracy(train_x, train_y, _unit([43]), np.array([1]), k=1) == 1.0
    assert nearest_centroid_accuracy(train_x, train_y, _unit([43]), np.array([0])) == 1.0


def test_the_held_out_split_is_seeded_and_keeps_groups_whole():
    fit, test = held_out_split(20, 0.25, seed=3)
    assert len(test) == 5 and sorted(np.concatenate([fit, test]).tolist()) == list(range(20))
    assert np.array_equal(held_out_split(20, 0.25, seed=3)[1], test)
    assert not np.array_equal(held_out_split(20, 0.25, seed=4)[1], test)
    groups = [f"s{i // 4}" for i in range(40)]
    fit, test = held_out_split(40, 0.25, seed=1, groups=groups)
    assert {groups[i] for i in fit}.isdisjoint({groups[i] for i in test})
    assert len({groups[i] for i in test}) == 3 and len(test) == 12  # ceil(0.25 × 10 groups)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        held_out_split(10, 1.0)


# Two far-apart blobs: the fitted part has labels a (blob 1) and b (blob 2); the held-out part has
# a, a, b in blob 1 and b, b in blob 2.
FIT_X, FIT_LABELS = _unit([0, 10, 100, 110]), ["a", "a", "b", "b"]
TEST_X, TEST_LABELS = _unit([4, 6, 8, 104, 106]), ["a", "a", "b", "b", "b"]


def _blob_metrics():
    # KMeans finds the blobs, so the clusters' majority counts are 2 (blob 1) and 2 (blob 2) of 5;
    # logistic regression calls blob 1 a and blob 2 b: 4 of 5 right; macro F1 of a (P 2/3, R 1)
    # and b (P 1, R 2/3) is 0.8 each. The b query in blob 1 ranks the two a documents first and
    # the b ones 3rd and 4th; the others rank their two same-label documents first.
    misplaced = (1 / math.log2(4) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    return {"accuracy": 0.8, "macro_f1": 0.8, "purity": 0.8, "purity_fit": 1.0,
            "ndcg@100": (4 + misplaced) / 5, "queries": 5, "queries_without_relevant": 0, "labels": 2,
            "labels_unseen_in_fit": 0, "logreg_converged": True}


def test_domain_probes_on_constructed_blobs():
    metrics = domain_probes(FIT_X, FIT_LABELS, TEST_X, TEST_LABELS)
    v_measure = metrics.pop("v_measure")
    assert metrics == pytest.approx(_blob_metrics())
    assert 0 < v_measure < 1


def _write(path, vectors_by_id, labels, key="domain", turns=2):
    dialogues = [Dialogue(name, tuple(Turn("ab"[t % 2], f"{name} turn {t}") for t in range(turns)), {key: label})
                 for name, label in zip(vectors_by_id, labels)]
    write_dialogues(dialogues + [Dialogue(f"unlabelled-{path.stem}", (Turn("a", "hi"),))], str(path))


def test_probes_of_files_fit_on_the_fit_file_and_embed_each_once(tmp_path):
    vectors = {f"fit{i}": v for i, v in enumerate(FIT_X)}
    vectors.update({f"test{i}": v for i, v in enumerate(TEST_X)})
    _write(tmp_path / "train.jsonl", [f"fit{i}" for i in range(4)], FIT_LABELS)
    _write(tmp_path / "test.jsonl", [f"test{i}" for i in range(5)], TEST_LABELS)
    calls = []

    def embed(dialogues):
        calls.append([d.id for d in dialogues])
        return np.stack([vectors[d.id] for d in dialogues])

    result = evaluate_probes(str(tmp_path / "test.jsonl"), "domain", embed, fit_path=str(tmp_path / "train.jsonl"))
    assert calls == [[f"test{i}" for i in range(5)], [f"fit{i}" for i in range(4)]]
    assert result["split"] == {"fixed": True, "fit_file": str(tmp_path / "train.jsonl"), "skipped_unlabelled_fit": 1}
    metrics = result["metrics"]
    assert (metrics.pop("fit_dialogues"), metrics.pop("test_dialogues"), metrics.pop("skipped_unlabelled")) == (4, 5, 1)
    metrics.pop("v_measure")
    assert metrics == pytest.approx(_blob_metrics())

    seeded = evaluate_probes(str(tmp_path / "test.jsonl"), "domain", embed, test_fraction=0.4, seed=1)
    assert seeded["split"] == {"fixed": False, "test_fraction": 0.4, "seed": 1}
    assert (seeded["metrics"]["fit_dialogues"], seeded["metrics"]["test_dialogues"]) == (3, 2)


def test_a_held_out_part_of_one_label_is_refused(tmp_path):
    """Seed 0 holds out rows 2 and 6 of 8 (`held_out_split`), both labelled a here: KMeans' purity of
    one label is 1 whatever the embedding, and so is the macro F1 of a classifier that answers a."""
    assert held_out_split(8)[1].tolist() == [2, 6]
    labels = ["b", "a", "a", "a", "b", "a", "a", "a"]
    _write(tmp_path / "one.jsonl", [f"d{i}" for i in range(8)], labels)
    with pytest.raises(ValueError, match=r"the held-out part \(2 of 8 rows: fraction 0.25, seed 0\) holds the "
                                         r"single label 'a'"):
        evaluate_probes(str(tmp_path / "one.jsonl"), "domain", lambda dialogues: np.eye(8)[:len(dialogues)])
    with pytest.raises(ValueError, match="holds the single label 'a'"):  # training's validation, before training
        get_evaluator("probes").validation(str(tmp_path / "one.jsonl"), {"dialogue_pooling": "cls"},
                                           OptionValues({"label_key": "domain", "seed": 0, "batch_size": 2}))
    write_dialogues([Dialogue(f"u{i}", (Turn("user", f"utterance {i}"),), {"intent": label})
                     for i, label in enumerate(labels)], str(tmp_path / "utterances.jsonl"))
    with pytest.raises(ValueError, match="holds the single label 'a'"):
        evaluate_intent(str(tmp_path / "utterances.jsonl"), lambda texts: np.eye(8)[:len(texts)])


def test_intent_reads_one_utterance_records_and_embeds_each_text_once(tmp_path):
    texts = {"card lost": (1.0, 0.1), "card gone": (0.9, 0.2), "lost my card": (1.0, 0.0),
             "top up": (0.1, 1.0), "add money": (0.0, 0.9), "top up now": (0.2, 1.0)}
    rows = [("card lost", "lost"), ("card gone", "lost"), ("top up", "topup"), ("add money", "topup"),
            ("card lost", "lost")]
    path = tmp_path / "train.jsonl"
    write_dialogues([Dialogue(f"r{i}", (Turn("user", t),), {"intent": label}) for i, (t, label) in enumerate(rows)],
                    str(path))
    write_dialogues([Dialogue("q0", (Turn("user", "lost my card"),), {"intent": "lost"}),
                     Dialogue("q1", (Turn("user", "top up now"),), {"intent": "topup"})], str(tmp_path / "test.jsonl"))
    embedded = []

    def embed(batch):
        embedded.extend(batch)
        return np.array([texts[t] for t in batch])

    result = evaluate_intent(str(tmp_path / "test.jsonl"), embed, fit_path=str(path))
    assert sorted(embedded) == sorted(texts)
    assert result["metrics"] == {"accuracy": 1.0, "macro_f1": 1.0, "logreg_converged": True, "fit_utterances": 5,
                                 "test_utterances": 2, "intents": 2, "skipped_unlabelled": 0}
    write_dialogues([Dialogue("x", (Turn("user", "a"),), {"intent": "lost"}),
                     Dialogue("y", (Turn("user", "c"),), {"intent": "lost"})], str(tmp_path / "one.jsonl"))
    with pytest.raises(ValueError, match="2 utterances carry label 'intent' .* 1 distinct value"):
        evaluate_intent(str(tmp_path / "one.jsonl"), embed)


def test_intent_takes_the_turns_of_dialogues_labelled_as_a_whole(tmp_path):
    dialogues = [Dialogue("ai-1", (Turn("A", "what is ai"), Turn("B", "machines that think")), {"category": "ai"}),
                 Dialogue("food-1", (Turn("A", "do you drink"), Turn("B", "no", {"category": "smalltalk"}),
                                     Turn("A", "i like tea")), {"category": "food"}),
                 Dialogue("none-1", (Turn("A", "hello"),))]
    write_dialogues(dialogues, str(tmp_path / "chats.jsonl"))
    # Each turn: its own label when it has one, else its dialogue's; a turn with neither is counted.
    assert read_utterances(str(tmp_path / "chats.jsonl"), "category") == (
        ["what is ai", "machines that think", "do you drink", "no", "i like tea"],
        ["ai", "ai", "food", "smalltalk", "food"], 1, ["ai-1", "ai-1", "food-1", "food-1", "food-1"])
    labels = ["ai", "food", "music"] * 8
    write_dialogues([Dialogue(f"d{i}", tuple(Turn("AB"[t % 2], f"{label} {i} {t}") for t in range(3)),
                              {"category": label}) for i, label in enumerate(labels)], str(tmp_path / "many.jsonl"))
    centres = {"ai": (1.0, 0.0), "food": (0.0, 1.0), "music": (-1.0, -1.0)}
    result = evaluate_intent(str(tmp_path / "many.jsonl"), lambda batch: np.array([centres[t.split()[0]] for t in batch]),
                             label_key="category", seed=1)
    assert result["split"] == {"fixed": False, "test_fraction": 0.25, "seed": 1, "by_group": True}
    assert result["metrics"]["accuracy"] == 1.0 and result["metrics"]["intents"] == 3
    # Whole dialogues of 3 turns on each side: a quarter of the 24 held out, 6 dialogues, 18 utterances.
    assert (result["metrics"]["fit_utterances"], result["metrics"]["test_utterances"]) == (54, 18)


def _driver(commands):
    """Each command through the evaluate CLI's flag parsing and main, in one fresh process."""
    script = ("import json, sys\nfrom absl import flags\nfrom tfdialemb.commands import evaluate\n"
              "from tfdialemb.core.cli import parse_flags\nstatuses = []\n"
              "for argv in json.loads(sys.argv[1]):\n"
              "    flags.FLAGS.unparse_flags()\n"
              "    statuses.append(evaluate.main(parse_flags(['evaluate', *argv])))\n"
              "print('STATUSES', json.dumps(statuses))\n")
    result = subprocess.run([sys.executable, "-c", script, json.dumps(commands)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [row for row in result.stdout.splitlines() if row.startswith("STATUSES")][-1]
    return json.loads(line.split(" ", 1)[1]), result.stderr


def test_cli_probes_report_and_refused_commands(tmp_path, four_layer_bert, augmented_file):
    labels = ["hotel", "taxi"] * 6
    write_dialogues([Dialogue(f"d{i}", (Turn("user", f"book {label} please"), Turn("system", "good morning")),
                              {"domain": label}) for i, label in enumerate(labels)], str(tmp_path / "domains.jsonl"))
    common = [f"--init_checkpoint={four_layer_bert}", "--batch_size=8", f"--plot_dir={tmp_path / 'plots'}"]
    domains = f"--eval_file={tmp_path / 'domains.jsonl'}"
    commands = [
        ["--task=probes", domains, "--label_key=domain", f"--output={tmp_path / 'probes.json'}", "--ndcg_k=3",
         *common],
        # Refused before any model is loaded (status 2): each names what is wrong.
        ["--task=invariance", f"--eval_file={augmented_file}", f"--output={tmp_path / 'x.json'}", *common],
        ["--task=probes", domains, f"--output={tmp_path / 'x.json'}", *common],
        ["--task=probes", domains, "--label_key=domain", "--pooling=mean", f"--output={tmp_path / 'x.json'}", *common],
        ["--task=probes", domains, "--label_key=domain", f"--fit_file={tmp_path / 'domains.jsonl'}",
         "--probe_test_fraction=0.5", f"--output={tmp_path / 'x.json'}", *common],
        ["--task=invariance", f"--augmented_file={augmented_file}", "--hidden_layers=2",
         f"--output={tmp_path / 'x.json'}", *common],
    ]
    statuses, stderr = _driver(commands)
    assert statuses == [0, 2, 2, 2, 2, 2]
    for message in ("--task=invariance reads --augmented_file", "--task=probes needs --label_key",
                    "pick the dialogue's pooling with --probe_view", "--probe_test_fraction splits --eval_file",
                    "--hidden_layers counts from the top"):
        assert message in stderr
    assert not (tmp_path / "x.json").exists()

    probes = json.loads((tmp_path / "probes.json").read_text(encoding="utf-8"))
    assert (probes["task"], probes["label_key"], probes["embedding"]["view"]) == ("probes", "domain", "cls")
    assert probes["split"] == {"fixed": False, "test_fraction": 0.25, "seed": 0}
    assert {"accuracy", "macro_f1", "purity", "v_measure", "ndcg@3"} <= set(probes["metrics"])
    assert (probes["metrics"]["fit_dialogues"], probes["metrics"]["test_dialogues"]) == (9, 3)

    assert [p.name for p in (tmp_path / "plots").iterdir()] == ["projection-probes.png"]


@pytest.mark.slow
def test_cli_intent_on_converted_banking77_and_invariance(tmp_path, four_layer_bert, augmented_file):
    """The released banking77 files through `tfdialemb.data convert` and `evaluate --task=intent`
    with the published split (fit on train, score test); `--task=invariance` on the augmented file."""
    fixtures = os.path.join(os.path.dirname(__file__), "..", "converters", "fixtures", "banking77")
    for split in ("train", "test"):
        converted = subprocess.run([sys.executable, "-m", "tfdialemb.data", "convert", "--format=banking77",
                                    f"--input={fixtures}/{split}.csv", f"--output={tmp_path / split}.jsonl"],
                                   capture_output=True, text=True, timeout=300)
        assert converted.returncode == 0, converted.stderr[-3000:]
    common = [f"--init_checkpoint={four_layer_bert}", f"--plot_dir={tmp_path / 'plots'}"]
    statuses, _ = _driver([
        ["--task=intent", f"--eval_file={tmp_path / 'test.jsonl'}", f"--fit_file={tmp_path / 'train.jsonl'}",
         f"--output={tmp_path / 'intent.json'}", *common],
        ["--task=invariance", f"--augmented_file={augmented_file}", "--hidden_layers=-2,-4", "--invariance_knn=3",
         "--invariance_sampling=all_views", f"--output={tmp_path / 'invariance.json'}",
         *common]])
    assert statuses == [0, 0]
    intent = json.loads((tmp_path / "intent.json").read_text(encoding="utf-8"))
    assert (intent["label_key"], intent["embedding"]["pooling"]) == ("intent", "mean")
    assert intent["split"] == {"fixed": True, "fit_file": str(tmp_path / "train.jsonl"), "skipped_unlabelled_fit": 0}
    assert (intent["metrics"]["fit_utterances"], intent["metrics"]["test_utterances"], intent["metrics"]["intents"]) == (
        9, 6, 3)
    assert 0 <= intent["metrics"]["accuracy"] <= 1

    invariance = json.loads((tmp_path / "invariance.json").read_text(encoding="utf-8"))
    assert invariance["augmented_file"] == str(augmented_file) and "eval_file" not in invariance
    assert (invariance["embedding"]["hidden_layers"], invariance["embedding"]["hidden_state_pooling"]) == ([-2, -4], "mean")
    assert set(invariance["metrics"]["representations"]) == {"embedding", "hidden_state[-2]", "hidden_state[-4]"}
    assert set(invariance["metrics"]["representations"]["embedding"]) == {
        "logreg_accuracy", "logreg_converged", "3nn_accuracy", "cosine_centroid_accuracy", "view_cosine"}
    assert invariance["metrics"]["embeddings"] == "raw"  # the released protocol, and mean-pooled layers, by default
    assert invariance["metrics"]["left_out"] == {"translate": 4}
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["projection-intent.png",
                                                                      "projection-invariance.png"]
