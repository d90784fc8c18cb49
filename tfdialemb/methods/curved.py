"""Curved contrastive learning (triple-encoders paper): the CCL bi-encoder (Sec. 2) and the
C3L triple-encoder (Sec. 3), one architecture.

One shared encoder embeds every text as the masked mean of its last layer, unnormalised, with
nothing frozen (Justus-Jonas/imaginaryNLP imaginaryNLP/trainer.py, UKPLab/acl2024-triple-encoders
triple_encoders/trainer.py); each text column is encoded as its own padded
batch, as sentence-transformers does. `variant` names the batches the model trains on:

  - "ccl" (`ccl` builder: before, after, target): cos(E([S] [B] u_i), E([A] u_k)) is regressed
    onto 1 - (k-i)/l for positives and 0 for the directional and random hard negatives (Sec. 2).
  - "c3l" (`c3l` builder: b1, b2, after, target): the anchor is the mean
    (E([B1] [S] [B] u_i) + E([B2] [S] [B] u_j)) / 2, regressed onto Eq. 1 for positives and 0
    for the hard negatives of Eq. 2 (UKPLab/acl2024-triple-encoders
    triple_encoders/losses/CosineSimilarityTripleEncoderLoss.py).

Both use `cosine_mse`. Auxiliary NLI objective (Sec. 3): batches then also carry the keys of
`tfdialemb.data.nli` (merged in by the training command's `auxiliary` hook), one NLI pair per
example. The paper gives no schedule; `nli_schedule="alternate"` (the default) trains as the
released code does (sentence-transformers 2.2.2 `SentenceTransformer.fit` with two objectives):
each step, the curved objective, then the NLI objective on the updated weights, each with its own
AdamW and schedule over the same parameters (`objectives`, applied in turn by the training loop).
`"sum"` adds each example's `nli_contrastive` loss to its curved loss in one step with one
optimizer.
"""
from tfdialemb.data.examples.curved import POSITIVES
from tfdialemb.inference_settings import SPEAKER_TOKENS
from tfdialemb.method_record import trained_method_name
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option, Switch

CURVED_DEFAULTS = {"batch_size": 32, "learning_rate": 2e-5, "freeze_layers": 0, "max_length": 512,
                   "weight_decay": 0.01, "warmup_fraction": 0.1, "lr_schedule": "linear", "num_epochs": 10}
"""Triple-encoders Sec. 5.1: batch 32, learning rate 2e-5, weight decay 0.01, 10 % linear warm-up
then linear decay, nothing frozen, 10 epochs ("model selection on the validation set after 10
epochs of training"); 512 tokens as the released trainers."""
WINDOW = Option("curved_window", 5, "Observation window l (Sec. 2).", lower_bound=2)
WINDOWS = Switch("ccl_windows", "paper", "The windows slid over each dialogue.",
                 paper="every window, the one ending at the last utterance included",
                 released="Justus-Jonas/imaginaryNLP imaginaryNLP/trainer.py, "
                          "UKPLab/acl2024-triple-encoders triple_encoders/trainer.py: the last "
                          "window is skipped")
NLI_FILE = Option("nli_file", None, "Local AllNLI.tsv.gz for the auxiliary NLI objective "
                  "(sbert.net); none: no auxiliary objective.", kind=str)
NLI_SCHEDULES = ("alternate", "sum")
NLI_SCHEDULE = Option("nli_schedule", "alternate", "How the NLI objective trains beside the dialogue one: "
                      "alternate, each step the dialogue objective then the NLI one, each with its own AdamW "
                      "(the released code's sentence-transformers fit with two objectives; the paper gives "
                      "none); sum, their losses added in one step with one optimizer.", choices=NLI_SCHEDULES)
NLI_LABELS = Switch("ccl_nli_labels", "paper", "The NLI pairs of the auxiliary objective.",
                    paper="entailment and contradiction pairs only",
                    released="Justus-Jonas/imaginaryNLP imaginaryNLP/trainer.py: neutral pairs "
                             "kept with label 2")
C3L_LABELS = Switch("c3l_labels", "paper", "C3L regression targets (Eq. 1).",
                    paper="Eq. 1's min-max normalisation to [1/l, 1]",
                    released="UKPLab/acl2024-triple-encoders "
                             "triple_encoders/trainer.py:_generate_C3L_data: the observed range "
                             "scaled to [0.2, 1]")

C3L_POSITIVES = Option("c3l_positives", "curved", "The positive triples' targets: curved, Eq. 1's "
                       "norm(2 - (2k - (i+j))/l); hard, 1 for every positive, triple-encoders Table 4's "
                       "ablation 'hard positives / no curvature' (trained there from the base encoder, "
                       "not from a CCL model).", choices=POSITIVES)


class _CurvedSpec(MethodSpec):
    """CCL and C3L: one architecture, told apart by their builder."""

    paper = "Triple-encoders (Erker et al., 2024)"
    defaults = CURVED_DEFAULTS
    offers = ("curved", "sentence")
    bench_defaults = {"batch": 32, "dialogues": 500, "max_length": 64, "steps": 5, "warmup": 1}

    @property
    def builder(self):
        return self.name

    def builder_params(self, params):
        return {"window": params.curved_window, "last_window": params.ccl_windows == "paper",
                "speaker_tokens": params.speaker_tokens}

    def make_model(self, encoder, params):
        from tfdialemb.methods.models.curved import CurvedContrastiveModel  # pylint: disable=import-outside-toplevel

        schedule = params.nli_schedule if params.nli_file else "sum"
        return CurvedContrastiveModel(encoder, variant=self.name, nli_schedule=schedule)

    def unused_options(self, params):
        return () if params.nli_file else (NLI_SCHEDULE.name, NLI_LABELS.name)

    def auxiliary(self, params, run):
        if not params.nli_file:
            return None
        from tfdialemb.data import nli  # pylint: disable=import-outside-toplevel

        pairs = nli.read_nli(params.nli_file, params.ccl_nli_labels)
        return lambda context, tokenizer: nli.nli_dataset(pairs, tokenizer, run.batch_size, run.max_length,
                                                          run.seed, context)

    def inference_settings(self, params):
        return {"curved": {"curved": self.name, "speaker_tokens": params.speaker_tokens, "pooling": "mean"},
                "sentence": {"pooling": "mean"}}


@register_method
class CclSpec(_CurvedSpec):
    """The CCL bi-encoder on `ccl` pairs."""

    name = "ccl"
    options = (WINDOW, WINDOWS, SPEAKER_TOKENS, NLI_FILE, NLI_SCHEDULE, NLI_LABELS)


@register_method
class C3lSpec(_CurvedSpec):
    """The C3L triple-encoder on `c3l` triples, started from a CCL model."""

    name = "c3l"
    options = (WINDOW, WINDOWS, SPEAKER_TOKENS, NLI_FILE, NLI_SCHEDULE, NLI_LABELS, C3L_LABELS, C3L_POSITIVES)

    def builder_params(self, params):
        return {**super().builder_params(params), "labels": params.c3l_labels, "positives": params.c3l_positives}

    def unused_options(self, params):
        return super().unused_options(params) + ((C3L_LABELS.name,) if params.c3l_positives == "hard" else ())

    def check(self, params, run):
        """A warning when C3L does not start from a CCL model (Sec. 3); Table 4 trains the
        hard-positives ablation from the base encoder, so that one starts anywhere."""
        if params.c3l_positives == "curved" and trained_method_name(run.init_checkpoint) != "ccl":
            return [f"{run.init_checkpoint} is not a CCL model; the paper trains C3L from one "
                    "(bash run_train.sh ccl DATASET first)"]
        return []
