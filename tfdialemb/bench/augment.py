"""Throughput of a dialogue augmentation set (thesis Sec. 4.1) on long dialogues, against the
forward speed of the encoder it runs.

The corpus is `demo_data.chitchat_dialogues`: sessions of 45 turns, as long as real chit-chat.
The set is a-l-m (insert, replace, crop, shuffle) as `python -m tfdialemb.augment` runs it; without
--context_response_model it is a-l-m-dse, crop and shuffle scored by the encoder's cosine.
Without --fill_mask_model the fill-mask model is the encoder with a random masked-LM head: the
model calls cost the same, but nearly every inserted fill falls under --min_fill_prob, so the bench
sets that to 0 to write every fill as a trained head would (replacement's threshold is 0 already).

Three things are timed in turn (the median of --steps turns): the set in batches of 32 dialogues
(the command's default); the set one dialogue per batch, its output checked equal to the batched
run's (a dialogue's draws do not depend on the batch it falls in); and the encoder-forward bound:
the fill-mask model's encoder alone, one forward pass over exactly the tokens the set must encode,
sorted by length and batched as the set batches them. Those tokens are every fill-mask window of
insert and replace (`MaskFilling.model_inputs`: each masked utterance with its neighbours), in
rows of --fill_batch_size, and each distinct utterance of a batch of dialogues once for the
similarity model ([CLS] utterance [SEP]), in rows of --model_batch_size. The set's time over the
bound's is the ratio reported: 1 would be augmenting at the encoder's forward speed, with the
masked-LM head, the sampling, the stage clustering and all the Python around them free.
"""
import os
import time
from typing import List, Optional, Sequence, Tuple

import numpy as np

from tfdialemb.augment.augmented_file import Plan, augment_chunk
from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.mask_filling import MaskFilling
from tfdialemb.augment.operations import OperationSet, load_similarity
from tfdialemb.augment.presets import get_preset
from tfdialemb.augment.shuffle import StageShuffle
from tfdialemb.augment.token_insertion import TokenInsertion
from tfdialemb.augment.token_replacement import TokenReplacement
from tfdialemb.bench.demo_data import CHITCHAT_TURNS, chitchat_dialogues
from tfdialemb.bench.timing import time_in_turns
from tfdialemb.dialogue import Dialogue
from tfdialemb.inference.kinds import load

CLI_BATCH = 32
"""Dialogues per batch of the set, as `python -m tfdialemb.augment` defaults to."""
SIMILARITY_BATCH = 64
"""Texts per forward pass of the similarity model (--model_batch_size's default)."""


def _fill_mask_model(checkpoint: str, fill_mask_model: Optional[str]):
    """The `FillMaskModel` of --fill_mask_model, else the encoder with a random masked-LM head."""
    from tfdialemb.augment.fill_mask import FillMaskModel  # pylint: disable=import-outside-toplevel
    from tfdialemb.encoders.checkpoint import load_pretrained  # pylint: disable=import-outside-toplevel

    if fill_mask_model:
        return FillMaskModel.load(fill_mask_model)

    pretrained = load_pretrained(checkpoint)
    return FillMaskModel(pretrained.encoder, pretrained.tokenizer)


def _length_batches(sequences: Sequence[Sequence[int]], rows: int) -> List[Tuple[np.ndarray, np.ndarray]]:
    """`sequences` sorted by length in batches of `rows`, each padded (id 0) to its own longest,
    with its mask."""
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    batches = []
    for start in range(0, len(order), rows):
        chosen = [sequences[i] for i in order[start:start + rows]]
        length = max(len(ids) for ids in chosen)
        word_ids = np.zeros([len(chosen), length], np.int32)
        mask = np.zeros([len(chosen), length], np.int32)
        for row, ids in enumerate(chosen):
            word_ids[row, :len(ids)] = ids
            mask[row, :len(ids)] = 1
        batches.append((word_ids, mask))
    return batches


def bound_inputs(corpus: Sequence[Dialogue], fill_operations: Sequence[MaskFilling], fill_rows: int,
                 similarity_rows: int) -> Tuple[List[Tuple[np.ndarray, np.ndarray]], int, int]:
    """The encoder batches of the bound for `corpus` in batches of CLI_BATCH dialogues, and the
    tokens of the fill-mask windows and of the similarity's utterances."""
    model = fill_operations[0].model
    tokenizer = model.tokenizer
    batches, fill_tokens, similarity_tokens = [], 0, 0
    for start in range(0, len(corpus), CLI_BATCH):
        dialogues = corpus[start:start + CLI_BATCH]
        for operation in fill_operations:
            sequences, positions = operation.model_inputs(dialogues)
            masked = [ids for ids, places in zip(sequences, positions) if places]
            fill_tokens += sum(len(ids) for ids in masked)
            batches += _length_batches(masked, fill_rows)
        texts = list(dict.fromkeys(turn.text for dialogue in dialogues for turn in dialogue.turns))
        pieces = tokenizer.tokenize(texts, max_tokens=model.max_length - 2).to_list()
        utterances = [[tokenizer.cls_id] + ids + [tokenizer.sep_id] for ids in pieces]
        similarity_tokens += sum(len(ids) for ids in utterances)
        batches += _length_batches(utterances, similarity_rows)
    return batches, fill_tokens, similarity_tokens


def bench_augment(checkpoint: str, dialogues: int, fill_batch_size: int = 64, steps: int = 1,
                  fill_mask_model: Optional[str] = None, context_response_model: Optional[str] = None,
                  seed: int = 0, turns: int = CHITCHAT_TURNS) -> dict:
    """The set's dialogues and utterances per second in batches of CLI_BATCH dialogues and one
    dialogue at a time, and the encoder-forward bound's."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    corpus = list(chitchat_dialogues(dialogues, turns, seed))
    model = _fill_mask_model(checkpoint, fill_mask_model)
    threshold = {} if fill_mask_model else {"min_fill_prob": 0.0}
    preset = get_preset("a-l-m" if context_response_model else "a-l-m-dse")
    similarity = (load_similarity("context_response", context_response_model, load) if context_response_model
                  else load_similarity("sentence_encoder", checkpoint, load, batch_size=SIMILARITY_BATCH))
    fill = (TokenInsertion(model, seed=seed, fill_batch_size=fill_batch_size, **threshold),
            TokenReplacement(model, seed=seed, fill_batch_size=fill_batch_size))
    operations = OperationSet(fill + (StageCrop(similarity, seed=seed), StageShuffle(similarity, seed=seed)),
                              similarity)
    if operations.names != preset.operations:
        raise AssertionError(f"the bench builds {operations.names}, set {preset.name} is {preset.operations}")
    batched = Plan("", "", operations.names, seed=seed, batch_size=CLI_BATCH)
    alone = Plan("", "", operations.names, seed=seed, batch_size=1)
    bound_batches, fill_tokens, similarity_tokens = bound_inputs(corpus, fill, fill_batch_size, SIMILARITY_BATCH)
    bound_batches = [(tf.constant(ids), tf.constant(mask)) for ids, mask in bound_batches]
    encoder = model.encoder
    forward = tf.function(lambda ids, mask: encoder({"input_word_ids": ids, "input_mask": mask},
                                                    training=False)["sequence_output"],
                          input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2, autograph=False)

    # Untimed: every graph traced (the similarity's once it has enough batches to pay for it).
    augment_chunk(corpus[:2], operations, alone)
    similarity.matrices([[turn.text for dialogue in corpus for turn in dialogue.turns]])
    forward(*bound_batches[0]).numpy()
    outputs = {}

    def run(name: str, plan: Plan) -> None:
        outputs[name] = augment_chunk(corpus, operations, plan)

    def bound() -> None:
        for ids, mask in bound_batches:
            forward(ids, mask).numpy()

    load_before = os.getloadavg()
    start = time.perf_counter()
    set_s, alone_s, bound_s = time_in_turns((lambda: run("batched", batched), lambda: run("alone", alone), bound),
                                            steps, 0)
    elapsed = time.perf_counter() - start
    if outputs["batched"] != outputs["alone"]:
        raise AssertionError("the set in batches and one dialogue at a time wrote different lines")
    utterances = sum(len(d.turns) for d in corpus)
    return {
        "dialogues": dialogues, "utterances": utterances, "turns_per_dialogue": turns,
        "fill_mask_model": fill_mask_model or f"{checkpoint} with a random masked-LM head",
        "set": preset.name, "set_operations": list(operations.names), "lines_written": len(outputs["batched"]),
        "fill_window_tokens": fill_tokens, "similarity_tokens": similarity_tokens,
        "set_s": set_s, "set_dialogues_per_s": dialogues / set_s, "set_utterances_per_s": utterances / set_s,
        "one_dialogue_per_batch_s": alone_s, "one_dialogue_per_batch_utterances_per_s": utterances / alone_s,
        "bound_s": bound_s, "bound_utterances_per_s": utterances / bound_s,
        "bound_tokens_per_s": (fill_tokens + similarity_tokens) / bound_s, "ratio_to_bound": set_s / bound_s,
        "one_dialogue_per_batch_ratio_to_bound": alone_s / bound_s,
        "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())], "timed_s": elapsed,
    }


def format_report(report: dict) -> str:
    before, after = report["load_average"][:3], report["load_average"][3:]
    return "\n".join([
        f"augmentation set {report['set']} ({', '.join(report['set_operations'])}) on {report['dialogues']} "
        f"generated dialogues of {report['turns_per_dialogue']} turns ({report['utterances']} utterances); "
        f"fill-mask model: {report['fill_mask_model']}",
        f"  tokens the set encodes: {report['fill_window_tokens']} in fill-mask windows (insert and replace), "
        f"{report['similarity_tokens']} in the similarity's utterances",
        f"  encoder-forward bound (one pass over those tokens, batched): {report['bound_s']:.1f} s, "
        f"{report['bound_utterances_per_s']:.1f} utterances/s ({report['bound_tokens_per_s']:.0f} tokens/s)",
        f"  set, {CLI_BATCH} dialogues per batch: {report['set_s']:.1f} s, {report['set_utterances_per_s']:.1f} "
        f"utterances/s, {report['set_dialogues_per_s']:.2f} dialogues/s: {report['ratio_to_bound']:.2f}x the bound "
        f"({report['lines_written']} lines)",
        f"  set, one dialogue per batch: {report['one_dialogue_per_batch_s']:.1f} s, "
        f"{report['one_dialogue_per_batch_utterances_per_s']:.1f} utterances/s: "
        f"{report['one_dialogue_per_batch_ratio_to_bound']:.2f}x the bound (same lines)",
        f"  load average (1, 5, 15 min) before {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}, "
        f"after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}",
    ])
