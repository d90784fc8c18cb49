"""Throughput of the dialogue augmentations (thesis Sec. 4.1) on demo dialogues.

Fill-mask insertion with its utterance windows batched (`--fill_batch_size` rows per model call,
the default) vs one utterance window per call, on the same dialogues, seeds and model, with the
results checked equal; and the whole a-l-m set as `python -m tfdialemb.augment` runs it (insert,
replace, crop, shuffle, in batches of dialogues). Without --context_response_model the set is
a-l-m-dse: the same operations, crop and shuffle scored by the sentence encoder's cosine.
Without --fill_mask_model the fill-mask model is the encoder with a random masked-LM head: the
model calls cost the same, but nearly every fill falls under --min_fill_prob, so the bench sets
that to 0 for both sides to write every fill as a trained head would.
"""
import time
from typing import Optional

from tfdialemb.augment.augmented_file import Plan, augment_chunk
from tfdialemb.augment.fill_mask import FillMaskModel
from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.operations import OperationSet, load_similarity
from tfdialemb.augment.presets import get_preset
from tfdialemb.augment.token_insertion import TokenInsertion
from tfdialemb.augment.shuffle import StageShuffle
from tfdialemb.augment.token_replacement import TokenReplacement
from tfdialemb.bench.timing import time_call
from tfdialemb.demo_corpus import generate

ONE_AT_A_TIME = 1
CLI_BATCH = 32
"""Dialogues per batch of the set, as `python -m tfdialemb.augment` defaults to."""


def _fill_mask_model(checkpoint: str, fill_mask_model: Optional[str]) -> FillMaskModel:
    if fill_mask_model:
        return FillMaskModel.load(fill_mask_model)
    from tfdialemb.encoders import load_pretrained  # pylint: disable=import-outside-toplevel

    pretrained = load_pretrained(checkpoint)
    return FillMaskModel(pretrained.encoder, pretrained.tokenizer)


def bench_augment(checkpoint: str, dialogues: int, fill_batch_size: int = 64, repeats: int = 1,
                  fill_mask_model: Optional[str] = None, context_response_model: Optional[str] = None,
                  seed: int = 0) -> dict:
    """Dialogues per second of insertion batched vs one window per call, and of the a-l-m set."""
    corpus = list(generate(dialogues, seed))
    model = _fill_mask_model(checkpoint, fill_mask_model)
    threshold = {} if fill_mask_model else {"min_fill_prob": 0.0}
    batched = TokenInsertion(model, seed=seed, fill_batch_size=fill_batch_size, **threshold)
    single = TokenInsertion(model, seed=seed, fill_batch_size=ONE_AT_A_TIME, **threshold)
    warm = corpus[:4]
    batched.augment(warm)
    single.augment(warm)
    results = {}

    def run(name, operation):
        results[name] = operation.augment(corpus)

    batched_s = time_call(lambda: run("batched", batched), repeats, 0)
    single_s = time_call(lambda: run("single", single), repeats, 0)
    if results["batched"] != results["single"]:
        raise AssertionError("batched and one-at-a-time insertion differ; the benchmark compares equal work")
    windows = sum(len(d.turns) for d in corpus)

    preset = get_preset("a-l-m" if context_response_model else "a-l-m-dse")
    similarity = (load_similarity("context_response", context_response_model) if context_response_model
                  else load_similarity("sentence_encoder", checkpoint))
    operations = OperationSet((TokenInsertion(model, seed=seed, **threshold),
                               TokenReplacement(model, seed=seed, **threshold),
                               StageCrop(similarity, seed=seed), StageShuffle(similarity, seed=seed)), similarity)
    if operations.names != preset.operations:
        raise AssertionError(f"the bench builds {operations.names}, set {preset.name} is {preset.operations}")
    plan = Plan("", "", operations.names, seed=seed, batch_size=CLI_BATCH)
    augment_chunk(corpus[:CLI_BATCH], operations, plan)
    start = time.perf_counter()
    lines = augment_chunk(corpus, operations, plan)
    set_s = time.perf_counter() - start
    return {
        "dialogues": dialogues, "utterance_windows": windows, "fill_batch_size": fill_batch_size,
        "fill_mask_model": fill_mask_model or f"{checkpoint} with a random masked-LM head",
        "insert_batched_dialogues_per_s": dialogues / batched_s,
        "insert_one_at_a_time_dialogues_per_s": dialogues / single_s,
        "insert_speedup": single_s / batched_s,
        "set": preset.name, "set_operations": list(operations.names),
        "set_dialogues_per_s": dialogues / set_s, "set_lines_written": len(lines),
    }


def format_report(report: dict) -> str:
    return "\n".join([
        f"augmentation throughput on {report['dialogues']} demo dialogues "
        f"({report['utterance_windows']} utterance windows); fill-mask model: {report['fill_mask_model']}",
        f"  insert, {report['fill_batch_size']} windows per call: "
        f"{report['insert_batched_dialogues_per_s']:.1f} dialogues/s",
        f"  insert, one window per call: {report['insert_one_at_a_time_dialogues_per_s']:.1f} dialogues/s "
        f"(batched is {report['insert_speedup']:.1f}x faster; same outputs)",
        f"  set {report['set']} ({', '.join(report['set_operations'])}), {CLI_BATCH} dialogues per batch: "
        f"{report['set_dialogues_per_s']:.1f} dialogues/s ({report['set_lines_written']} lines)",
    ])
