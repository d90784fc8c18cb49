"""FGC through the shared path: trained by the training run on a response-selection file (the
`ubuntu` converter's layout), evaluated by `evaluate --task=response_selection`, exported by
`export` and served by a fresh process that sees the library's scores; one pair gets the same
ids in the training pipeline and at inference."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from training_flags import training_flags
from tfdialemb.converters.response_selection import convert_response_selection
from tfdialemb.data.pipeline import make_dataset
from tfdialemb.dialogue import ErrorPolicy, write_dialogues
from tfdialemb.inference.pair_scorer import PairScorer
from tfdialemb.methods.spec import TrainingRun, get_method
from tfdialemb.model_dir import load_method
from tfdialemb.training import cli
from tiny_corpus import WORDS

MAX_LENGTH = 32

SERVE = r"""
import json, sys
import tensorflow as tf
import tensorflow_text
model = tf.saved_model.load(sys.argv[1])
request = json.loads(sys.argv[2])
pairs = model.signatures["serving_default"](turns=tf.constant(request["turns"]),
                                            turn_counts=tf.constant(request["turn_counts"], tf.int32),
                                            responses=tf.constant(request["responses"]))
ranked = model.signatures["rank"](turns=tf.constant(request["turns"][:2]),
                                  candidates=tf.constant(request["responses"]))
errors = []
for bad in ({"turns": ["a b"], "turn_counts": [2], "responses": ["hello"]},
            {"turns": ["hello world"], "turn_counts": [1], "responses": [""]}):
    try:
        model.signatures["serving_default"](turns=tf.constant(bad["turns"]),
                                            turn_counts=tf.constant(bad["turn_counts"], tf.int32),
                                            responses=tf.constant(bad["responses"]))
        errors.append("no error")
    except tf.errors.InvalidArgumentError as e:
        errors.append(e.message)
print(json.dumps({"probabilities": pairs["probabilities"].numpy().tolist(),
                  "rank": ranked["scores"].numpy().tolist(), "errors": errors}))
"""


def _selection_lines(rng, contexts, candidates):
    lines = []
    for _ in range(contexts):
        context = [" ".join(rng.choice(WORDS, size=rng.integers(1, 5))) for _ in range(rng.integers(1, 4))]
        for n in range(candidates):
            response = " ".join(rng.choice(WORDS, size=rng.integers(1, 5)))
            lines.append("\t".join([str(int(n == 0))] + context + [response]))
    return lines


@pytest.fixture(scope="module")
def trained(tmp_path_factory, hf_safetensors_dir):
    root = tmp_path_factory.mktemp("fgc")
    rng = np.random.default_rng(0)
    for name, contexts, candidates in (("train", 12, 2), ("test", 5, 4)):
        (root / f"{name}.txt").write_text("\n".join(_selection_lines(rng, contexts, candidates)) + "\n",
                                          encoding="utf-8")
        write_dialogues(convert_response_selection(str(root / f"{name}.txt"), ErrorPolicy("fail"), candidates),
                        str(root / f"{name}.jsonl"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(cli, "FLAGS", training_flags(
            train_file=str(root / "train.jsonl"), model_dir=str(root / "model"), init_checkpoint=hf_safetensors_dir,
            max_steps=2, batch_size=4, learning_rate=1e-4, max_length=MAX_LENGTH))
        spec = get_method("fgc")
        assert cli.run(spec, spec.resolve({"pair_layout": "ums"})) == 0
    return root


def _start(*args):
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _finish(process):
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_evaluate_and_export_through_the_commands(trained, hf_safetensors_dir):
    root = trained
    common = ("-m", "tfdialemb.evaluate", "--task=response_selection", f"--eval_file={root / 'test.txt'}",
              "--block_size=4")
    report_path = root / "report.json"
    evaluated = _start(*common, f"--model_dir={root / 'model'}", f"--output={report_path}")
    similarity = _start("-m", "tfdialemb.evaluate", "--task=fgc_similarity", f"--eval_file={root / 'test.txt'}",
                        "--block_size=4", f"--model_dir={root / 'model'}", f"--output={root / 'similarity.json'}")
    untrained = _start(*common, f"--init_checkpoint={hf_safetensors_dir}", f"--output={root / 'u.json'}")
    exported = _start("-m", "tfdialemb.export", f"--model_dir={root / 'model'}", f"--export_dir={root / 'export'}")
    evaluated, untrained, exported, similarity = (_finish(evaluated), _finish(untrained), _finish(exported),
                                                  _finish(similarity))

    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["method"] == "fgc" and report["embedding"]["pair_layout"] == "ums"
    assert report["metrics"]["blocks"] == report["metrics"]["scored_blocks"] == 5
    assert report["metrics"]["empty_blocks"] == 0 and report["metrics"]["block_sizes"] == {"4": 5}
    assert set(report["metrics"]) >= {"r10@1", "r10@2", "r10@5", "r2@1", "map", "mrr", "p@1"}
    assert untrained.returncode == 2 and "need a trained head" in untrained.stderr
    assert similarity.returncode == 0, similarity.stderr[-3000:]
    views = json.loads((root / "similarity.json").read_text(encoding="utf-8"))["metrics"]["views"]
    assert set(views) == {"cls", "projection"}
    assert all(-1 <= value <= 1 for view in views.values() for value in view.values())
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert "kind: selection" in exported.stdout and "signature rank" in exported.stdout

    loaded = load_method(str(root / "model"))
    scorer = PairScorer.from_settings(loaded.model, loaded.tokenizer, loaded.recorded("selection"))
    contexts = [["hello world", "how are you"], ["book taxi please"], []]
    responses = ["fine thanks", "need hotel", "good morning"]
    expected = scorer.score(contexts, responses)
    request = {"turns": [t for c in contexts for t in c], "turn_counts": [len(c) for c in contexts],
               "responses": responses}
    served = _finish(_start("-c", SERVE, str(root / "export" / "1"), json.dumps(request)))
    assert served.returncode == 0, served.stderr[-3000:]
    result = json.loads(served.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(result["probabilities"], expected, atol=1e-5)
    np.testing.assert_allclose(result["rank"], scorer.score([contexts[0]] * 3, responses), atol=1e-5)
    cls = scorer.represent(contexts, responses)["cls"]
    kernel, bias = (v.numpy() for v in loaded.model.selection.weights)
    np.testing.assert_allclose(1 / (1 + np.exp(-(cls @ kernel + bias)[:, 0])), expected, atol=1e-5)
    assert "turn_counts must add up" in result["errors"][0]
    by_path = PairScorer.load(str(root / "model"))  # the directory's recorded layout and length
    assert (by_path.max_length, by_path.layout.layout) == (scorer.max_length, "ums")
    np.testing.assert_allclose(by_path.score(contexts, responses), expected, atol=1e-6)
    assert "at least one token" in result["errors"][1]


def test_one_pair_gets_the_same_ids_in_training_and_at_inference(trained, hf_safetensors_dir):
    loaded = load_method(str(trained / "model"))
    spec, params = loaded.spec, loaded.params
    dataset = make_dataset(str(trained / "model" / "data"), 2, training=False)
    stored = next(iter(dataset))
    batch = next(iter(spec.batches(make_dataset(str(trained / "model" / "data"), 2, training=False),
                                   loaded.tokenizer, params, TrainingRun(hf_safetensors_dir, 2, MAX_LENGTH, 0))))
    dialogues = list(convert_response_selection(str(trained / "train.txt"), ErrorPolicy("fail"), block_size=2))
    scorer = PairScorer.from_settings(loaded.model, loaded.tokenizer, loaded.recorded("selection"))
    packed = []
    for dialogue in dialogues:
        context = [t.text for t in dialogue.turns[:-1]]
        inputs = scorer.pack(tf.constant(context), tf.constant([len(context)]), tf.constant([dialogue.turns[-1].text]))
        packed.append((inputs["input_word_ids"][0].numpy().tolist(), inputs["input_type_ids"][0].numpy().tolist()))
    # The build wrote its examples in a shuffled order: each positive pair trained on is the pair
    # inference packs for one of the dialogues.
    for row in range(2):
        n = int(batch["pair_mask"][row, 0].numpy().sum())
        assert (batch["pair_ids"][row, 0, :n].numpy().tolist(),
                batch["pair_segments"][row, 0, :n].numpy().tolist()) in packed
    assert int(stored["positive_mask"][0].numpy().sum()) > 2
