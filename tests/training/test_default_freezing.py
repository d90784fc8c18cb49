"""Every method trains on a MiniLM-shaped encoder (6 layers) with no freezing flag: a method whose
paper freezes 6 of BERT-base's 12 layers freezes the bottom half instead, says so, and the frozen
layers keep their weights; an explicit --freeze_layers that leaves nothing to train is refused with
a value that would work."""
import json

import numpy as np
import pytest

import tiny_bert
from tiny_corpus import corpus
from training_flags import training_flags
from tfdialemb.dialogue import write_dialogues
from tfdialemb.encoders import load_pretrained
from tfdialemb.methods.spec import get_method, method_names
from tfdialemb.training import cli
from tfdialemb.training.settings import fitted_freeze_layers

SIX_LAYERS = {**tiny_bert.HF_CONFIG, "num_hidden_layers": 6}
FROZEN_ON_SIX = {"mge": 3, "siamese_s": 3, "siamese_m": 3, "dial2vec": 3,
                 "augcl": -3, "context_response": -3, "utterance_sorting": -3}
"""The --freeze_layers each method runs with on 6 layers (others: 0, nothing frozen): the papers'
6 of 12 become the bottom half; "all but the top 3" fits as it is."""


@pytest.fixture(scope="module")
def six_layer_dir(tmp_path_factory):
    return tiny_bert.write_hf_safetensors_dir(tmp_path_factory.mktemp("six"), tiny_bert.random_pytorch_state(
        seed=1, config=SIX_LAYERS), config=SIX_LAYERS)


def _layer_weights(encoder, index):
    return [w.numpy() for w in encoder.bert.transformer_layers[index].weights]


@pytest.mark.parametrize("name", [name if name == "mge" else pytest.param(name, marks=pytest.mark.slow)
                                  for name in method_names()])  # mge adapts; the others with --runslow
def test_every_method_trains_on_six_layers_without_a_freezing_flag(name, tmp_path, six_layer_dir, monkeypatch,
                                                                   capsys):
    spec = get_method(name)
    write_dialogues(corpus(n=24, seed=2), str(tmp_path / "train.jsonl"))
    monkeypatch.setattr(cli, "FLAGS", training_flags(
        train_file=str(tmp_path / "train.jsonl"), model_dir=str(tmp_path / "model"), init_checkpoint=six_layer_dir,
        freeze_layers=None, max_steps=1, learning_rate=1e-2, max_length=24))
    assert cli.run(spec, spec.resolve()) == 0
    expected = FROZEN_ON_SIX.get(name, 0)
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: ") and f"freeze_layers {expected}," in out.splitlines()[0]
    assert ("the bottom 3 (half) are frozen" in out) == (expected == 3)
    record = json.loads((tmp_path / "model" / "method.json").read_text(encoding="utf-8"))
    assert record["training"]["freeze_layers"] == expected

    initial, trained = load_pretrained(six_layer_dir).encoder, load_pretrained(str(tmp_path / "model")).encoder
    frozen = {3: 3, -3: 3, 0: 0}[expected]
    for index in range(frozen):
        for before, after in zip(_layer_weights(initial, index), _layer_weights(trained, index)):
            np.testing.assert_array_equal(after, before, err_msg=f"layer {index} is frozen")
    assert any(not np.array_equal(before, after)
               for before, after in zip(_layer_weights(initial, 5), _layer_weights(trained, 5))), "the top layer trains"


def test_freeze_layers_fits_the_depth_only_when_not_given():
    mge, augcl, fgc = get_method("mge"), get_method("augcl"), get_method("fgc")
    assert fitted_freeze_layers(mge, None, 12, "bert") == (6, None)  # the paper's BERT-base
    value, note = fitted_freeze_layers(mge, None, 2, "tiny")
    assert value == 1 and "mge's paper freezes the embeddings and the bottom 6 layers; tiny has 2" in note
    value, note = fitted_freeze_layers(augcl, None, 2, "tiny")
    assert value == -2 and "trains only the top 3 layers; tiny has 2, so all of them train" in note
    assert fitted_freeze_layers(fgc, None, 6, "minilm") == (0, None)
    assert fitted_freeze_layers(mge, 5, 6, "minilm") == (5, None)
    with pytest.raises(ValueError, match=r"--freeze_layers=6 would freeze all 6 layers of minilm; give at most 5, "
                                         r"e.g. --freeze_layers=3 \(the bottom half\)"):
        fitted_freeze_layers(mge, 6, 6, "minilm")
    with pytest.raises(ValueError, match=r"--freeze_layers=-7 would train the top 7 layers of minilm, which has 6; "
                                         r"--freeze_layers=-6 trains them all"):
        fitted_freeze_layers(augcl, -7, 6, "minilm")
