"""The shipped flagfiles carry the papers' data preparation."""
import os

import pytest

FLAGS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "flags")


def _flag_values(name: str) -> dict:
    with open(os.path.join(FLAGS_DIR, f"{name}.cfg"), encoding="utf-8") as f:
        pairs = [line.strip()[2:].split("=", 1) for line in f if line.startswith("--")]
    return {key: value for key, value in pairs}


@pytest.mark.parametrize("name", ["jddc", "ecd", "mge_jddc", "mge_ecd"])
def test_jddc_and_ecd_recipes_drop_dialogues_under_four_turns(name):
    """DialogueCSE Sec. 5.1.1: dialogues of fewer than 4 turns are dropped from JDDC and ECD, in
    continued pre-training and in the contrastive stage alike."""
    assert _flag_values(name)["min_turns"] == "4"
