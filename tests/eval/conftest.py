"""Fixtures of the probe tests: a tiny BERT with four layers (so hidden states -2..-4 exist) and a
hand-made augmented file."""
import pytest

import tiny_bert
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues

FOUR_LAYERS = dict(tiny_bert.HF_CONFIG, num_hidden_layers=4)
SOURCE_TEXTS = ("hello world", "good morning", "how are you", "fine thanks", "book a taxi", "hotel please")


@pytest.fixture(scope="session")
def four_layer_state():
    return tiny_bert.random_pytorch_state(seed=1, config=FOUR_LAYERS)


@pytest.fixture(scope="session")
def four_layer_bert(tmp_path_factory, four_layer_state):
    return tiny_bert.write_hf_safetensors_dir(tmp_path_factory.mktemp("bert4"), four_layer_state, FOUR_LAYERS)


def _views(index):
    """An original and its insert, replace, crop, shuffle and translate views, made by hand."""
    texts = SOURCE_TEXTS[index % 3:] + SOURCE_TEXTS[:index % 3]
    turns = [Turn("ab"[k % 2], text) for k, text in enumerate(texts)]
    source = f"s{index}"
    made = {"insert": [Turn(t.speaker, t.text + " the") for t in turns],
            "replace": [Turn(t.speaker, t.text.replace("o", "a")) for t in turns],
            "crop": turns[:2], "shuffle": turns[3:] + turns[:3], "translate": turns[::-1]}
    return [Dialogue(source, tuple(turns), {"augmentations": []})] + [
        Dialogue(f"{source}/{name}", tuple(view), {"augmentations": [name], "source_id": source})
        for name, view in made.items()]


@pytest.fixture(scope="session")
def augmented_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("augmented") / "augmented.jsonl"
    write_dialogues([view for index in range(4) for view in _views(index)], str(path))
    return path
