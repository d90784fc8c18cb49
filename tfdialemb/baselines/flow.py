r"""BERT-flow (Li et al. 2020, "On the Sentence Embeddings from Pre-trained Language Models"), a
baseline of DialogueCSE's Table 2: a Glow normalizing flow (Kingma and Dhariwal 2018) fitted by
maximum likelihood to frozen sentence embeddings; the embedding is the flow's latent z.

Architecture and hyper-parameters are those of the release (bohanli/BERT-flow:
flow/glow_ops_1x1.py with its default config `config_l3_d3_w32`, run_siamese.py,
optimization_bert_flow.py), written anew for vectors instead of 1×1 images:
- `levels` (3) levels of `depth` (3) steps each. After every level but the last, the second half of
  the vector is factored out under a standard-normal prior and the first half goes on (Glow's
  split); z = [the factored halves in level order, the last level's output].
- A step is actnorm → permutation → coupling:
  actnorm y = (x + b) ⊙ exp(3 s), with b and s set from the first training batch so that y has zero
  mean and unit variance per dimension (data-dependent init; a constant dimension keeps scale 1);
  log|det| = Σ 3 s.
  permutation "reverse" reverses the dimensions (the release; log|det| = 0), "lu" is Glow's
  invertible 1×1 convolution y = x W, W = P L (U + diag(sign(s) exp(log s))); log|det| = Σ log s.
  coupling on the halves x = [x1, x2]: "additive" (the release) y2 = x2 + NN(x1), log|det| = 0;
  "affine" (Glow) y2 = (x2 + t) ⊙ σ(h + 2) with [t, h] = NN(x1); log|det| = Σ log σ(h + 2).
  NN(x1) = dense(width) → actnorm → ReLU → dense(width) → actnorm → ReLU → dense, the hidden
  kernels drawn from N(0, 0.05²), the last dense zero-initialised and scaled by exp(3 s_out), so
  an additive step starts as the identity.
- Objective: bits per dimension, −(log N(z; 0, I) + log|det ∂z/∂x|) / (D ln 2), on the batch mean.
- Training, the release's flow optimizer: AdamW with a constant learning rate of 1e-3, weight decay
  0.01 on every flow variable (none of the release's names matches BERT's exclusions, nor do ours),
  ε 1e-6, gradients clipped to global norm 1.0; batch 32 (its train_batch_size), 1 epoch.

Sentence embedding: the paper averages the last two layers, but the release's `avg-last-2` loops
`all_encoder_layers[-i]` for i = 0, 1, i.e. it averages the first and the last layer. The flow here
is fitted to whatever the caller embeds; the evaluation CLI feeds it `SentenceEmbedder` output, the
mean (or [CLS]) pooling of the last layer, DialogueCSE's sentence embedding.
"""
import json
import math
import os
from typing import List

import numpy as np
import scipy.linalg
import tensorflow as tf

from tfdialemb.core.files import atomic_open
from tfdialemb.training.optimizer import OptimizerConfig, create_optimizer

COUPLINGS = ("additive", "affine")
PERMUTATIONS = ("reverse", "lu")
LOG_SCALE_FACTOR = 3.0
"""Glow's parametrisation of actnorm and zero-layer log scales: log scale = 3 × variable."""
CONFIG_FILE = "flow_config.json"
CHECKPOINT_PREFIX = "flow"


class ActNorm(tf.Module):
    """y = (x + shift) ⊙ exp(3 log_scale), per dimension; `initialize` standardises a batch.

    A constant dimension (all-MiniLM-L6-v2's mean-pooled embeddings have three) is centred and
    keeps scale 1: the release's 1 / (std + 1e-6) makes it 1e6 at every step, whose product
    overflows the gradients.
    """

    def __init__(self, dim: int, name=None):
        super().__init__(name=name)
        self.shift = tf.Variable(tf.zeros([dim]), name="shift")
        self.log_scale = tf.Variable(tf.zeros([dim]), name="log_scale")

    def initialize(self, x):
        mean = tf.reduce_mean(x, axis=0)
        std = tf.sqrt(tf.reduce_mean(tf.square(x - mean), axis=0))
        self.shift.assign(-mean)
        constant = std <= 1e-6
        log_scale = -tf.math.log(tf.where(constant, 1.0, std))
        self.log_scale.assign(log_scale / LOG_SCALE_FACTOR)

    def forward(self, x, initialize=False):
        if initialize:
            self.initialize(x)
        log_scale = LOG_SCALE_FACTOR * self.log_scale
        return (x + self.shift) * tf.exp(log_scale), tf.reduce_sum(log_scale)

    def inverse(self, y):
        return y * tf.exp(-LOG_SCALE_FACTOR * self.log_scale) - self.shift


class ReversePermutation(tf.Module):
    """Reverses the dimensions, so that each coupling transforms what the previous one kept."""

    def forward(self, x, initialize=False):
        del initialize
        return tf.reverse(x, axis=[1]), 0.0

    def inverse(self, y):
        return tf.reverse(y, axis=[1])


class InvertibleLinear(tf.Module):
    """Glow's invertible 1×1 convolution on vectors, LU-parametrised from a random rotation."""

    def __init__(self, dim: int, rng: np.random.Generator, name=None):
        super().__init__(name=name)
        rotation = scipy.linalg.qr(rng.standard_normal([dim, dim]))[0]
        permutation, lower, upper = scipy.linalg.lu(rotation)
        diagonal = np.diag(upper)
        self.permutation = tf.Variable(permutation, dtype=tf.float32, trainable=False,
                                       name="permutation")
        self.sign_s = tf.Variable(np.sign(diagonal), dtype=tf.float32, trainable=False,
                                  name="sign_s")
        self.lower = tf.Variable(lower, dtype=tf.float32, name="lower")
        self.upper = tf.Variable(np.triu(upper, 1), dtype=tf.float32, name="upper")
        self.log_s = tf.Variable(np.log(np.abs(diagonal)), dtype=tf.float32, name="log_s")
        self._strictly_lower = np.tril(np.ones([dim, dim], np.float32), -1)

    def weight(self):
        lower = self.lower * self._strictly_lower + tf.eye(tf.shape(self.lower)[0])
        upper = (self.upper * self._strictly_lower.T
                 + tf.linalg.diag(self.sign_s * tf.exp(self.log_s)))
        return self.permutation @ lower @ upper

    def forward(self, x, initialize=False):
        del initialize
        return x @ self.weight(), tf.reduce_sum(self.log_s)

    def inverse(self, y):
        return y @ tf.linalg.inv(self.weight())


class CouplingNetwork(tf.Module):
    """NN(x1): two ReLU layers with actnorm, then a zero-initialised, log-scaled output layer."""

    def __init__(self, in_dim: int, out_dim: int, width: int, rng: np.random.Generator,
                 name=None):
        super().__init__(name=name)
        self.hidden_kernels = [
            tf.Variable(rng.normal(0.0, 0.05, shape), dtype=tf.float32, name="kernel")
            for shape in ([in_dim, width], [width, width])]
        self.hidden_norms = [ActNorm(width), ActNorm(width)]
        self.output_kernel = tf.Variable(tf.zeros([width, out_dim]), name="output_kernel")
        self.output_shift = tf.Variable(tf.zeros([out_dim]), name="output_shift")
        self.output_log_scale = tf.Variable(tf.zeros([out_dim]), name="output_log_scale")

    def __call__(self, x, initialize=False):
        for kernel, norm in zip(self.hidden_kernels, self.hidden_norms):
            x = tf.nn.relu(norm.forward(x @ kernel, initialize)[0])
        output = x @ self.output_kernel + self.output_shift
        return output * tf.exp(LOG_SCALE_FACTOR * self.output_log_scale)


class Coupling(tf.Module):
    """Keeps the first half x1 and shifts (additive) or shifts and scales (affine) the second."""

    def __init__(self, dim: int, width: int, affine: bool, rng: np.random.Generator, name=None):
        super().__init__(name=name)
        self.split = dim // 2
        self.affine = affine
        transformed = dim - self.split
        self.network = CouplingNetwork(self.split, 2 * transformed if affine else transformed,
                                       width, rng)

    def _shift_and_log_scale(self, kept, initialize=False):
        output = self.network(kept, initialize)
        if not self.affine:
            return output, None
        return output[:, 0::2], tf.math.log_sigmoid(output[:, 1::2] + 2.0)

    def forward(self, x, initialize=False):
        kept, changed = x[:, :self.split], x[:, self.split:]
        shift, log_scale = self._shift_and_log_scale(kept, initialize)
        if log_scale is None:
            return tf.concat([kept, changed + shift], axis=1), 0.0
        changed = (changed + shift) * tf.exp(log_scale)
        return tf.concat([kept, changed], axis=1), tf.reduce_sum(log_scale, axis=1)

    def inverse(self, y):
        kept, changed = y[:, :self.split], y[:, self.split:]
        shift, log_scale = self._shift_and_log_scale(kept)
        if log_scale is not None:
            changed = changed * tf.exp(-log_scale)
        return tf.concat([kept, changed - shift], axis=1)


class FlowStep(tf.Module):
    """One Glow step: actnorm, permutation, coupling."""

    def __init__(self, dim: int, width: int, coupling: str, permutation: str,
                 rng: np.random.Generator, name=None):
        super().__init__(name=name)
        self.layers = [
            ActNorm(dim),
            InvertibleLinear(dim, rng) if permutation == "lu" else ReversePermutation(),
            Coupling(dim, width, coupling == "affine", rng),
        ]

    def forward(self, x, initialize=False):
        log_det = 0.0
        for layer in self.layers:
            x, layer_log_det = layer.forward(x, initialize)
            log_det += layer_log_det
        return x, log_det

    def inverse(self, y):
        for layer in reversed(self.layers):
            y = layer.inverse(y)
        return y


class GlowFlow(tf.Module):
    """The multi-level Glow of BERT-flow on vectors of size `dim` (see the module docstring)."""

    def __init__(self, dim: int, levels: int = 3, depth: int = 3, width: int = 32,
                 coupling: str = "additive", permutation: str = "reverse", seed: int = 0):
        super().__init__(name="glow_flow")
        if coupling not in COUPLINGS or permutation not in PERMUTATIONS:
            raise ValueError(f"coupling must be one of {COUPLINGS} and permutation one of "
                             f"{PERMUTATIONS}, got {coupling!r} and {permutation!r}")
        if min(levels, depth, width) < 1:
            raise ValueError(f"levels, depth and width must be positive, got {levels}, {depth}, "
                             f"{width}")
        self.level_dims = [dim // 2 ** level for level in range(levels)]
        if self.level_dims[-1] < 2:
            raise ValueError(f"{levels} levels halve {dim} dimensions to {self.level_dims[-1]}; "
                             "a coupling needs at least 2")
        self.config = {"dim": dim, "levels": levels, "depth": depth, "width": width,
                       "coupling": coupling, "permutation": permutation}
        rng = np.random.default_rng(seed)
        self.levels = [[FlowStep(level_dim, width, coupling, permutation, rng)
                        for _ in range(depth)] for level_dim in self.level_dims]
        self.initialized = tf.Variable(False, trainable=False, name="initialized")

    @property
    def dim(self) -> int:
        return self.config["dim"]

    def forward(self, x, initialize=False):
        """(z [n, dim], log|det ∂z/∂x| [n]); `initialize` runs actnorm's data-dependent init."""
        log_det = tf.zeros(tf.shape(x)[:1])
        factored = []
        for level, steps in enumerate(self.levels):
            for step in steps:
                x, step_log_det = step.forward(x, initialize)
                log_det += step_log_det
            if level + 1 < len(self.levels):
                kept = self.level_dims[level + 1]
                factored.append(x[:, kept:])
                x = x[:, :kept]
        return tf.concat(factored + [x], axis=1), log_det

    def inverse(self, z):
        """x with forward(x)[0] = z."""
        sizes = [dim - kept for dim, kept in zip(self.level_dims, self.level_dims[1:])]
        pieces = tf.split(z, sizes + [self.level_dims[-1]], axis=1)
        x = pieces[-1]
        for level in reversed(range(len(self.levels))):
            if level + 1 < len(self.levels):
                x = tf.concat([x, pieces[level]], axis=1)
            for step in reversed(self.levels[level]):
                x = step.inverse(x)
        return x

    def initialize(self, batch: np.ndarray) -> None:
        """Actnorm's data-dependent init: each actnorm standardises its input from `batch`."""
        self.forward(tf.constant(self._check(batch)), initialize=True)
        self.initialized.assign(True)

    def bits_per_dim(self, x):
        """−log p(x) / (dim ln 2) per example [n], with p the flow's density."""
        z, log_det = self.forward(x)
        log_prior = tf.reduce_sum(-0.5 * tf.square(z) - 0.5 * math.log(2 * math.pi), axis=1)
        return -(log_prior + log_det) / (self.dim * math.log(2.0))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def _latents(self, x):
        return self.forward(x)[0]

    def fit(self, embeddings: np.ndarray, epochs: int = 1, batch_size: int = 32,
            learning_rate: float = 1e-3, seed: int = 0) -> List[float]:
        """Maximum likelihood on `embeddings` [n, dim]; returns each epoch's mean bits per dim.

        Batches are drawn from a seeded shuffle each epoch; the first batch of a fresh flow
        initialises actnorm.
        """
        embeddings = self._check(embeddings)
        if epochs < 1 or batch_size < 1:
            raise ValueError(f"epochs and batch_size must be positive, got {epochs}, {batch_size}")
        rng = np.random.default_rng(seed)
        steps_per_epoch = -(-len(embeddings) // batch_size)
        optimizer = create_optimizer(
            OptimizerConfig(learning_rate=learning_rate, weight_decay=0.01, epsilon=1e-6,
                            global_clipnorm=1.0),
            total_steps=epochs * steps_per_epoch)

        @tf.function(input_signature=[tf.TensorSpec([None, self.dim], tf.float32)])
        def train_step(batch):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.bits_per_dim(batch))
            variables = self.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        epoch_losses = []
        for _ in range(epochs):
            shuffled = embeddings[rng.permutation(len(embeddings))]
            if not self.initialized:
                self.initialize(shuffled[:batch_size])
            losses = [float(train_step(shuffled[start:start + batch_size]))
                      for start in range(0, len(shuffled), batch_size)]
            epoch_losses.append(float(np.mean(losses)))
        return epoch_losses

    def transform(self, embeddings: np.ndarray, batch_size: int = 1024) -> np.ndarray:
        """The latents z [n, dim] float32 of a fitted flow: BERT-flow's sentence embeddings."""
        if not self.initialized:
            raise ValueError("the flow is not fitted: call fit() or load() first")
        embeddings = self._check(embeddings)
        batches = [self._latents(embeddings[start:start + batch_size]).numpy()
                   for start in range(0, len(embeddings), batch_size)]
        return np.concatenate(batches) if batches else np.zeros([0, self.dim], np.float32)

    def _check(self, embeddings) -> np.ndarray:
        embeddings = np.asarray(embeddings, np.float32)
        if embeddings.ndim != 2 or embeddings.shape[1] != self.dim:
            raise ValueError(f"expected embeddings [n, {self.dim}], got {embeddings.shape}")
        return embeddings

    def save(self, directory: str) -> str:
        """Writes the architecture (JSON) and the variables (tf.train.Checkpoint); returns the
        checkpoint prefix."""
        os.makedirs(directory, exist_ok=True)
        with atomic_open(os.path.join(directory, CONFIG_FILE)) as f:
            json.dump(self.config, f, indent=2)
        return tf.train.Checkpoint(flow=self).write(os.path.join(directory, CHECKPOINT_PREFIX))

    @classmethod
    def load(cls, directory: str) -> "GlowFlow":
        config_path = os.path.join(directory, CONFIG_FILE)
        if not os.path.isfile(config_path):
            raise FileNotFoundError(f"{directory}: no saved flow ({CONFIG_FILE} is missing)")
        with open(config_path, encoding="utf-8") as f:
            flow = cls(**json.load(f))
        tf.train.Checkpoint(flow=flow).read(
            os.path.join(directory, CHECKPOINT_PREFIX)).assert_consumed()
        return flow
