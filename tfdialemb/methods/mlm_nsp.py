"""Domain-adaptive post-training (BERT-DPT, Whang et al., 2020; the base FGC reports as strongest):
masked-LM and next-sentence prediction optimised jointly on the training dialogues.

Batches come from `mlm_nsp` examples: the context and the candidate next utterance are packed as
`[CLS] u_1 [EOT] … u_k [EOT] [SEP] u_next [EOT] [SEP]` (taesunwhang/BERT-ResSel
data/create_bert_post_training_data.py appends [EOT] to every utterance, the response too, the
`ums` layout of `tfdialemb.text.pair_packing`), then masked in the input pipeline with
google-research/bert's rules (15 %, at most 70 predictions as BERT-ResSel; [EOT] may be masked
as there, [CLS] / [SEP] never), fresh on every pass. The loss per sequence is the masked-LM loss
(`tfdialemb.methods.models.mlm.masked_lm_losses`) plus the next-sentence cross-entropy of a dense layer on the encoder's pooled
output, BERT's NSP head, with BERT's labels (0 the true next utterance, 1 a random one), so the
pre-trained heads of a checkpoint are loaded and continue training. BERT-ResSel masks whole words
(all pieces of a word together); the masks here are per piece.
"""
import dataclasses

from tfdialemb.methods.mlm import MASK_PROB_OPTION, MAX_PREDICTIONS_OPTION
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option
from tfdialemb.text.special_tokens import BERT_SPECIAL_TOKENS

LAYOUT = "ums"

SHORT_CONTEXT_PROB = Option("short_context_prob", 0.1, "Probability that a context keeps only a random "
                            "number of its latest turns (google-research/bert's short_seq_prob).",
                            lower_bound=0.0)
POST_TRAINING_MAX_PREDICTIONS = dataclasses.replace(MAX_PREDICTIONS_OPTION, default=70)


@register_method
class MlmNspSpec(MethodSpec):
    """BERT-DPT: masked-LM plus next-sentence post-training on `mlm_nsp` examples."""

    name = "mlm_nsp"
    paper = "BERT-DPT (Whang et al., 2020), the post-training FGC fine-tunes from"
    builder = "mlm_nsp"
    command = "pretrain"
    options = (MASK_PROB_OPTION, POST_TRAINING_MAX_PREDICTIONS, SHORT_CONTEXT_PROB)
    defaults = {"batch_size": 512, "learning_rate": 3e-5, "freeze_layers": 0, "max_length": 512,
                "num_epochs": 10}
    """FGC Sec. 5.2: 512 tokens, 10 passes with fresh masks; taesunwhang/BERT-ResSel config/hparams.py
    POST_TRAINING_PARAMS: virtual batch 512, learning rate 3e-5."""
    offers = ("sentence",)

    def builder_params(self, params):
        return {"short_context_prob": params.short_context_prob}

    def make_model(self, encoder, params):
        from tfdialemb.methods.models.mlm_nsp import PostTrainingModel  # pylint: disable=import-outside-toplevel

        return PostTrainingModel(encoder)

    def batches(self, dataset, tokenizer, params, run):
        # pylint: disable=import-outside-toplevel
        from tfdialemb.data.batch_seeds import map_with_batch_seeds
        from tfdialemb.methods.models.mlm_nsp import post_training_batch
        from tfdialemb.text.pair_packing import PairLayout

        layout = PairLayout.of(tokenizer, run.max_length, LAYOUT)
        mask = dict(vocab_size=tokenizer.vocab_size, mask_id=tokenizer.mask_id,
                    special_ids=[tokenizer.token_id(t) for t in BERT_SPECIAL_TOKENS],
                    mask_prob=params.mask_prob, max_predictions=params.max_predictions)
        return map_with_batch_seeds(dataset, run.seed,
                                    lambda batch, seed: post_training_batch(batch, seed, layout,
                                                                            tokenizer.pad_id, **mask))

    def after_build(self, model, params, run):
        # pylint: disable=import-outside-toplevel
        from tfdialemb.encoders.pretraining_heads import NSP_HEAD, load_head
        from tfdialemb.layers.masked_lm_head import load_masked_lm_head
        from tfdialemb.methods.models.mlm_nsp import next_sentence_variables

        load_masked_lm_head(model.masked_lm, run.init_checkpoint)
        load_head(next_sentence_variables(model), NSP_HEAD, run.init_checkpoint)
