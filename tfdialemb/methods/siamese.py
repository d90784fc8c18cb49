"""The siamese-network baselines of DialogueCSE Table 2: SiameseBERT_S and SiameseBERT_M.

DialogueCSE (Sec. 5.2.2) re-implements both with BERT "according to their original approaches":
SiameseBERT_S "shares the architecture with Yang et al. (2018); Reimers and Gurevych (2019)" and
"is equipped with a non-linear activation function in the matching layer"; SiameseBERT_M "has
the similar architecture as Henderson et al. (2020)", "flattens the multi-turn context" and has
"an MLP layer on top of the sentence encoders". It gives no further detail, so the matching
layers follow the cited papers:

  - variant="single" (Yang et al., 2018, input-response prediction): the input u_{k-1} and the
    response are mean-pooled by the shared encoder; only the response side goes through a
    feed-forward network (Yang et al. found one side enough to model the input/response
    asymmetry), and the score is the plain dot product S(x, y) = u · FFN(v).
  - variant="multi" (ConveRT, Henderson et al., 2020): the flattened context and the response
    each go through their own feed-forward network on top of the shared encoder, and the score is
    the scaled cosine S(x, y) = C · cos(h_x, h_y) with a learned scale C (kept as log C, so it
    stays positive; it starts at 1/`temperature`, DialogueCSE's τ, so both methods start equally
    sharp).

Neither DialogueCSE nor our reading of the sources fixes the FFN's depth or activation; we chose
a hidden tanh layer of the encoder's width and a linear output layer, the smallest non-linear
MLP that fits DialogueCSE's description. Objective: both papers take a softmax over the true
response and negatives (the other responses of the batch there); here the negatives are the
`negatives` utterances sampled from other dialogues by the `siamese` builder, exactly
DialogueCSE's, so Table 2 compares matching layers rather than negative sampling; the loss is
-log softmax of the true response (`candidate_nt_xent` on the logits). The FFNs only serve
training: the sentence embedding evaluated is, as for every method, the mean pooling of the
encoder's last layer.
"""
from tfdialemb.methods.mge import DIALOGUE_CSE_DEFAULTS, TURNS
from tfdialemb.methods.shared_options import NEGATIVES, TEMPERATURE
from tfdialemb.methods.spec import MethodSpec, register_method

VARIANTS = ("single", "multi")
CONTEXT_FEATURE = {"single": "previous", "multi": "context"}


class _SiameseSpec(MethodSpec):
    """The siamese baselines of DialogueCSE Table 2, trained on `siamese` examples."""

    paper = "DialogueCSE (Liu et al., EMNLP 2021), Table 2 baselines"
    builder = "siamese"
    defaults = DIALOGUE_CSE_DEFAULTS
    offers = ("sentence",)
    variant = ""

    def make_model(self, encoder, params):
        from tfdialemb.methods.models.siamese import SiameseModel  # pylint: disable=import-outside-toplevel

        return SiameseModel(encoder, variant=self.variant, negatives=params.negatives,
                            temperature=params.get("temperature", TEMPERATURE.default))

    def inference_settings(self, params):
        return {"sentence": {"pooling": "mean"}}


@register_method
class SiameseSingleSpec(_SiameseSpec):
    """SiameseBERT_S: the previous utterance against the response."""

    name = "siamese_s"
    variant = "single"
    options = (NEGATIVES,)

    def builder_params(self, params):
        return {"negatives": params.negatives}


@register_method
class SiameseMultiSpec(_SiameseSpec):
    """SiameseBERT_M: the flattened context against the response, scaled cosine."""

    name = "siamese_m"
    variant = "multi"
    options = (TURNS, NEGATIVES, TEMPERATURE)

    def builder_params(self, params):
        return {"negatives": params.negatives, "context_turns": params.turns}
