"""DialogueCSE: contrastive learning through the matching-guided embedding (MGE).

Each context utterance and each candidate response is encoded separately by the shared encoder
(Sec. 3.1); MatchingGuidedEmbedding turns them into similarity logits (Eq. 3-7) and the
candidate NT-Xent (Eq. 8) pulls the true response's context-aware and context-free embeddings
together against the negatives sampled from other dialogues.

Context (`turns`, `context_split`): the paper says "the number of context turns is 3" over a
bidirectional context. `per_side` (the default) reads it as the authors' code does
(dialogue-cse config_bert.py: round_num=3, bidirectional=1): `turns` preceding and `turns`
following utterances. `nearest` takes the `turns` utterances nearest to the response,
⌈turns/2⌉ preceding and ⌊turns/2⌋ following it, the other side making up for a side that has
fewer (turns=3 → u_{k-2}, u_{k-1}, u_{k+1}). Either split goes with either scoring variant.
Batches come from the `mge` example builder.
"""
from tfdialemb.methods.shared_options import NEGATIVES, TEMPERATURE
from tfdialemb.methods.spec import MethodSpec, default_bench_sequences, register_method
from tfdialemb.core.options import Option, Switch

VARIANTS = ("paper", "released")
CONTEXT_SPLITS = ("per_side", "nearest")

DIALOGUE_CSE_DEFAULTS = {"batch_size": 20, "learning_rate": 5e-5, "freeze_layers": 6, "max_length": 50}
"""DialogueCSE Sec. 4.2: batch 20, learning rate 5e-5, the bottom 6 layers frozen, 50 tokens."""
TURNS = Option("turns", 3, "Context utterances around the response (DialogueCSE Sec. 4.2: 3; "
               "--context_split says on which sides).", lower_bound=1)
CONTEXT_SPLIT = Option("context_split", "per_side", "Which context utterances: per_side, --turns preceding and --turns following "
                       "utterances (the authors' config_bert.py round_num=3, bidirectional=1); nearest, the "
                       "--turns nearest ones, ⌈N/2⌉ before and ⌊N/2⌋ after.", choices=CONTEXT_SPLITS)
AGGREGATION = Option("aggregation", "i2", "Turn aggregation: I1 (Eq. 5-6) or I2 (Eq. 7).",
                     choices=("i1", "i2"))
VARIANT = Switch("mge_variant", "paper", "MGE scoring.",
                 paper="Eq. 3-8: --aggregation, --temperature",
                 released="AlibabaResearch/DAMO-ConvAI dialogue-cse/model/dse_cl_bert.py:CLBERT.forward: "
                          "×0.1 logit scaling, Σ(1+α)R̂ over the turns, loss divided by the candidates")


@register_method
class MgeSpec(MethodSpec):
    """DialogueCSE's matching-guided embedding, trained on `mge` examples."""

    name = "mge"
    paper = "DialogueCSE (Liu et al., EMNLP 2021)"
    builder = "mge"
    options = (TURNS, CONTEXT_SPLIT, NEGATIVES, AGGREGATION, TEMPERATURE, VARIANT)
    defaults = DIALOGUE_CSE_DEFAULTS
    offers = ("sentence",)
    bench_defaults = {"batch": 32, "dialogues": 2000, "max_length": 64, "steps": 10, "warmup": 2}

    def resolve(self, given=None):
        """The options, refusing those the released scoring has no use for: it scales logits by
        0.1 instead of a temperature and sums over turns instead of I1/I2."""
        params = super().resolve(given)
        unused = sorted(set(given or {}) & {TEMPERATURE.name, AGGREGATION.name})
        if params[VARIANT.name] == "released" and unused:
            raise ValueError(f"{', '.join('--' + name for name in unused)} do(es) not apply to "
                             f"--{VARIANT.name}=released (×0.1 logit scaling, Σ(1+α)R̂ over the turns); drop it")
        return params

    def unused_options(self, params):
        return (TEMPERATURE.name, AGGREGATION.name) if params[VARIANT.name] == "released" else ()

    def optimizer_settings(self, params):
        """The released optimiser goes with the released scoring (wrapper_bert.py: Adam, lr
        max(5e-5 · 0.98^(step/10000), 1e-5), gradients clipped to global norm 3)."""
        if params[VARIANT.name] != "released":
            return {}
        return {"schedule": "exponential", "decay_rate": 0.98, "decay_steps": 10000, "min_learning_rate": 1e-5,
                "global_clipnorm": 3.0}

    def builder_params(self, params):
        return {"negatives": params.negatives, "context_before": params.turns,
                "context_after": params.turns}

    def make_model(self, encoder, params):
        from tfdialemb.methods.models.mge import MatchingGuidedEmbeddingModel  # pylint: disable=import-outside-toplevel

        return MatchingGuidedEmbeddingModel(
            encoder, turns=params.turns, negatives=params.negatives,
            aggregation=params.aggregation, temperature=params.temperature,
            variant=params.mge_variant, context_split=params.context_split)

    def inference_settings(self, params):
        return {"sentence": {"pooling": "mean"}}

    def bench_sequences(self, batch, params):
        """The very sequences MGE encodes: the chosen context turns and the candidates used."""
        from tfdialemb.methods.models.base import leading_candidates  # pylint: disable=import-outside-toplevel
        from tfdialemb.methods.models.mge import select_context  # pylint: disable=import-outside-toplevel

        context, context_mask, _ = select_context(
            batch["context_before"], batch["context_before_mask"], batch["context_after"],
            batch["context_after_mask"], params.turns, params.context_split)
        candidates, candidates_mask = leading_candidates(batch, params.negatives)
        return default_bench_sequences({"context": context, "context_mask": context_mask,
                                        "candidates": candidates, "candidates_mask": candidates_mask})
