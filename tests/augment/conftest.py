"""Tiny fill-mask models for the token augmentations, built in the test from tiny_bert's BERT.

`controlled_mlm`'s head has a zero layer-norm scale and shift, so its logits at every masked
position are exactly its output bias: `set_probabilities` makes its softmax any distribution the
test names, whatever the input. `random_mlm_dir` holds a random head, whose predictions depend on
the input."""
import pytest

import tiny_bert
from tiny_mlm import probabilities_bias
from tfdialemb.augment.fill_mask import FillMaskModel


@pytest.fixture(scope="session")
def random_mlm_dir(tmp_path_factory, tiny_state):
    """A Hugging Face BertForMaskedLM directory (model.safetensors with cls.predictions.*)."""
    return tiny_bert.write_hf_safetensors_dir(tmp_path_factory.mktemp("mlm"),
                                              tiny_bert.with_heads(tiny_state, tiny_bert.random_mlm_head()))


@pytest.fixture(scope="session")
def random_mlm(random_mlm_dir):
    return FillMaskModel.load(random_mlm_dir)


@pytest.fixture(scope="session")
def controlled_mlm(tmp_path_factory, tiny_state):
    head = tiny_bert.random_mlm_head()
    head["cls.predictions.transform.LayerNorm.weight"][:] = 0
    head["cls.predictions.transform.LayerNorm.bias"][:] = 0
    directory = tiny_bert.write_hf_safetensors_dir(tmp_path_factory.mktemp("controlled_mlm"),
                                                   tiny_bert.with_heads(tiny_state, head))
    return FillMaskModel.load(directory)


@pytest.fixture
def set_probabilities(controlled_mlm):
    """Sets `controlled_mlm`'s distribution at every masked position: {token: probability}."""
    return lambda probabilities: controlled_mlm.head.bias.assign(probabilities_bias(probabilities))


@pytest.fixture
def model_inputs(monkeypatch):
    """`model_inputs(operation, dialogues)`: the (sequences, positions, k) that `operation.augment`
    gives its fill-mask model, in its one call."""

    def run(operation, dialogues):
        calls = []
        top_k = operation.model.top_k
        monkeypatch.setattr(operation.model, "top_k", lambda sequences, positions, k, batch_size: calls.append(
            (sequences, positions, k)) or top_k(sequences, positions, k, batch_size))
        operation.augment(dialogues)
        [call] = calls
        return call

    return run
