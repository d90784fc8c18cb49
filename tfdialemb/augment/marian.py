"""One translation direction: a local OPUS-MT (MarianMT) directory read with transformers'
TensorFlow Marian classes, translating a list of texts in length-sorted batches.

An OPUS-MT directory (e.g. a local copy of Helsinki-NLP/opus-mt-en-ru, the released code's
forward model) holds config.json, the weights (tf_model.h5, which TFMarianMTModel reads as is and
is preferred, or model.safetensors in the PyTorch or TensorFlow layout, read without torch), the
tokenizer (source.spm, target.spm, vocab.json; tokenizer_config.json names the languages) and usually
generation_config.json. Nothing is downloaded: a missing directory or file is an error that names
it. A directory with only pytorch_model.bin needs PyTorch once, to convert it.

Decoding follows the released code's `transformers.pipeline("translation_xx_to_yy", model=...)`
(mylib/augmentations/back_translation.py): the model's own generation settings (for OPUS-MT:
`bad_words_ids` = the pad token, decoding starts from pad, num_beams), the texts padded per batch,
outputs decoded with special tokens skipped; the pipeline does not sort, which changes padding
only. Here beams (0: the model's own) and the length cap are arguments, and a text is truncated
to the length cap (the pipeline passes a longer one on and the model's 512 positions overflow).
Without the sacremoses package MarianTokenizer skips its Moses punctuation normalisation of the
source (it warns so).

Eager `generate` runs Python at every decoding step; with `xla` it runs as one XLA-compiled
function per padded batch shape (transformers' TF generate is written for it), which pays a
compile per shape (a few seconds for a tiny model) and then no Python per step, the choice for
corpora of thousands of dialogues. Both decode the same tokens (tests/augment).
"""
import json
import math
import os
from typing import List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from tfdialemb.encoders.huggingface import SafetensorsError, fill_transformers_model, read_safetensors
from tfdialemb.encoders.errors import CheckpointError

TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json")
WEIGHT_FILES = ("tf_model.h5", "model.safetensors")
"""What is read without PyTorch, tf_model.h5 first (TFMarianMTModel's own format)."""
XLA_MIN_LENGTH = 16
"""The shortest padded source under XLA; longer batches pad to 32, 64, ... up to the length cap."""
_EXPECTED = ("an OPUS-MT (MarianMT) directory: config.json, tf_model.h5 or model.safetensors, "
             "source.spm, target.spm, vocab.json (e.g. a local copy of Helsinki-NLP/opus-mt-en-ru)")


def language_code(recorded: Optional[str]) -> Optional[str]:
    """The language code a Marian tokenizer_config.json records, normalised: transformers'
    converter writes source_lang "opus-mt-en" for opus-mt-en-ru (the directory name minus the
    target), Tatoeba models write "eng_Latn"; → "en", "eng"."""
    if not recorded:
        return None
    return recorded.split("-")[-1].split("_")[0].lower()


def conflicting(code: Optional[str], expected: str) -> bool:
    """Whether two language codes certainly differ: both two-letter ISO 639-1 codes, unequal.
    Three-letter codes may name a group (zle, sla, gem) that contains the other, so they are
    not compared."""
    pair = (code or "", expected.lower())
    return all(len(c) == 2 and c.isalpha() for c in pair) and pair[0] != pair[1]


def check_marian_directory(directory: str) -> None:
    """Raises CheckpointError naming the directory, what it lacks and what it holds."""
    if not os.path.isdir(directory):
        raise CheckpointError(f"{directory}: translation model directory does not exist; expected {_EXPECTED}")
    found = sorted(os.listdir(directory))
    missing = [name for name in ("config.json",) + TOKENIZER_FILES if name not in found]
    if missing:
        raise CheckpointError(f"{directory}: lacks {', '.join(missing)}; found {found}; expected {_EXPECTED}")
    with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
        model_type = json.load(f).get("model_type")
    if model_type != "marian":
        raise CheckpointError(f"{directory}: config.json has model_type {model_type!r}, not 'marian'; "
                              f"expected {_EXPECTED}")
    if not any(name in found for name in WEIGHT_FILES):
        if "pytorch_model.bin" in found:
            raise CheckpointError(
                f"{directory}: holds only pytorch_model.bin, which needs PyTorch to read; found {found}. "
                "Convert it once where torch is installed: python -c \"from transformers import "
                f"TFMarianMTModel as M; M.from_pretrained('{directory}', from_pt=True)"
                f".save_pretrained('{directory}')\" (writes tf_model.h5)")
        raise CheckpointError(f"{directory}: lacks the weights ({' or '.join(WEIGHT_FILES)}); found {found}; "
                              f"expected {_EXPECTED}")


def _safetensors_layout(path: str) -> str:
    """"pt" or "tf": whose variable names and shapes a model.safetensors file holds."""
    try:
        return read_safetensors(path).metadata.get("format", "pt")
    except SafetensorsError as e:
        raise CheckpointError(f"{path}: not a readable safetensors file ({e})") from None


def load_marian_model(directory: str):
    """The TFMarianMTModel of a checked directory: tf_model.h5 when present, else model.safetensors."""
    import transformers  # pylint: disable=import-outside-toplevel

    if os.path.isfile(os.path.join(directory, "tf_model.h5")):
        return transformers.TFMarianMTModel.from_pretrained(directory, local_files_only=True, use_safetensors=False)
    path = os.path.join(directory, "model.safetensors")
    if _safetensors_layout(path) == "tf":
        return transformers.TFMarianMTModel.from_pretrained(directory, local_files_only=True, use_safetensors=True)
    config = transformers.MarianConfig.from_pretrained(directory, local_files_only=True)
    model = transformers.TFMarianMTModel(config)
    if os.path.isfile(os.path.join(directory, "generation_config.json")):
        model.generation_config = transformers.GenerationConfig.from_pretrained(directory, local_files_only=True)
    # What OPUS-MT repositories ship; transformers 4.57's TF from_pretrained fails on it. The
    # sinusoidal position tables, which PyTorch Marian may not save, keep their built values.
    fill_transformers_model(model, path, "Marian model", optional=(".embed_positions.",))
    return model


class MarianTranslator:
    """An OPUS-MT model and its tokenizer, from a local directory."""

    def __init__(self, directory: str, xla: bool = False):
        import transformers  # pylint: disable=import-outside-toplevel

        directory = os.fspath(directory)
        check_marian_directory(directory)
        self.directory = directory
        self.tokenizer = transformers.MarianTokenizer.from_pretrained(directory, local_files_only=True)
        try:
            self.model = load_marian_model(directory)
        except CheckpointError:
            raise
        except (OSError, ValueError) as e:
            first_line = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CheckpointError(f"{directory}: its weights cannot be read as a Marian model ({first_line}); "
                                  f"found {sorted(os.listdir(directory))}") from None
        self.source_language = language_code(self.tokenizer.source_lang)
        self.target_language = language_code(self.tokenizer.target_lang)
        self.language_tokens: Tuple[str, ...] = tuple(self.tokenizer.supported_language_codes)
        """`>>xx<<` tokens of a model that translates into several languages (one must lead
        each source text); empty for a single-target model such as opus-mt-en-ru."""
        self.xla = xla
        self._generate = tf.function(self.model.generate, jit_compile=True) if xla else self.model.generate

    def language_token(self, language: str) -> str:
        """The `>>language<<` token this multi-target model needs to translate into `language`."""
        token = f">>{language}<<"
        if token not in self.language_tokens:
            raise CheckpointError(f"{self.directory}: translates into several languages and {token} is not "
                                  f"one of them ({', '.join(self.language_tokens)})")
        return token

    def _batch(self, rows: Sequence[Sequence[int]], batch_size: int, max_length: int):
        """(input_ids, attention_mask) of one batch, padded to its longest row; under XLA to a
        power-of-two multiple of XLA_MIN_LENGTH and to `batch_size` rows (a lone </s> each), so
        that a run compiles a handful of shapes."""
        rows = list(rows)
        length = max(len(row) for row in rows)
        if self.xla:
            length = min(max_length, XLA_MIN_LENGTH * 2 ** max(0, math.ceil(math.log2(length / XLA_MIN_LENGTH))))
            rows += [[self.tokenizer.eos_token_id]] * (batch_size - len(rows))
        ids = np.full((len(rows), length), self.tokenizer.pad_token_id, np.int32)
        mask = np.zeros_like(ids)
        for r, row in enumerate(rows):
            ids[r, :len(row)] = row
            mask[r, :len(row)] = 1
        return ids, mask

    def translate(self, texts: Sequence[str], beams: int, batch_size: int, max_length: int,
                  language_token: Optional[str] = None) -> List[str]:
        """Each text translated (None `language_token` for a single-target model; 0 `beams`: the
        model's own generation config).

        Equal texts are translated once; the rest are sorted by token count, longest first, so
        each batch pads little, and the translations are put back in input order.
        """
        beams = beams or self.model.generation_config.num_beams
        unique = list(dict.fromkeys(texts))
        sources = [f"{language_token} {text}" for text in unique] if language_token else unique
        ids = self.tokenizer(sources, truncation=True, max_length=max_length)["input_ids"]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        translated = {}
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            input_ids, attention_mask = self._batch([ids[i] for i in rows], batch_size, max_length)
            output = self._generate(input_ids=tf.constant(input_ids), attention_mask=tf.constant(attention_mask),
                                    num_beams=beams, do_sample=False, max_length=max_length)
            for i, text in zip(rows, self.tokenizer.batch_decode(np.asarray(output), skip_special_tokens=True)):
                translated[unique[i]] = text
        return [translated[text] for text in texts]
