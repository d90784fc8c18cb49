"""Optimizer and learning-rate schedule from the papers' hyper-parameters.

tf-keras's AdamW, not Model Garden's legacy AdamWeightDecay: the latter clips each replica's
gradients to global norm 1.0 before they are all-reduced, which silently clips and makes N
replicas train differently from one device.
"""
import dataclasses
from typing import Optional

import tf_keras
from official.nlp import optimization

SCHEDULES = ("constant", "linear")


@dataclasses.dataclass(frozen=True)
class OptimizerConfig:
    """Adam with optional decoupled weight decay, warm-up and linear decay to zero.

    DialogueCSE: Adam, lr 5e-5 (contrastive) / 2e-5 (MLM), constant; triple-encoders: lr 2e-5,
    weight decay 0.01, 10% linear warm-up then linear decay.
    """

    learning_rate: float = 5e-5
    schedule: str = "constant"
    warmup_steps: int = 0
    weight_decay: float = 0.0
    epsilon: float = 1e-8
    global_clipnorm: Optional[float] = None


def create_optimizer(config: OptimizerConfig, total_steps: int) -> tf_keras.optimizers.Optimizer:
    if config.schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {config.schedule!r}")
    if config.schedule == "linear":
        learning_rate = tf_keras.optimizers.schedules.PolynomialDecay(
            initial_learning_rate=config.learning_rate, decay_steps=max(total_steps, 1),
            end_learning_rate=0.0, power=1.0)
    else:
        learning_rate = tf_keras.optimizers.schedules.PolynomialDecay(
            initial_learning_rate=config.learning_rate, decay_steps=1,
            end_learning_rate=config.learning_rate, power=1.0)
    if config.warmup_steps:
        learning_rate = optimization.WarmUp(
            initial_learning_rate=config.learning_rate, decay_schedule_fn=learning_rate,
            warmup_steps=config.warmup_steps)
    optimizer = tf_keras.optimizers.AdamW(
        learning_rate=learning_rate,
        weight_decay=config.weight_decay,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=config.epsilon,
        global_clipnorm=config.global_clipnorm,
    )
    # BERT's convention: no decay on layer norms and biases.
    optimizer.exclude_from_weight_decay(var_names=["layer_norm", "LayerNorm", "bias"])
    return optimizer
