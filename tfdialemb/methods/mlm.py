"""Continued masked-LM pre-training (DialogueCSE stage 1): the encoder plus BERT's MLM head.

Batches come from `tfdialemb.data.masking.add_masks`: masked `input_word_ids`, `input_mask` and
the `masked_lm_positions` / `masked_lm_ids` / `masked_lm_weights` targets.
"""
from tfdialemb.data.choices import MASK_PROB, MAX_PREDICTIONS
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option
from tfdialemb.text.special_tokens import BERT_SPECIAL_TOKENS

MASK_PROB_OPTION = Option("mask_prob", MASK_PROB, "Fraction of tokens predicted (DialogueCSE: 0.15).",
                          lower_bound=0.0)
MAX_PREDICTIONS_OPTION = Option("max_predictions", MAX_PREDICTIONS,
                                "Masked predictions per sequence (DialogueCSE: 10).", lower_bound=1)
UNIT = Option("unit", "utterance", "One sequence per utterance, or per dialogue with turns joined by "
              "[SEP].", choices=("utterance", "dialogue"))


@register_method
class MlmSpec(MethodSpec):
    """Continued masked-LM pre-training (DialogueCSE stage 1) on `mlm` examples, masks drawn in the
    input pipeline, fresh every epoch."""

    name = "mlm"
    paper = "DialogueCSE (Liu et al., EMNLP 2021), Sec. 4.2 continued pre-training"
    builder = "mlm"
    command = "pretrain"
    options = (MASK_PROB_OPTION, MAX_PREDICTIONS_OPTION, UNIT)
    defaults = {"batch_size": 50, "learning_rate": 2e-5, "freeze_layers": 0, "max_length": 100,
                "num_epochs": 0.5}
    offers = ("sentence",)

    def builder_params(self, params):
        return {"unit": params.unit}

    def make_model(self, encoder, params):
        from tfdialemb.methods.models.mlm import MaskedLanguageModel  # pylint: disable=import-outside-toplevel

        return MaskedLanguageModel(encoder)

    def batches(self, dataset, tokenizer, params, run):
        from tfdialemb.data.masking import add_masks  # pylint: disable=import-outside-toplevel

        special = [tokenizer.token_id(t) for t in BERT_SPECIAL_TOKENS]
        special += [tokenizer.token_id(t) for t in tokenizer.special_tokens]
        return add_masks(dataset, run.seed, vocab_size=tokenizer.vocab_size, mask_id=tokenizer.mask_id,
                         special_ids=special, mask_prob=params.mask_prob,
                         max_predictions=params.max_predictions)

    def after_build(self, model, params, run):
        from tfdialemb.layers.masked_lm_head import load_masked_lm_head  # pylint: disable=import-outside-toplevel

        load_masked_lm_head(model.masked_lm, run.init_checkpoint)
