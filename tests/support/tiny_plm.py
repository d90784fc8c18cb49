"""Tiny random RoBERTa and T5 checkpoint directories built offline, as Hugging Face saves them.

A reference transformers TF model gets random weights, and each weight is written to
model.safetensors under its PyTorch name and layout (Linear weights [out, in]), as a PyTorch
checkpoint stores it. RoBERTa is written as a masked-LM checkpoint: `roberta.` prefixes, no pooler,
an `lm_head` tensor. T5 carries a decoder tensor, which the encoder does not read. The tokenizers
are trained or declared in place: a byte-level BPE for RoBERTa, a Unigram tokenizer.json for T5.
"""
import os

import numpy as np

TEXTS = ["hello world how are you", "good morning fine thanks", "book a taxi to the hotel please",
         "I need help with the cafe"]
T5_PIECES = ["▁hello", "▁world", "▁good", "▁morning", "▁book", "▁taxi", "▁hotel", "▁please", "▁a",
             "▁the", "▁", "h", "e", "l", "o", "w", "r", "d", "s", "t", "a", "i", "n", "c", "k", "p",
             "m", "g", "u", "y", "f", "x", "b"]


def _randomize(model, seed):
    """Every variable of a built model drawn afresh, so no weight keeps a telltale 0 or 1."""
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        weight.assign(rng.normal(0.0, 0.3, weight.shape).astype(np.float32))


def _write_pytorch_layout(model, path, prefix="", drop=(), extra=()):
    from safetensors.numpy import save_file
    from transformers.modeling_tf_pytorch_utils import TransposeType, convert_tf_weight_name_to_pt_weight_name

    state = {}
    for weight in model.weights:
        name, transpose = convert_tf_weight_name_to_pt_weight_name(weight.name, tf_weight_shape=weight.shape)
        if any(part in name for part in drop):
            continue
        value = weight.numpy()
        state[prefix + name] = np.ascontiguousarray(value.T if transpose is TransposeType.SIMPLE else value)
    for name, shape in extra:
        state[name] = np.zeros(shape, np.float32)
    save_file(state, os.path.join(path, "model.safetensors"))


def roberta_dir(path, seed=0):
    """(directory, reference TFRobertaModel) of a 1-layer RoBERTa, hidden size 8, 32 positions."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaTokenizerFast, TFRobertaModel

    path = str(path)
    os.makedirs(path, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(TEXTS, vocab_size=300, min_frequency=1, show_progress=False,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(path)
    tokenizer = RobertaTokenizerFast(vocab_file=os.path.join(path, "vocab.json"),
                                     merges_file=os.path.join(path, "merges.txt"))
    tokenizer.save_pretrained(path)
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=12, max_position_embeddings=34, type_vocab_size=1,
                           pad_token_id=1, bos_token_id=0, eos_token_id=2)
    config.save_pretrained(path)
    model = TFRobertaModel(config)
    model(model.dummy_inputs)
    _randomize(model, seed)
    _write_pytorch_layout(model, path, drop=("pooler",), extra=[("lm_head.bias", (config.vocab_size,))])
    return path, model


def t5_dir(path, seed=0):
    """(directory, reference TFT5EncoderModel) of a 1-block T5 encoder, d_model 8."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import T5Config, T5TokenizerFast, TFT5EncoderModel

    path = str(path)
    os.makedirs(path, exist_ok=True)
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)] + [(piece, -1.0 - i) for i, piece in enumerate(T5_PIECES)]
    unigram = Tokenizer(models.Unigram(vocab, unk_id=2))
    unigram.pre_tokenizer = pre_tokenizers.Metaspace()
    unigram.decoder = decoders.Metaspace()
    unigram.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                           special_tokens=[("</s>", 1)])
    T5TokenizerFast(tokenizer_object=unigram, eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
                    extra_ids=0).save_pretrained(path)
    config = T5Config(vocab_size=len(vocab), d_model=8, d_kv=4, d_ff=12, num_layers=1, num_heads=2,
                      relative_attention_num_buckets=8, relative_attention_max_distance=16,
                      feed_forward_proj="relu", pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    config.save_pretrained(path)
    model = TFT5EncoderModel(config)
    model(model.dummy_inputs)
    _randomize(model, seed)
    _write_pytorch_layout(model, path, extra=[("decoder.final_layer_norm.weight", (8,))])
    return path, model
