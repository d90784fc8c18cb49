"""STP distractors sampled from a local causal LM (triple-encoders Sec. 5; UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForSTP.py:add_transformer_candidates): a tiny random GPT-2 and a
byte-level BPE built here, its samples checked against transformers' `generate` called directly on
the model in memory."""
import re

import numpy as np
import pytest
import tensorflow as tf
import tokenizers
from safetensors.numpy import save_file
from transformers import GPT2Config, GPT2TokenizerFast, TFGPT2LMHeadModel

from data_prep.build_stp_set import build_stp_set
from data_prep.causal_lm_distractors import CausalLmSampler, record_seed
from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.eval.short_term_planning import evaluate_short_term_planning, read_planning_records

EOS = "<|endoftext|>"
TURNS = ["hello there", "how are you", "i am fine thanks", "what about you", "good morning"]


def _pytorch_name(tf_name):
    """GPT2LMHeadModel's state-dict name of a TFGPT2LMHeadModel variable, written out by hand:
    tfgpt2lm_head_model/transformer/h_._0/ln_1/gamma:0 → transformer.h.0.ln_1.weight."""
    name = re.sub(r"h_\._(\d+)", r"h.\1", tf_name.split("/", 1)[1].replace(":0", ""))
    name = re.sub(r"/(embeddings|gamma)$", "/weight", re.sub(r"/beta$", "/bias", name))
    return name.replace("/", ".")


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    """(directory with config.json, model.safetensors in the PyTorch layout, vocab.json and
    merges.txt; the TF model those weights come from)."""
    directory = tmp_path_factory.mktemp("tiny_gpt2")
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator(TURNS * 4, vocab_size=300, min_frequency=1, special_tokens=[EOS])
    bpe.save_model(str(directory))
    eos = bpe.token_to_id(EOS)
    config = GPT2Config(vocab_size=bpe.get_vocab_size(), n_positions=64, n_embd=16, n_layer=1,
                        n_head=2, bos_token_id=eos, eos_token_id=eos)
    config.save_pretrained(str(directory))
    tf.random.set_seed(3)
    model = TFGPT2LMHeadModel(config)
    model(model.dummy_inputs)
    state = {_pytorch_name(w.name): np.reshape(w.numpy(), [-1]) if w.name.endswith("bias:0")
             else w.numpy() for w in model.weights}
    # As GPT2LMHeadModel saves them: the tied head, and the attention mask buffer of older files.
    state["lm_head.weight"] = state["transformer.wte.weight"]
    state["transformer.h.0.attn.bias"] = np.tril(np.ones([1, 1, 64, 64], np.float32))
    save_file(state, str(directory / "model.safetensors"), metadata={"format": "pt"})
    return directory, model


def _direct_samples(directory, model, history, seed, count, max_length):
    """The released generate_llm_candidates on the model in memory: history + eos each, sampled
    with top_p = temperature = 0.8, the continuation decoded without special tokens."""
    tokenizer = GPT2TokenizerFast(str(directory / "vocab.json"), str(directory / "merges.txt"))
    prompt = tf.constant([tokenizer.encode("".join(u + EOS for u in history))])
    eos = tokenizer.convert_tokens_to_ids(EOS)
    tf.random.set_seed(seed)
    output = model.generate(prompt, max_length=max_length, do_sample=True, pad_token_id=eos,
                            top_p=0.8, temperature=0.8, num_return_sequences=count).numpy()
    texts = [tokenizer.decode(row[prompt.shape[-1]:], skip_special_tokens=True).strip()
             for row in output]
    return tuple(text for text in texts if text)


def test_distractors_are_seeded_samples_of_the_model(tmp_path, tiny_gpt2):
    directory, model = tiny_gpt2
    dialogues = str(tmp_path / "dialogues.jsonl")
    write_dialogues([Dialogue(f"d{i}", tuple(Turn("ab"[t % 2], TURNS[(t + i) % 5])
                                             for t in range(4))) for i in range(2)], dialogues)
    sampler = CausalLmSampler(str(directory), max_length=20, seed=5)
    output = str(tmp_path / "stp.jsonl")
    counts = build_stp_set(dialogues, output, history_lengths=[2], goal_distances=[1],
                           distractors=4, sampler=sampler)
    records = list(read_planning_records(output))
    assert [r.id for r in records] == ["d0/h2/g1", "d1/h2/g1"]
    assert counts["blank_samples"] == sum(4 - len(r.distractors) for r in records)
    for record in records:
        assert record.distractors == _direct_samples(
            directory, model, record.history, record_seed(5, record.id), 4, 20)
        assert record.candidate not in record.distractors
        assert record.distractor_source == sampler.source
    assert sampler.source == (f"model:{directory} top_p=0.8 temperature=0.8 max_length=20 "
                              "seed=5")
    assert records[0].distractors != _direct_samples(
        directory, model, records[0].history, record_seed(6, records[0].id), 4, 20)

    def embed(texts):
        return np.stack([np.random.default_rng(len(t)).normal(size=4) for t in texts])

    assert evaluate_short_term_planning(output, embed, "ccl")["distractor_sources"] == [
        sampler.source]


def test_bad_model_directories(tmp_path, tiny_gpt2):
    with pytest.raises(ValueError, match="no config.json; a causal LM directory holds"):
        CausalLmSampler(str(tmp_path))
    with pytest.raises(ValueError, match="top_p must be in"):
        CausalLmSampler(str(tiny_gpt2[0]), top_p=0.0)
    sampler = CausalLmSampler(str(tiny_gpt2[0]), max_length=5)
    with pytest.raises(ValueError, match="no room to sample within max_length 5"):
        sampler.sample("x", TURNS, 2)
