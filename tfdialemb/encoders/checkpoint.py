"""Loads an encoder with its tokenizer from any checkpoint directory, and saves the project's own.

The kind is chosen by what the directory holds, and the vocabulary always travels with the weights:
  - tfdialemb: `tfdialemb_encoder.json`, `vocab.txt`, a TF checkpoint (`checkpoint`, `ckpt-N.*`)
    whose root holds the encoder under `encoder` (what `save_pretrained` and training write);
  - Hugging Face BERT: `config.json`, `model.safetensors` (PyTorch layout) or `tf_model.h5`,
    `vocab.txt` (lower-casing from `tokenizer_config.json` when present);
  - Google TF1 BERT: `bert_config.json`, `bert_model.ckpt.index` / `.data-*`, `vocab.txt`.
"""
import contextlib
import dataclasses
import glob
import json
import logging
import os
import re
from typing import Any, Dict, Optional, Tuple

import tensorflow as tf

from tfdialemb.encoders.config import EncoderConfig, read_json
from tfdialemb.encoders.encoder import Encoder
from tfdialemb.encoders.google import read_google_checkpoint
from tfdialemb.encoders.huggingface import pytorch_to_model_garden, read_safetensors, read_tf_h5
from tfdialemb.encoders.errors import CheckpointError
from tfdialemb.encoders.weights import DAMAGED_CHECKPOINT_ERRORS, assign_bert_weights, created_from
from tfdialemb.core.files import atomic_directory, atomic_open, file_sha256
from tfdialemb.text.tokenizer import BertTokenizer, read_vocab

OWN_CONFIG = "tfdialemb_encoder.json"
FORMAT_VERSION = 1
KINDS = ("tfdialemb", "huggingface", "google")
_EXPECTED = (
    "one of: tfdialemb (tfdialemb_encoder.json, vocab.txt, checkpoint + ckpt-N.*); "
    "Hugging Face BERT (config.json, model.safetensors or tf_model.h5, vocab.txt); "
    "Google TF1 BERT (bert_config.json, bert_model.ckpt.index and .data-*, vocab.txt)"
)
_log = logging.getLogger(__name__)


@dataclasses.dataclass
class Pretrained:
    encoder: Encoder
    tokenizer: BertTokenizer
    kind: str
    directory: str


def detect_kind(directory: str) -> str:
    """Which of KINDS `directory` holds; a CheckpointError names what is missing otherwise."""
    if not os.path.isdir(directory):
        raise CheckpointError(f"{directory}: checkpoint directory does not exist; expected {_EXPECTED}")
    found = sorted(os.listdir(directory))
    has = lambda name: name in found  # noqa: E731

    def require(kind, needed):
        missing = [n for n in needed if not (has(n) if isinstance(n, str) else any(map(has, n)))]
        if missing:
            names = [n if isinstance(n, str) else " or ".join(n) for n in missing]
            raise CheckpointError(
                f"{directory}: looks like a {kind} checkpoint but lacks {', '.join(names)}; "
                f"found {found}"
            )

    if has(OWN_CONFIG):
        require("tfdialemb", ["vocab.txt", "checkpoint"])
        return "tfdialemb"
    if has("config.json"):
        if has("pytorch_model.bin") and not (has("model.safetensors") or has("tf_model.h5")):
            raise CheckpointError(
                f"{directory}: holds only pytorch_model.bin, which needs torch to read; convert it "
                "to model.safetensors (safetensors.torch.save_file) or tf_model.h5 elsewhere"
            )
        require("Hugging Face BERT", ["vocab.txt", ("model.safetensors", "tf_model.h5")])
        return "huggingface"
    if has("bert_config.json"):
        require("Google TF1 BERT", ["vocab.txt"])
        google_checkpoint_prefix(directory)
        return "google"
    raise CheckpointError(f"{directory}: not a checkpoint directory; expected {_EXPECTED}; found {found}")


def load_tokenizer(directory: str, lower_case: Optional[bool] = None) -> BertTokenizer:
    """The tokenizer stored with a checkpoint of any kind, without reading its weights.

    `lower_case` overrides the checkpoint's casing.
    """
    directory = os.fspath(directory)
    kind = detect_kind(directory)
    vocab = read_vocab(os.path.join(directory, "vocab.txt"))
    if kind == "tfdialemb":
        tokenizer_config = dict(_own_config(directory)["tokenizer"])
        if lower_case is not None:
            tokenizer_config["lower_case"] = lower_case
        return BertTokenizer(vocab, **tokenizer_config)
    if lower_case is None:
        lower_case = _infer_lower_case(directory, vocab)
    return BertTokenizer(vocab, lower_case=lower_case)


def load_pretrained(
    directory: str,
    lower_case: Optional[bool] = None,
    role_vocab_size: Optional[int] = None,
    turn_vocab_size: Optional[int] = None,
) -> Pretrained:
    """Builds the encoder and tokenizer stored in `directory`, whatever its kind.

    `lower_case` overrides the checkpoint's casing. Role / turn embedding sizes add PLATO-style
    input embeddings to an external checkpoint (randomly initialised); a tfdialemb checkpoint
    restores the ones it was saved with.
    """
    directory = os.fspath(directory)
    tokenizer = load_tokenizer(directory, lower_case)
    kind = detect_kind(directory)
    extra = {
        k: v
        for k, v in (("role_vocab_size", role_vocab_size), ("turn_vocab_size", turn_vocab_size))
        if v is not None
    }
    if kind == "tfdialemb":
        saved_config = load_encoder_config(directory)
        encoder = Encoder(saved_config.replace(**extra), random_init=False).build_variables()
        _restore_own(encoder, latest_own_checkpoint(directory), saved_config)
    else:
        config = load_encoder_config(directory).replace(**extra)
        if config.vocab_size != tokenizer.vocab_size:
            config_file = "config.json" if kind == "huggingface" else "bert_config.json"
            raise CheckpointError(
                f"{directory}: vocab.txt has {tokenizer.vocab_size} tokens but {config_file} says "
                f"vocab_size {config.vocab_size}"
            )
        encoder = _build_external(Encoder(config, random_init=False), directory, kind)
    _log.debug("loaded %s checkpoint %s (lower_case=%s)", kind, directory, tokenizer.lower_case)
    return Pretrained(encoder=encoder, tokenizer=tokenizer, kind=kind, directory=directory)


def load_encoder_config(directory: str) -> EncoderConfig:
    """The encoder's shape as the checkpoint directory of any kind describes it, without weights."""
    directory = os.fspath(directory)
    kind = detect_kind(directory)
    if kind == "tfdialemb":
        return EncoderConfig.from_dict(_own_config(directory)["encoder"])
    if kind == "huggingface":
        config_file = os.path.join(directory, "config.json")
        return EncoderConfig.from_huggingface(read_json(config_file), config_file)
    config_file = os.path.join(directory, "bert_config.json")
    return EncoderConfig.from_google(read_json(config_file), config_file)


def _own_config(directory: str) -> dict:
    saved = read_json(os.path.join(directory, OWN_CONFIG))
    if saved.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{directory}/{OWN_CONFIG}: format_version {saved.get('format_version')} is not "
            f"{FORMAT_VERSION}"
        )
    return saved


def write_model_files(directory: str, encoder: Encoder, tokenizer: BertTokenizer) -> None:
    """Writes the config and vocabulary that make `directory` a tfdialemb checkpoint directory."""
    os.makedirs(directory, exist_ok=True)
    payload = {
        "format_version": FORMAT_VERSION,
        "encoder": encoder.encoder_config.to_dict(),
        "tokenizer": tokenizer.config(),
    }
    with atomic_open(os.path.join(directory, OWN_CONFIG)) as f:
        f.write(json.dumps(payload, indent=2) + "\n")
    with atomic_open(os.path.join(directory, "vocab.txt")) as f:
        f.write("".join(t + "\n" for t in tokenizer.vocab))


@contextlib.contextmanager
def checkpoint_directory(directory: str, encoder: Encoder, tokenizer: BertTokenizer, number: int = 0,
                         replace: bool = False, **objects):
    """Writes a tfdialemb checkpoint directory (config, vocabulary, `ckpt-NUMBER` whose root holds
    `encoder` and `objects`) in a staging sibling and yields it for more files; renamed onto
    `directory` when the block ends, replacing it only with `replace`."""
    with atomic_directory(directory, replace=replace) as staging:
        write_model_files(staging, encoder, tokenizer)
        # CheckpointManager records relative paths, so the directory can be renamed and moved.
        tf.train.CheckpointManager(
            tf.train.Checkpoint(encoder=encoder, **objects), staging, max_to_keep=1
        ).save(checkpoint_number=number)
        yield staging


def save_pretrained(encoder: Encoder, tokenizer: BertTokenizer, directory: str) -> str:
    """Saves encoder weights, config and vocabulary as a tfdialemb checkpoint directory.

    Everything is written to a temporary sibling first and renamed into place when complete, so an
    interrupted save never leaves a directory that loads half-written weights.
    """
    directory = os.path.abspath(directory)
    if os.path.exists(directory) and os.listdir(directory):
        raise FileExistsError(f"{directory}: exists and is not empty")
    with checkpoint_directory(directory, encoder, tokenizer):
        pass
    return directory


def load_own_encoder(directory: str, restore: bool = True) -> Tuple[Encoder, BertTokenizer, str]:
    """(encoder, tokenizer, latest checkpoint path) of a tfdialemb directory; with `restore`
    False the encoder's variables exist but are left for the caller to restore (e.g. with the
    method model that holds it, in one read)."""
    directory = os.fspath(directory)
    if detect_kind(directory) != "tfdialemb":
        raise CheckpointError(f"{directory}: not a tfdialemb checkpoint directory")
    saved_config = load_encoder_config(directory)
    encoder = Encoder(saved_config, random_init=False).build_variables()
    path = latest_own_checkpoint(directory)
    if restore:
        _restore_own(encoder, path, saved_config)
    return encoder, load_tokenizer(directory), path


def latest_own_checkpoint(directory: str) -> str:
    """The newest `ckpt-N` prefix the `checkpoint` file of a tfdialemb directory names."""
    path = tf.train.latest_checkpoint(directory)
    if path is None:
        raise CheckpointError(f"{directory}: the `checkpoint` file names no readable ckpt-N files")
    return path


def _restore_own(encoder: Encoder, path: str, saved: EncoderConfig) -> None:
    saved_extra = {
        key: layer
        for key, layer in encoder.extra_embeddings.items()
        if getattr(saved, key.replace("_ids", "_vocab_size"))
    }
    root = tf.train.Checkpoint(
        encoder=tf.train.Checkpoint(bert=encoder.bert, extra_embeddings=saved_extra)
    )
    try:
        root.read(path).expect_partial().assert_existing_objects_matched()
    except DAMAGED_CHECKPOINT_ERRORS as e:
        raise CheckpointError(f"{path}: damaged ({str(e).splitlines()[0]}); copy the directory again or "
                              "train from an earlier checkpoint") from None
    except (AssertionError, ValueError) as e:
        raise CheckpointError(
            f"{path}: does not hold the encoder described by {OWN_CONFIG} ({e})"
        ) from None


def _build_external(encoder: Encoder, directory: str, kind: str) -> Encoder:
    """`encoder`'s variables, created from the weights of an external checkpoint tensor by
    tensor; a CheckpointError when a file cannot be read."""
    try:
        weights, source = _read_external_files(directory, kind, encoder.encoder_config)
        created = set()
        with created_from(weights, encoder.bert.name + "/", created):
            encoder.build_variables()
        assign_bert_weights(encoder, weights, source, created)
        return encoder
    except (OSError, tf.errors.OpError) as e:  # OSError includes SafetensorsError
        raise _unreadable_weights(directory, e) from None


def check_weight_files(directory: str) -> None:
    """Refuses a Hugging Face checkpoint whose model.safetensors is cut short, from its header
    alone (no tensor is read): training checks it before building its data, rather than meeting
    the damage once the data is built and the model is being made."""
    path = os.path.join(directory, "model.safetensors")
    if detect_kind(directory) == "huggingface" and os.path.isfile(path):
        try:
            read_safetensors(path)
        except OSError as e:  # a SafetensorsError
            raise _unreadable_weights(directory, e) from None


def _unreadable_weights(directory: str, error: Exception) -> CheckpointError:
    first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
    return CheckpointError(f"{directory}: cannot read its weights ({first_line}); the file is damaged or "
                           "incomplete: copy it again")


def _read_external_files(directory: str, kind: str, config: EncoderConfig):
    if kind == "google":
        prefix = google_checkpoint_prefix(directory)
        return read_google_checkpoint(prefix, config), prefix
    safetensors_path = os.path.join(directory, "model.safetensors")
    if os.path.exists(safetensors_path):
        state, source = read_safetensors(safetensors_path), safetensors_path
    else:
        source = os.path.join(directory, "tf_model.h5")
        state = read_tf_h5(source)
    return pytorch_to_model_garden(state, config), source


def google_checkpoint_prefix(directory: str) -> str:
    indexes = sorted(glob.glob(os.path.join(directory, "*.index")))
    if len(indexes) != 1:
        raise CheckpointError(
            f"{directory}: a Google TF1 BERT directory needs exactly one checkpoint "
            f"(bert_model.ckpt.index and .data-*); found {len(indexes)} .index files"
        )
    prefix = indexes[0][: -len(".index")]
    if not glob.glob(prefix + ".data-*"):
        raise CheckpointError(f"{directory}: {os.path.basename(prefix)}.data-* is missing")
    return prefix


def vocab_file_tokenizer(vocab_file: str) -> BertTokenizer:
    """The WordPiece tokenizer of a vocab.txt alone (e.g. of a model whose weights are not needed),
    cased as a tokenizer_config.json beside it says, else as the vocabulary is."""
    if not os.path.isfile(vocab_file):
        raise CheckpointError(f"{vocab_file}: vocabulary file does not exist")
    vocab = read_vocab(vocab_file)
    return BertTokenizer(vocab, lower_case=_infer_lower_case(os.path.dirname(vocab_file), vocab))


def _infer_lower_case(directory: str, vocab) -> bool:
    tokenizer_config = os.path.join(directory, "tokenizer_config.json")
    if os.path.exists(tokenizer_config):
        value = read_json(tokenizer_config).get("do_lower_case")
        if value is not None:
            return bool(value)
    # An uncased vocabulary has no upper-case letters outside its bracketed special tokens.
    return not any(
        ch.isupper() for token in vocab if not (token.startswith("[") and token.endswith("]"))
        for ch in token
    )


WEIGHT_FILES = ("model.safetensors", "tf_model.h5", "pytorch_model.bin")
"""A Hugging Face directory's weights, in the order `load_pretrained` prefers them."""


def weights_fingerprint(directory: str) -> Optional[Dict[str, Any]]:
    """What tells the weights in `directory` from others written under the same name: the file
    they are read from (a TF checkpoint's index, whose entries hold each tensor's checksum: a
    training run's newest `ckpt-N`, a TF1 BERT's, a SavedModel's variables; else a Hugging Face
    weights file), its SHA-256 and, for `ckpt-N`, the training step N. None for a directory
    holding none of these (a baseline's files)."""
    directory = os.fspath(directory)
    if os.path.isfile(os.path.join(directory, "saved_model.pb")):
        path = os.path.join(directory, "variables", "variables.index")
    elif os.path.isfile(os.path.join(directory, "checkpoint")):
        path = latest_own_checkpoint(directory) + ".index"
    else:
        found = sorted(glob.glob(os.path.join(directory, "*.index"))) + [
            os.path.join(directory, name) for name in WEIGHT_FILES if os.path.isfile(os.path.join(directory, name))]
        if not found:
            return None
        path = found[0]
    fingerprint: Dict[str, Any] = {"weights": os.path.relpath(path, directory), "sha256": file_sha256(path)}
    step = re.fullmatch(r"ckpt-(\d+)\.index", os.path.basename(path))
    if step:
        fingerprint["step"] = int(step.group(1))
    return fingerprint
