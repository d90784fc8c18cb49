"""An evaluator defined here and nowhere else is a task of `evaluate` and of training validation, with
no edit to the library: the commands run in subprocesses that import this module and register it
first, as a user's own package would. Its metric is re-derived here turn by turn in plain Python."""
import json
from typing import Callable, List, Sequence, Tuple

import numpy as np
import pytest

from tfdialemb.dialogue import Dialogue, Turn, read_dialogues, write_dialogues
from tfdialemb.eval.evaluator import Evaluator, get_evaluator, register_evaluator, unregister_evaluator
from tfdialemb.core.options import Option
from registered_commands import run_registered

TOY_K = Option("toy_k", 1, "Cut-off of the toy's hits@k.", lower_bound=1)


def next_turn_pairs(path: str) -> List[Tuple[str, str]]:
    """(turn, next turn) of every dialogue of a canonical file; a file of fewer than 2 pairs ranks nothing."""
    pairs = [(first.text, second.text) for dialogue in read_dialogues(path)
             for first, second in zip(dialogue.turns, dialogue.turns[1:])]
    if len(pairs) < 2:
        raise ValueError(f"{path}: the toy task needs at least 2 (turn, next turn) pairs, got {len(pairs)}")
    return pairs


def next_turn_hits(pairs: Sequence[Tuple[str, str]], embed: Callable, k: int) -> dict:
    """The share of turns whose own next turn has fewer than k next turns scoring strictly higher by cosine."""
    def unit(texts):
        vectors = np.asarray(embed(list(texts)), np.float64)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    scores = unit(t for t, _ in pairs) @ unit(n for _, n in pairs).T
    above = (scores > np.diag(scores)[:, None]).sum(axis=1)
    return {"hits": float(np.mean(above < k)), "pairs": len(pairs)}


class NextTurnHitsEvaluator(Evaluator):
    """hits@--toy_k of each turn's next turn among every next turn of the file."""

    name = "toy_next_turn_hits"
    kind = "sentence"
    options = (TOY_K,)
    primary_metric = "hits"

    def __call__(self, source, eval_file, options):
        source.embedding.update(k=options.toy_k)
        return {"embedding": source.embedding,
                "metrics": next_turn_hits(next_turn_pairs(eval_file), source.sentences(), options.toy_k)}

    def validation(self, eval_file, settings, options):
        pairs = next_turn_pairs(eval_file)
        return lambda runtime: next_turn_hits(pairs, runtime.embed, TOY_K.default)


def register_toy():
    """Registers the toy evaluator, as a user's own module would at import."""
    register_evaluator(NextTurnHitsEvaluator)


@pytest.fixture(autouse=True)
def toy_registered():
    register_toy()
    yield
    unregister_evaluator(NextTurnHitsEvaluator.name)


def _command(command, *flags, status=0):
    return run_registered(__file__, command, *flags, status=status)


def expected_hits(path, embed, k):
    """The toy metric turn by turn: count the next turns scoring above the true one."""
    pairs = next_turn_pairs(path)
    hits = 0
    for turn, own_next in pairs:
        query = np.asarray(embed([turn])[0], np.float64)
        cosine = [float(query @ np.asarray(v, np.float64)) / (np.linalg.norm(query) * np.linalg.norm(v))
                  for v in embed([n for _, n in pairs])]
        hits += sum(c > cosine[[n for _, n in pairs].index(own_next)] for c in cosine) < k
    return hits / len(pairs)


def test_the_registry_gives_the_toy_its_selection_and_its_validation_refuses_a_set_it_cannot_rank(tmp_path):
    from tfdialemb.eval.evaluator import validation_tasks

    toy = get_evaluator("toy_next_turn_hits")
    assert toy.selection == ("hits", "max") and "toy_next_turn_hits" in validation_tasks()
    write_dialogues([Dialogue("d0", (Turn("a", "hello"), Turn("b", "hi there")))], str(tmp_path / "one.jsonl"))
    with pytest.raises(ValueError, match="at least 2 .* got 1"):
        toy.validation(str(tmp_path / "one.jsonl"), {}, None)


@pytest.mark.slow
def test_an_evaluator_defined_in_a_test_runs_through_evaluate_and_training_validation(tmp_path, hf_safetensors_dir):
    from tiny_corpus import corpus

    from tfdialemb.inference.kinds import load

    write_dialogues(corpus(n=16, seed=3), str(tmp_path / "train.jsonl"))
    write_dialogues(corpus(n=6, seed=7), str(tmp_path / "pairs.jsonl"))
    pairs_file = str(tmp_path / "pairs.jsonl")

    _command("evaluate", "--task=toy_next_turn_hits", f"--eval_file={pairs_file}",
             f"--init_checkpoint={hf_safetensors_dir}",
             "--toy_k=2", "--max_length=16", f"--output={tmp_path / 'report.json'}")
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    untrained = load(hf_safetensors_dir, "sentence", {"max_length": 16})
    assert report["task"] == "toy_next_turn_hits" and report["embedding"] == {"kind": "encoder", "k": 2}
    np.testing.assert_allclose(report["metrics"]["hits"], expected_hits(pairs_file, untrained.embed, 2), atol=1e-9)

    refused = _command("evaluate", "--task=sr", f"--eval_file={pairs_file}", f"--init_checkpoint={hf_safetensors_dir}",
                       "--toy_k=2", f"--output={tmp_path / 'sr.json'}", status=2)
    assert "--toy_k does not apply to --task=sr" in refused.stderr

    model_dir = tmp_path / "model"
    _command("train", "--method=siamese_m", f"--train_file={tmp_path / 'train.jsonl'}", f"--model_dir={model_dir}",
             f"--init_checkpoint={hf_safetensors_dir}", "--max_steps=2", "--batch_size=4", "--freeze_layers=1",
             "--max_length=16", "--num_shards=1", "--validate_task=toy_next_turn_hits",
             f"--validate_file={pairs_file}", "--validate_every=2")
    rows = [json.loads(line) for line in (model_dir / "validation.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["step"] for row in rows] == [2]
    trained = load(str(model_dir), "sentence")
    np.testing.assert_allclose(rows[0]["hits"], expected_hits(pairs_file, trained.embed, 1), atol=1e-9)
    best = json.loads((model_dir / "best" / "best.json").read_text(encoding="utf-8"))
    assert (best["step"], best["metric"], best["better"]) == (2, "hits", "max")
