"""Short-term-planning distractors sampled from a local causal language model, as the paper's 100
DialoGPT candidates (triple-encoders Sec. 5: DialoGPT, top_p = temperature = 0.8), through
transformers' TensorFlow classes.

The model directory is a Hugging Face causal LM (e.g. DialoGPT, a GPT-2): `config.json`,
`model.safetensors` in the PyTorch layout, and its tokenizer files (vocab.json and merges.txt, or
tokenizer.json). The TensorFlow model is built from the config and its variables are filled from
the safetensors file one tensor at a time, by name (transformers'
`load_pytorch_state_dict_in_tf2_model` on numpy arrays: PyTorch is not needed).

Prompting and sampling follow UKPLab/acl2024-triple-encoders triple_encoders/TripleEncodersForSTP.py:
`add_transformer_candidates` prompts with every history utterance followed by the eos token;
`generate_llm_candidates` samples `generate(do_sample=True, top_p, temperature,
num_return_sequences=<distractors>, max_length=1000, pad_token_id=eos)` (max_length counts the
prompt) and decodes each continuation with special tokens skipped. Here a sample is also
stripped, and a blank one (the model ended at once) is left out and counted.

Seeded: TensorFlow's global seed is set from (seed, record id) before each record is sampled, so a
record's distractors do not depend on the other records of the set. (transformers' `seed`
argument of `generate` would reuse one stateless seed at every decoding step.)
"""
import contextlib
import dataclasses
import os
import zlib
from typing import Any, List, Sequence

import numpy as np
import tensorflow as tf
import transformers
from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

from tfdialemb.encoders.huggingface import SafetensorsError, read_safetensors

TOP_P = 0.8
TEMPERATURE = 0.8
MAX_LENGTH = 1000
"""The released sampling settings (the paper's top_p and temperature; max_length in tokens)."""
NEEDED_FILES = ("config.json", "model.safetensors")


def record_seed(seed: int, record_id: str) -> int:
    """TensorFlow's global seed for sampling record `record_id`'s distractors."""
    return int(np.random.SeedSequence([seed, zlib.crc32(record_id.encode("utf-8"))])
               .generate_state(1)[0])


@contextlib.contextmanager
def _quiet_transformers():
    """transformers' warnings off: loading lists the file's unused tensors, and with pad = eos (as
    released) `generate` warns of right padding on every prompt, each utterance ending with eos."""
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers.logging.set_verbosity(verbosity)


def load_causal_lm(directory: str):
    """(TF causal LM, tokenizer) of a local model directory; a ValueError says what is wrong."""
    for name in NEEDED_FILES:
        if not os.path.isfile(os.path.join(directory, name)):
            raise ValueError(f"{directory}: no {name}; a causal LM directory holds "
                             f"{' and '.join(NEEDED_FILES)} (PyTorch layout) and its tokenizer")
    config = transformers.AutoConfig.from_pretrained(directory)
    try:
        model = transformers.TFAutoModelForCausalLM.from_config(config)
    except ValueError:
        raise ValueError(f"{directory}: {config.model_type!r} has no TensorFlow causal LM class "
                         "in transformers") from None
    weights = os.path.join(directory, "model.safetensors")
    try:
        # A variable missing from the file raises; the file's extra tensors (the tied lm_head
        # copy, attention-mask buffers) are not needed.
        with _quiet_transformers():
            load_pytorch_state_dict_in_tf2_model(model, read_safetensors(weights))
    except (AttributeError, ValueError, tf.errors.InvalidArgumentError, SafetensorsError) as e:
        first_line = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ValueError(f"{weights}: not the weights of this {config.model_type} "
                         f"({first_line})") from None
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    if tokenizer.eos_token is None:
        raise ValueError(f"{directory}: the tokenizer has no eos token to end the utterances with")
    return model, tokenizer


@dataclasses.dataclass
class CausalLmSampler:
    """Samples the distractors of STP records from the causal LM in `directory` (module
    docstring); the settings are checked before the model is loaded."""

    directory: str
    top_p: float = TOP_P
    temperature: float = TEMPERATURE
    max_length: int = MAX_LENGTH
    seed: int = 0
    model: Any = dataclasses.field(init=False, repr=False)
    tokenizer: Any = dataclasses.field(init=False, repr=False)

    def __post_init__(self):
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.temperature <= 0:
            raise ValueError(f"temperature must be positive, got {self.temperature}")
        if self.max_length < 2:
            raise ValueError(f"max_length must be at least 2 tokens, got {self.max_length}")
        self.model, self.tokenizer = load_causal_lm(self.directory)

    @property
    def source(self) -> str:
        """The distractor source recorded in the set."""
        return (f"model:{os.path.abspath(self.directory)} top_p={self.top_p} "
                f"temperature={self.temperature} max_length={self.max_length} seed={self.seed}")

    def prompt(self, history: Sequence[str]) -> tf.Tensor:
        """[1, T] token ids: every utterance followed by the eos token."""
        return self.tokenizer.encode("".join(u + self.tokenizer.eos_token for u in history),
                                     return_tensors="tf")

    def sample(self, record_id: str, history: Sequence[str], count: int) -> List[str]:
        """`count` sampled continuations of `history`, decoded and stripped, blanks left out."""
        prompt = self.prompt(history)
        if prompt.shape[-1] >= self.max_length:
            raise ValueError(f"record {record_id!r}: its history is {prompt.shape[-1]} tokens, "
                             f"no room to sample within max_length {self.max_length}")
        tf.random.set_seed(record_seed(self.seed, record_id))
        with _quiet_transformers():
            output = self.model.generate(
                prompt, do_sample=True, top_p=self.top_p, temperature=self.temperature,
                num_return_sequences=count, max_length=self.max_length,
                pad_token_id=self.tokenizer.eos_token_id)
        texts = (self.tokenizer.decode(row[prompt.shape[-1]:], skip_special_tokens=True).strip()
                 for row in output.numpy())
        return [text for text in texts if text]
