"""Latency of the exported response-selection scorer against the bare encoder on the same tokens.

One request is one context and C candidates (`rank` signature of `--kind=selection`, what a
response-selection service answers). The model is FGC's cross-encoder on the checkpoint (its head
untrained: the head is one dense layer, so its weights do not change the time); it is exported to
a temporary directory, loaded back as TF Serving would, and its `rank` call is timed in
alternation with the encoder's forward pass on the very pairs the export packs, so the ratio
shows what tokenization, packing and the head cost on top of the encoder.
"""
import tempfile
from typing import Dict

import numpy as np

from tfdialemb.bench.demo_data import demo_utterances
from tfdialemb.bench.timing import time_alternating
from tfdialemb.demo.corpus import generate
from tfdialemb.methods.spec import get_method


def bench_selection(checkpoint: str, candidates: int = 10, context_turns: int = 4, max_length: int = 128,
                    steps: int = 10, warmup: int = 2, seed: int = 0) -> Dict:
    """ms per request and per candidate of the export's `rank`, the encoder's on the same pairs,
    and their ratio; raises AssertionError if the export scores otherwise than the library."""
    # pylint: disable=import-outside-toplevel
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the ops the export's graph uses)

    from tfdialemb.encoders.checkpoint import load_pretrained
    from tfdialemb.inference.pair_scorer import PairScorer
    from tfdialemb.serving import layout, selection

    utterances = demo_utterances(context_turns + candidates, seed)
    context, responses = utterances[:context_turns], utterances[context_turns:]
    pretrained = load_pretrained(checkpoint)
    spec = get_method("fgc")
    model = spec.make_model(pretrained.encoder, spec.resolve())
    scorer = PairScorer(model, pretrained.tokenizer, max_length=max_length)
    inputs = scorer.pack(tf.constant(context * candidates), tf.fill([candidates], len(context)),
                         tf.constant(responses))
    encode = tf.function(lambda: model.encoder(inputs, training=False)["sequence_output"])
    with tempfile.TemporaryDirectory(prefix="tfdialemb-bench-") as directory:
        path = layout.write_version(*selection.selection_servable(scorer, generate(2, seed)), directory, 1)
        rank = tf.saved_model.load(path).signatures[selection.RANK_SIGNATURE]
        request = {"turns": tf.constant(context), "candidates": tf.constant(responses)}
        served = rank(**request)["scores"].numpy()
        np.testing.assert_allclose(served, scorer.score([context] * candidates, responses), atol=1e-5)
        export_s, encoder_s = time_alternating(lambda: rank(**request)["scores"].numpy(),
                                               lambda: encode().numpy(), steps, warmup)
    tokens = int(tf.reduce_sum(inputs["input_mask"]))
    return {
        "candidates": candidates, "context_turns": context_turns, "max_length": max_length,
        "pair_tokens": tokens, "padded_length": int(inputs["input_word_ids"].shape[1]),
        "export_ms_per_request": 1000 * export_s, "export_ms_per_candidate": 1000 * export_s / candidates,
        "encoder_ms_per_request": 1000 * encoder_s, "export_vs_encoder": export_s / encoder_s,
    }


def format_report(report: Dict) -> str:
    return "\n".join([
        f"response selection: one context ({report['context_turns']} turns) and {report['candidates']} "
        f"candidates, {report['pair_tokens']} tokens padded to {report['padded_length']} per pair "
        f"(max_length {report['max_length']})",
        f"  exported `rank` signature: {report['export_ms_per_request']:.1f} ms per request, "
        f"{report['export_ms_per_candidate']:.2f} ms per candidate",
        f"  bare encoder on the same pairs: {report['encoder_ms_per_request']:.1f} ms",
        f"  export / encoder: {report['export_vs_encoder']:.2f}x",
    ])
