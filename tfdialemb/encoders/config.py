"""The encoder's hyper-parameters, read from either BERT config format or the project's own."""
import dataclasses
import json
import logging

# Hugging Face names the exact (erf) GELU "gelu"; Google's TF1 BERT always used the tanh
# approximation under the same name, so the two formats map "gelu" differently.
_HF_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "relu": "relu",
}
_GOOGLE_ACTIVATIONS = {"gelu": "gelu_approximate", "relu": "relu"}
SUPPORTED_ACTIVATIONS = ("gelu", "gelu_approximate", "relu")
HF_MODEL_TYPES = ("bert", "electra")
"""Hugging Face encoders with BERT's layers: ELECTRA's discriminator differs only by its
embedding width and projection."""
# Model Garden's BertEncoderV2 hard-codes this epsilon in every layer normalisation.
LAYER_NORM_EPSILON = 1e-12


class ConfigError(ValueError):
    """A checkpoint's configuration cannot be represented by the project's encoder."""


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    """BERT hyper-parameters plus the optional extra input embeddings (role and turn ids).

    `role_vocab_size` / `turn_vocab_size` > 0 add PLATO-style role / turn embedding tables whose
    rows are summed with the word, position and segment embeddings before the embedding layer norm.
    `embedding_size` > 0 (ELECTRA) makes the embeddings that wide, normalised at that width and then
    projected to `hidden_size`, which is what BertEncoderV2's `embedding_width` does; 0 keeps them
    `hidden_size` wide as in BERT.
    """

    vocab_size: int
    hidden_size: int = 768
    num_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    hidden_dropout: float = 0.1
    attention_dropout: float = 0.1
    initializer_range: float = 0.02
    role_vocab_size: int = 0
    turn_vocab_size: int = 0
    embedding_size: int = 0

    def __post_init__(self):
        if self.hidden_act not in SUPPORTED_ACTIVATIONS:
            raise ConfigError(
                f"hidden_act {self.hidden_act!r} is not supported; expected one of "
                f"{SUPPORTED_ACTIVATIONS}"
            )
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size {self.hidden_size} is not divisible by num_attention_heads "
                f"{self.num_attention_heads}"
            )

    def with_embedding_size(self, size: int) -> "EncoderConfig":
        """This config with `size`-wide embeddings; 0 or the hidden size mean BERT's."""
        return self.replace(embedding_size=0 if size in (0, self.hidden_size) else size)

    def replace(self, **changes) -> "EncoderConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "EncoderConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown encoder config keys: {unknown}")
        return cls(**values)

    @classmethod
    def from_huggingface(cls, values: dict, source: str = "config.json") -> "EncoderConfig":
        """Reads a Hugging Face BERT or ELECTRA (discriminator) `config.json` dictionary."""
        model_type = values.get("model_type", "bert")
        if model_type not in HF_MODEL_TYPES:
            raise ConfigError(f"{source}: model_type is {model_type!r}; supported: {', '.join(HF_MODEL_TYPES)}")
        position_type = values.get("position_embedding_type", "absolute")
        if position_type != "absolute":
            raise ConfigError(
                f"{source}: position_embedding_type {position_type!r} is not supported "
                "(only 'absolute')"
            )
        _check_epsilon(values.get("layer_norm_eps", LAYER_NORM_EPSILON), source)
        config = cls._from_bert_json(values, _HF_ACTIVATIONS, source)
        return config.with_embedding_size(values.get("embedding_size", 0) if model_type == "electra" else 0)

    @classmethod
    def from_google(cls, values: dict, source: str = "bert_config.json") -> "EncoderConfig":
        """Reads a Google TF1 BERT `bert_config.json` dictionary; an `embedding_size` below the
        hidden size is ELECTRA's (google-research/electra releases none: write one, see docs/encoder.md)."""
        config = cls._from_bert_json(values, _GOOGLE_ACTIVATIONS, source)
        return config.with_embedding_size(values.get("embedding_size", 0))

    @classmethod
    def _from_bert_json(cls, values: dict, activations: dict, source: str) -> "EncoderConfig":
        """The keys both BERT config formats share; `activations` maps their `hidden_act` names."""
        try:
            return cls(
                vocab_size=values["vocab_size"],
                hidden_size=values["hidden_size"],
                num_layers=values["num_hidden_layers"],
                num_attention_heads=values["num_attention_heads"],
                intermediate_size=values["intermediate_size"],
                hidden_act=_map_activation(values.get("hidden_act", "gelu"), activations, source),
                max_position_embeddings=values["max_position_embeddings"],
                type_vocab_size=values.get("type_vocab_size", 2),
                hidden_dropout=values.get("hidden_dropout_prob", 0.1),
                attention_dropout=values.get("attention_probs_dropout_prob", 0.1),
                initializer_range=values.get("initializer_range", 0.02),
            )
        except KeyError as e:
            raise ConfigError(f"{source}: required key {e.args[0]!r} is missing") from None


def read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}: not valid JSON ({e})") from None


def _map_activation(name: str, table: dict, source: str) -> str:
    if name not in table:
        raise ConfigError(
            f"{source}: hidden_act {name!r} is not supported; expected one of {sorted(table)}"
        )
    return table[name]


def _check_epsilon(epsilon: float, source: str) -> None:
    if abs(epsilon - LAYER_NORM_EPSILON) > 1e-15:
        raise ConfigError(
            f"{source}: layer_norm_eps {epsilon} differs from the {LAYER_NORM_EPSILON} that "
            "Model Garden's BertEncoderV2 uses"
        )




def usable_max_length(config: EncoderConfig, max_length: int) -> int:
    """`max_length`, lowered (with a warning) to the encoder's position embeddings: longer inputs
    would fail there, so they are truncated instead, as BERT does. Every command applies this one
    rule, training's builds included."""
    positions = config.max_position_embeddings
    if max_length > positions:
        logging.getLogger(__name__).warning(
            "max_length %d exceeds the encoder's %d positions; using %d", max_length, positions, positions)
        return positions
    return max_length
