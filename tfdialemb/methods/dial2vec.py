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
scored at the dialogue level (see `tfdialemb.methods.models.dial2vec.Dial2vecModel`).

Encoder inputs and the dialogue embeddings (Eq. 4, Table 4) are `tfdialemb.layers.dialogue_views`,
shared with inference.
"""
from tfdialemb.data.examples.dial2vec import NEGATIVE_POOLS
from tfdialemb.inference_settings import NUM_ROLES, SEPARATOR
from tfdialemb.layers.choices import DEFAULT_WINDOW
from tfdialemb.losses.choices import DEFAULT_TEMPERATURE
from tfdialemb.methods.shared_options import NEGATIVES
from tfdialemb.methods.spec import MethodSpec, default_bench_sequences, register_method
from tfdialemb.core.options import Option, Switch

LOSS_VARIANTS = ("paper", "released")
CONTRASTS = ("interlocutor", "dialogue")

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
        from tfdialemb.methods.models.dial2vec import Dial2vecModel  # pylint: disable=import-outside-toplevel

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
