"""Builds tiny BERT checkpoints in the layouts the loaders read, independently of tfdialemb.

Weights start as a PyTorch-layout state dict of random numpy arrays; transformers' own
PyTorch→TF loader fills the reference TFBertModel, and the Google TF1 checkpoint is written
under google-research/bert's variable names, so none of the project's mapping code is reused.
"""
import json
import os

import numpy as np

WORDS = (
    "[PAD] [UNK] [CLS] [SEP] [MASK] [unused0] [unused1] [unused2] [unused3] [unused4] [unused5] "
    "[unused6] [unused7] [unused8] [unused9] the a is of to and hello world good morning how are "
    "you fine thanks book taxi hotel please need cafe naive resume un ##able ##ing ##ed ##s ##ly "
    "help ##ful do ##es not work ' . , ! ? ( ) : ; - \" 中 文 你 好 ¿ e ##e ##r # $ % & * + / < = > "
    "@ [ ] ^ _ ` { | } ~ … — 1 2 3 ##1 ##2 x ##x"
).split()
HF_CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "vocab_size": len(WORDS),
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 37,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    "initializer_range": 0.02,
    "layer_norm_eps": 1e-12,
    "position_embedding_type": "absolute",
}


def random_pytorch_state(seed=0, config=HF_CONFIG):
    rng = np.random.default_rng(seed)
    h, i = config["hidden_size"], config["intermediate_size"]

    def rand(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    state = {
        "embeddings.word_embeddings.weight": rand(config["vocab_size"], h),
        "embeddings.position_embeddings.weight": rand(config["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": rand(config["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": 1 + rand(h, scale=0.1),
        "embeddings.LayerNorm.bias": rand(h, scale=0.1),
        "pooler.dense.weight": rand(h, h),
        "pooler.dense.bias": rand(h),
    }
    for n in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):
            state[p + name + ".weight"] = rand(h, h)
            state[p + name + ".bias"] = rand(h)
        state[p + "intermediate.dense.weight"] = rand(i, h)
        state[p + "intermediate.dense.bias"] = rand(i)
        state[p + "output.dense.weight"] = rand(h, i)
        state[p + "output.dense.bias"] = rand(h)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            state[p + norm + ".weight"] = 1 + rand(h, scale=0.1)
            state[p + norm + ".bias"] = rand(h, scale=0.1)
    return state


def write_vocab(directory, words=WORDS):
    with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(w + "\n" for w in words))


def write_hf_safetensors_dir(directory, state, config=HF_CONFIG, prefix=""):
    from safetensors.numpy import save_file

    directory = str(directory)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    save_file({prefix + k: v for k, v in state.items()}, os.path.join(directory, "model.safetensors"),
              metadata={"format": "pt"})
    write_vocab(directory)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True}, f)
    return directory


def random_mlm_head(seed=7, config=HF_CONFIG):
    """Random BertForMaskedLM head tensors, PyTorch names and layout (dense weight [out, in])."""
    rng = np.random.default_rng(seed)
    h = config["hidden_size"]

    def rand(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return {
        "cls.predictions.transform.dense.weight": rand(h, h),
        "cls.predictions.transform.dense.bias": rand(h),
        "cls.predictions.transform.LayerNorm.weight": 1 + rand(h, scale=0.1),
        "cls.predictions.transform.LayerNorm.bias": rand(h, scale=0.1),
        "cls.predictions.bias": rand(config["vocab_size"]),
    }


def with_heads(state, head, nsp=False):
    """The BertForMaskedLM state dict of encoder `state` and `head` (BertForPreTraining's with `nsp`)."""
    full = {"bert." + k: v for k, v in state.items()}
    full.update(head)
    if nsp:
        full["cls.seq_relationship.weight"] = np.ones([2, HF_CONFIG["hidden_size"]], np.float32)
        full["cls.seq_relationship.bias"] = np.zeros([2], np.float32)
    return full


def transformers_model(state, config=HF_CONFIG, model_class="TFBertModel"):
    """transformers' `model_class` holding PyTorch-layout `state`, loaded by transformers' own code."""
    import transformers
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    model = getattr(transformers, model_class)(transformers.BertConfig(**config))
    model, info = load_pytorch_state_dict_in_tf2_model(model, dict(state), output_loading_info=True)
    assert not info["missing_keys"] and not info["mismatched_keys"], info
    return model


def write_hf_h5_dir(directory, model):
    directory = str(directory)
    model.save_pretrained(directory)  # config.json + tf_model.h5, written by transformers
    write_vocab(directory)
    return directory


def google_names(state, num_layers):
    """google-research/bert modeling.py names; dense kernels are [in, out]."""
    out = {
        "bert/embeddings/word_embeddings": state["embeddings.word_embeddings.weight"],
        "bert/embeddings/position_embeddings": state["embeddings.position_embeddings.weight"],
        "bert/embeddings/token_type_embeddings": state["embeddings.token_type_embeddings.weight"],
        "bert/embeddings/LayerNorm/gamma": state["embeddings.LayerNorm.weight"],
        "bert/embeddings/LayerNorm/beta": state["embeddings.LayerNorm.bias"],
        "bert/pooler/dense/kernel": state["pooler.dense.weight"].T,
        "bert/pooler/dense/bias": state["pooler.dense.bias"],
    }
    for n in range(num_layers):
        src, dst = f"encoder.layer.{n}.", f"bert/encoder/layer_{n}/"
        pairs = {
            "attention.self.query": "attention/self/query",
            "attention.self.key": "attention/self/key",
            "attention.self.value": "attention/self/value",
            "attention.output.dense": "attention/output/dense",
            "intermediate.dense": "intermediate/dense",
            "output.dense": "output/dense",
        }
        for a, b in pairs.items():
            out[dst + b + "/kernel"] = state[src + a + ".weight"].T
            out[dst + b + "/bias"] = state[src + a + ".bias"]
        for a, b in {"attention.output.LayerNorm": "attention/output/LayerNorm",
                     "output.LayerNorm": "output/LayerNorm"}.items():
            out[dst + b + "/gamma"] = state[src + a + ".weight"]
            out[dst + b + "/beta"] = state[src + a + ".bias"]
    return out


def write_google_dir(directory, state, config=HF_CONFIG, with_optimizer_slots=True):
    """A TF1 name-based checkpoint as google-research/bert's run_pretraining.py writes it."""
    import tensorflow as tf

    directory = str(directory)
    tensors = google_names(state, config["num_hidden_layers"])
    if with_optimizer_slots:
        tensors.update({k + "/adam_m": np.zeros_like(v) for k, v in list(tensors.items())[:3]})
        tensors["global_step"] = np.int64(1000)
        tensors["cls/predictions/output_bias"] = np.zeros(config["vocab_size"], np.float32)
    with tf.Graph().as_default():
        variables = {name: tf.compat.v1.Variable(value, name=name) for name, value in tensors.items()}
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, os.path.join(directory, "bert_model.ckpt"), write_meta_graph=False)
    google_config = {k: v for k, v in config.items()
                     if k not in ("architectures", "model_type", "layer_norm_eps",
                                  "position_embedding_type")}
    google_config["hidden_act"] = "gelu"
    with open(os.path.join(directory, "bert_config.json"), "w") as f:
        json.dump(google_config, f)
    write_vocab(directory)
    # google-research/bert writes a `checkpoint` state file next to the weights.
    with open(os.path.join(directory, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "bert_model.ckpt"\n')
    return directory
