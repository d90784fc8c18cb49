"""dial2vec: dialogue embeddings by self-guided contrast between interlocutors (dial2vec paper Sec. 3).

Each sample (the dialogue, then its negatives from the `dial2vec` builder) is one packed
sequence `[CLS] t_0 SEP t_1 ...`; the encoder's last layer E gives the self-representations
(Eq. 1) and the turn-windowed cross-representations (Eq. 2-3) of every interlocutor, whose
pooled cosine (Eq. 5) is contrasted across the samples per interlocutor with NT-Xent (Eq. 5-6).
Only interlocutors present in the positive count, and only beside another one present: an
interlocutor without tokens gets cosine 0 in every sample and would add a constant, and one whose
dialogue is cut at --max_length before anyone else speaks has no counterpart to be guided by (its
positive is stuck at cosine 0 while the negatives that keep its turns are the positive itself), so
such a dialogue adds no loss.

`contrast="dialogue"` is the ablation without the interlocutor-guided views: the same samples
scored at the dialogue level (see `Dial2vecModel`).

Encoder inputs and the dialogue embeddings (Eq. 4, Table 4) are `tfdialemb.layers.dialogue_views`,
shared with inference.
"""
from typing import Dict, Optional

import tensorflow as tf

from tfdialemb.data.examples.dial2vec import NEGATIVE_POOLS
from tfdialemb.encoders import Encoder
from tfdialemb.encoders.pooling import masked_mean
from tfdialemb.inference_settings import NUM_ROLES, SEPARATOR
from tfdialemb.layers.dialogue_views import (
    check_role_turn_tables,
    dialogue_embeddings,
    embedding_names,
    encode_dialogues,
)
from tfdialemb.layers.interlocutor_matching import DEFAULT_WINDOW, self_cross_similarity
from tfdialemb.layers.interlocutor_pooling import role_masks
from tfdialemb.losses.candidate_nt_xent import candidate_nt_xent
from tfdialemb.losses.interlocutor_nt_xent import (
    DEFAULT_TEMPERATURE,
    interlocutor_nt_xent,
)
from tfdialemb.losses.ranking_metrics import top_k_hits
from tfdialemb.methods.models.base import Method
from tfdialemb.methods.shared_options import NEGATIVES
from tfdialemb.methods.spec import MethodSpec, default_bench_sequences, register_method
from tfdialemb.core.options import Option, Switch
from tfdialemb.similarity import l2_normalized

LOSS_VARIANTS = ("paper", "released")
CONTRASTS = ("interlocutor", "dialogue")


class Dial2vecModel(Method):
    """`per_example_loss` on `dial2vec` batches (`samples` [B, S, T] with mask, turn and role
    ids): the dialogue and its first `negatives` negatives.

    `window` w zeroes C[i, j] for |T(i) - T(j)| > w (None: no window); `loss_variant`
    "released" divides each interlocutor's term by the number of samples
    (`interlocutor_nt_xent`).

    `contrast="dialogue"`, the ablation without the interlocutor-guided views (the paper reports
    none; its claim, Sec. 5.1, is that the interlocutor-level interactions make the gain): no
    self- or cross-representations; each sample is the mean of all its tokens (Sec. 3.2.3's
    average pooling), scored by its cosine with the dialogue encoded once more (another dropout
    mask, as SimCSE makes a positive), and the NT-Xent of Eq. 5 runs over those S cosines / τ,
    once per dialogue; "released" divides it by S.
    """

    def __init__(self, encoder: Encoder, negatives: int = 9, temperature: float = DEFAULT_TEMPERATURE,
                 window: Optional[int] = DEFAULT_WINDOW, num_roles: int = 2,
                 role_turn_embeddings: bool = False, loss_variant: str = "paper",
                 contrast: str = "interlocutor", **kwargs):
        super().__init__(encoder, **kwargs)
        if loss_variant not in LOSS_VARIANTS:
            raise ValueError(f"unknown dial2vec loss_variant {loss_variant!r}; expected one of {LOSS_VARIANTS}")
        if contrast not in CONTRASTS:
            raise ValueError(f"unknown dial2vec contrast {contrast!r}; expected one of {CONTRASTS}")
        if negatives < 1 or num_roles < 2:
            raise ValueError(f"negatives must be >= 1 and num_roles >= 2, got {negatives} and {num_roles}")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if window is not None and window < 0:
            raise ValueError(f"window must be non-negative or None, got {window}")
        if role_turn_embeddings:
            check_role_turn_tables(encoder)
        self.negatives = negatives
        self.temperature = temperature
        self.window = window
        self.num_roles = num_roles
        self.role_turn_embeddings = role_turn_embeddings
        self.loss_variant = loss_variant
        self.contrast = contrast

    def encode(self, ids, mask, turn_ids, role_ids, training=None) -> tf.Tensor:
        """Last-layer states [N, T, H] of packed dialogues [N, T]."""
        return encode_dialogues(self.encoder, ids, mask, turn_ids, role_ids, self.role_turn_embeddings, training)

    def per_example_loss(self, batch: Dict[str, tf.Tensor], training: bool):
        samples = self.negatives + 1
        tf.debugging.assert_greater_equal(
            tf.shape(batch["samples"])[1], samples,
            message="the build stores fewer negatives than --negatives asks for; rebuild")

        def flat(key):
            value = batch[key][:, :samples]
            return tf.reshape(value, [-1, tf.shape(value)[2]])

        ids, mask, turns, roles = (flat(f"samples{suffix}") for suffix in ("", "_mask", "_turn_ids", "_role_ids"))
        tf.debugging.assert_less(
            roles * mask, self.num_roles,
            message="role ids reach num_roles; build with max_roles <= num_roles or raise num_roles")
        states = self.encode(ids, mask, turns, roles, training)
        if self.contrast == "dialogue":
            return self._dialogue_contrast(batch, states, mask, samples, training)
        similarities = tf.reshape(
            self_cross_similarity(states, roles, turns, mask, self.window, self.num_roles),
            [-1, samples, self.num_roles])
        speaks = tf.reduce_any(
            role_masks(batch["samples_role_ids"][:, 0], batch["samples_mask"][:, 0], self.num_roles) > 0,
            axis=-1)
        others_speak = tf.reduce_sum(tf.cast(speaks, tf.int32), axis=-1, keepdims=True) - tf.cast(speaks, tf.int32) > 0
        present = speaks & others_speak
        losses = interlocutor_nt_xent(similarities, self.temperature, present, self.loss_variant)
        # The positive ranked first among the samples (ties and NaN count against it), per
        # interlocutor present: for every one of them (a harsh measure: a dialogue counts only when
        # all its interlocutors get it), and as the share of them; a dialogue with none present
        # (it adds no loss) scores 0 on both.
        per_role_scores = tf.reshape(tf.transpose(similarities, [0, 2, 1]), [-1, samples])
        positive_first = tf.reshape(
            top_k_hits(per_role_scores, tf.zeros(tf.shape(per_role_scores)[:1], tf.int32), 1) > 0,
            [-1, self.num_roles])
        every_role = tf.cast(tf.reduce_all(positive_first | ~present, axis=-1) & tf.reduce_any(present, axis=-1),
                             tf.float32)
        per_role = (tf.reduce_sum(tf.cast(positive_first & present, tf.float32), axis=-1)
                    / tf.maximum(tf.reduce_sum(tf.cast(present, tf.float32), axis=-1), 1.0))
        return losses, {"positive_first_every_role": every_role, "positive_first_per_role": per_role}

    def _dialogue_contrast(self, batch, states, mask, samples, training):
        """The dialogue-level ablation's loss [B] and metrics: NT-Xent of cos(anchor, sample_j) / τ
        over the S samples, the anchor the dialogue's own tokens encoded a second time."""
        dialogue = [batch[f"samples{suffix}"][:, 0] for suffix in ("", "_mask", "_turn_ids", "_role_ids")]
        anchor = masked_mean(self.encode(*dialogue, training), dialogue[1])
        pooled = tf.reshape(masked_mean(states, mask), [-1, samples, tf.shape(states)[-1]])
        cosines = tf.einsum("bh,bsh->bs", l2_normalized(anchor), l2_normalized(pooled))
        losses = candidate_nt_xent(cosines / self.temperature, variant=self.loss_variant)
        positive_first = top_k_hits(cosines, tf.zeros(tf.shape(cosines)[:1], tf.int32), 1)
        return losses, {"positive_first": tf.cast(positive_first > 0, tf.float32), "positive_cosine": cosines[:, 0]}

    def embed_all(self, ids, mask, turn_ids, role_ids, training=None) -> Dict[str, tf.Tensor]:
        """Every embedding of `dialogue_embeddings` for packed dialogues [N, T]."""
        states = self.encode(ids, mask, turn_ids, role_ids, training)
        return dialogue_embeddings(states, mask, role_ids, self.num_roles)

    def embed(self, ids, mask, turn_ids, role_ids, pooling: str = "interlocutor", training=None) -> tf.Tensor:
        """Dialogue embeddings [N, H]: `pooling` one of `embedding_names(num_roles)`."""
        names = embedding_names(self.num_roles)
        if pooling not in names:
            raise ValueError(f"unknown dial2vec pooling {pooling!r}; expected one of {names}")
        return self.embed_all(ids, mask, turn_ids, role_ids, training)[pooling]


ROLE_VOCAB_SIZE, TURN_VOCAB_SIZE = 10, 100
"""PLATO-style role and turn embedding tables (AlibabaResearch/DAMO-ConvAI dial2vec/modeling_bert.py
sizes)."""
TEMPERATURE = Option("temperature", DEFAULT_TEMPERATURE, "Softmax temperature (mge: NT-Xent τ of "
                     "Eq. 8; siamese_m: initial 1/scale; dial2vec: τ of Eq. 6; augcl: τ of the released "
                     "loss).", lower_bound=1e-6)
WINDOW = Option("window", DEFAULT_WINDOW, "Turn window w of the correlation matrices (Eq. 2).",
                lower_bound=0)
ROLE_TURN_EMBEDDINGS = Option("role_turn_embeddings", False,
                              "Add learned role and turn embeddings to the input (PLATO style); "
                              "otherwise roles and turns only drive the masks (BERT branch).")
LOSS = Switch("dial2vec_loss", "paper", "Per-interlocutor NT-Xent (Eq. 6).",
              paper="the sum over interlocutors of Eq. 6",
              released="AlibabaResearch/DAMO-ConvAI dial2vec/network.py:Dial2vec.calc_loss: each interlocutor's "
                       "term divided by the number of samples")
KEPT_ROLE = Switch("dial2vec_kept_role", "paper", "The interlocutor a negative keeps (Sec. 3.1).",
                   paper="drawn at random for every negative",
                   released="AlibabaResearch/DAMO-ConvAI dial2vec/data/generate_training.py: always the second "
                            "speaker")
OPTIMIZER = Switch("dial2vec_optimizer", "paper", "The optimiser and its schedule.",
                   paper="Sec. 4.1: Adam, the constant --learning_rate (1e-5)",
                   released="AlibabaResearch/DAMO-ConvAI dial2vec/optimization.py BERTAdam (run.py:225): Adam "
                            "without bias correction, epsilon 1e-6, weight decay 0.01 on every variable, each "
                            "gradient clipped to norm 1 alone; warmup_linear over t_total = the training "
                            "examples (the lines of train.tsv), not the steps: 10 % warm-up, then 1 - x, not "
                            "floored")
RELEASED_OPTIMIZER = {"variant": "bert_adam", "schedule": "bert_warmup_linear", "warmup_steps": 0,
                      "weight_decay": 0.01, "epsilon": 1e-6, "no_decay": ()}
"""The OptimizerConfig fields of `--dial2vec_optimizer=released`."""
CONTRAST = Option("dial2vec_contrast", "interlocutor", "What is contrasted: interlocutor, each "
                  "interlocutor's self-representation against its cross-representation (Eq. 1-6); dialogue, "
                  "the ablation without the interlocutor-guided views: the mean-pooled dialogue against its "
                  "samples, the positive a second encoding of the dialogue (the paper reports no such run).",
                  choices=CONTRASTS)
NEGATIVE_ROLE = {"paper": "random", "released": "fixed"}
"""`dial2vec_kept_role` as the builder's `negative_role`."""
NEGATIVE_POOL = Option("dial2vec_negative_pool", "per_role",
                       "Where a negative's replaced turns come from: per_role, utterances of the "
                       "replaced turn's role (speakers numbered by first appearance) in other "
                       "dialogues, as the paper (Sec. 3.1, 'the utterances of p2') and the released "
                       "generate_training.py (role-0 pool for role-0 turns) do; mixed, utterances of "
                       "any role of other dialogues.", choices=NEGATIVE_POOLS)


@register_method
class Dial2vecSpec(MethodSpec):
    """dial2vec, trained on `dial2vec` examples (a dialogue and its negatives, packed)."""

    name = "dial2vec"
    paper = "dial2vec (Liu et al., EMNLP 2022)"
    builder = "dial2vec"
    options = (NEGATIVES, TEMPERATURE, WINDOW, KEPT_ROLE, NEGATIVE_POOL, ROLE_TURN_EMBEDDINGS, SEPARATOR, NUM_ROLES,
               LOSS, CONTRAST, OPTIMIZER)
    defaults = {"batch_size": 20, "learning_rate": 1e-5, "freeze_layers": 6, "max_length": 512}
    """dial2vec Sec. 4.1: batch 20 (5 per GPU on 4 GPUs; the released script runs 5 on one),
    learning rate 1e-5, the bottom 6 layers frozen, 512 tokens."""
    offers = ("dialogue",)
    bench_defaults = {"batch": 2, "dialogues": 500, "max_length": 512, "steps": 5, "warmup": 1}

    def builder_params(self, params):
        return {"negatives": params.negatives, "negative_role": NEGATIVE_ROLE[params.dial2vec_kept_role],
                "negative_pool": params.dial2vec_negative_pool, "max_roles": params.num_roles}

    def build_options(self, params):
        return {"dialogue_separator": f"[{params.separator.upper()}]"}

    def encoder_options(self, params):
        if not params.role_turn_embeddings:
            return {}
        return {"role_vocab_size": ROLE_VOCAB_SIZE, "turn_vocab_size": TURN_VOCAB_SIZE}

    def make_model(self, encoder, params):
        return Dial2vecModel(encoder, negatives=params.negatives, temperature=params.temperature,
                             window=params.window, num_roles=params.num_roles,
                             role_turn_embeddings=params.role_turn_embeddings,
                             loss_variant=params.dial2vec_loss, contrast=params.dial2vec_contrast)

    def unused_options(self, params):
        return (WINDOW.name,) if params.dial2vec_contrast == "dialogue" else ()

    def optimizer_settings(self, params):
        return dict(RELEASED_OPTIMIZER) if params.dial2vec_optimizer == "released" else {}

    def schedule_steps(self, params, examples, num_epochs):
        """The released schedule spans t_total = the training examples, one per line of the
        released train.tsv (run.py `peek_num_train_examples`), whatever the steps."""
        del num_epochs
        return examples if params.dial2vec_optimizer == "released" else None

    def inference_settings(self, params):
        return {"dialogue": {"separator": params.separator, "num_roles": params.num_roles}}

    def bench_sequences(self, batch, params):
        """Every sample of every dialogue ([B·S, T]), as the step encodes them (with
        `dial2vec_contrast=dialogue` each dialogue once more, the anchor)."""
        samples = params.negatives + 1
        sequences = {"samples": batch["samples"][:, :samples], "samples_mask": batch["samples_mask"][:, :samples]}
        if params.dial2vec_contrast == "dialogue":
            sequences.update(anchor=batch["samples"][:, 0], anchor_mask=batch["samples_mask"][:, 0])
        return default_bench_sequences(sequences)
