r"""Triple-encoder (C3L) and CCL incremental scoring SavedModel (`--kind=curved`; triple-encoders paper Sec. 4,
Eq. 3, Appendix B; UKPLab/acl2024-triple-encoders
triple_encoders/TripleEncodersForConversationalSequenceModeling.py).

The server is stateless: each utterance is encoded once, when it is said, and the client keeps
its vectors and sends a dialogue's history back with every scoring request (the server-side
analogue of `tfdialemb.inference.SequenceScorer`). D is the encoder's hidden size.

  encode_context     utterances string [N] -> b1_even, b1_odd, b2_even, b2_odd float32 [N, D]:
                     E([B1] [E] [B] u), E([B1] [O] [B] u), E([B2] [E] [B] u), E([B2] [O] [B] u),
                     the training texts' formats (`data.examples.curved`); with
                     --speaker_tokens=false `b1`, `b2`; with --curved=ccl `before_even`,
                     `before_odd` (E([E] [B] u), E([O] [B] u)), or `before`
  encode_candidates  utterances string [N] -> after float32 [N, D]: E([A] u)
  score              b1 [h, D], b2 [h, D], candidates [C, D], k_last_rows int32 []
                     -> scores float64 [C]: Eq. 3, Σ_{i<j} cos((b1_i + b2_j) / 2, c) over the
                     history's triangle; k_last_rows = k > 0 keeps the rows j >= h - k (Sec.
                     4.1.2), 0 the full triangle
  score_maxsim       the same inputs -> scores: MaxSim over the same mixes (Appendix B)
  score_bi           before [h, D], candidates [C, D] -> scores: Σ_i cos(before_i, c), the
                     triple-encoder as bi-encoder on b2 rows (Sec. 6.1.2) or the CCL bi-encoder
                     on before rows

--curved=c3l (default) has all five, --curved=ccl encode_context, encode_candidates and
score_bi. Scores are float64, summed from up to h(h-1)/2 cosines, as SequenceScorer's.

Speaker tokens: an utterance's token is its distance to the candidate, the next utterance. With
h utterances said, u_i (0-based) takes [O] when h - i is odd and [E] when it is even: the most
recent is [O], the one before it [E], and so on (`speaker_token`). Every token flips when an
utterance is added, so the client keeps both variants of each utterance and picks, per turn,
each row by the parity of its distance from the end of the history (`history_rows`):

    import numpy as np, tensorflow as tf, tensorflow_text  # noqa: F401 (registers its ops)
    model = tf.saved_model.load("export/1")
    encode, score = model.signatures["encode_context"], model.signatures["score"]
    pool = model.signatures["encode_candidates"](utterances=tf.constant(texts))["after"]
    state = {"b1_even": [], "b1_odd": [], "b2_even": [], "b2_odd": []}
    for utterance in dialogue:                      # one encoder call per utterance said
        for name, rows in encode(utterances=tf.constant([utterance])).items():
            state[name].append(rows.numpy()[0])
        h = len(state["b1_odd"])
        rows = {s: np.stack([state[f"{s}_{'odd' if (h - i) % 2 else 'even'}"][i] for i in range(h)])
                for s in ("b1", "b2")}
        scores = score(**{s: tf.constant(v) for s, v in rows.items()}, candidates=pool,
                       k_last_rows=tf.constant(0))["scores"]
"""
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from tfdialemb.dialogue import Dialogue
from tfdialemb.inference.embedder import SentenceEmbedder
from tfdialemb.inference.sequence_scorer import SPACES, SPEAKERS
from tfdialemb.layers import curved_scoring
from tfdialemb.serving import layout
from tfdialemb.serving.kinds import ServedKind, register_servable
from tfdialemb.text.curved_format import ODD, after_text, before_text, speaker_token

CURVED = ("c3l", "ccl")
SPACE_NAMES = {"[B1]": "b1", "[B2]": "b2", "": "before"}
SPEAKER_NAMES = {"[E]": "even", "[O]": "odd"}
BI_SPACE = {"c3l": "b2", "ccl": "before"}
"""The encode_context rows that score_bi sums: [B2] for the triple-encoder, [B] for CCL."""
SIGNATURES = {"c3l": ("encode_context", "encode_candidates", "score", "score_maxsim", "score_bi"),
              "ccl": ("encode_context", "encode_candidates", "score_bi")}
WARMUP_K_LAST_ROWS = (0, 2)
"""The k_last_rows of the warm-up score requests: the full triangle and the paper's best k."""


def context_variants(curved: str, speaker_tokens: bool = True) -> List[Tuple[str, str]]:
    """(output name, text prefix) of each before-space encoding of an utterance, e.g.
    ("b1_even", "[B1] [E] [B] "): `curved` names the spaces, `speaker_tokens` the speakers."""
    if curved not in CURVED:
        raise ValueError(f"curved must be one of {CURVED}, got {curved!r}")
    speakers = SPEAKERS if speaker_tokens else (None,)
    return [("_".join([SPACE_NAMES[space]] + ([SPEAKER_NAMES[speaker]] if speaker else [])),
             before_text("", speaker, space))
            for space in SPACES[curved] for speaker in speakers]


def history_rows(context: Mapping[str, np.ndarray], space: str) -> np.ndarray:
    """[h, D]: the `space` ("b1", "b2", "before") rows of a history of h utterances, from the
    encode_context outputs of its utterances in order, each row with its current speaker token:
    u_i takes the odd variant when h - i is odd (the most recent utterance is [O])."""
    if space in context:
        return np.asarray(context[space])
    even, odd = (np.asarray(context.get(f"{space}_{name}")) for name in ("even", "odd"))
    if even.ndim != 2 or even.shape != odd.shape:
        raise ValueError(f"context needs {space!r}, or {space}_even and {space}_odd of one "
                         f"shape [h, D]; it has {sorted(context)}")
    h = len(even)
    odd_rows = np.array([speaker_token(h - i) == ODD for i in range(h)], bool)
    return np.where(odd_rows[:, np.newaxis], odd, even)


def _history_check(rows: tf.Tensor) -> tf.Operation:
    """Fails a request whose history has no rows (SequenceScorer refuses an empty one too)."""
    return tf.debugging.assert_positive(
        tf.shape(rows)[0], message="the history is empty: send the rows of at least one utterance")


def _triangle(b1: tf.Tensor, b2: tf.Tensor, k_last_rows: tf.Tensor):
    """float64 b1 and b2 once checked, and the first row of the triangle to keep."""
    h = tf.shape(b1)[0]
    checks = [
        _history_check(b1),
        tf.debugging.assert_equal(
            tf.shape(b2)[0], h, message="b1 and b2 must hold one row per history utterance each"),
        tf.debugging.assert_non_negative(
            k_last_rows, message="k_last_rows must be >= 0 (0: the full triangle)"),
    ]
    with tf.control_dependencies(checks):
        first = tf.where(k_last_rows > 0, tf.maximum(h - k_last_rows, 0), 0)
        return tf.cast(b1, tf.float64), tf.cast(b2, tf.float64), first


def curved_module(embedder: SentenceEmbedder, curved: str = "c3l",
                  speaker_tokens: bool = True) -> tf.Module:
    """The object to save, with `signature_functions`: one per name of `SIGNATURES[curved]`."""
    variants = context_variants(curved, speaker_tokens)
    module = layout.encoder_module(embedder.encoder, embedder.tokenizer)
    hidden = embedder.encoder.encoder_config.hidden_size
    utterances = tf.TensorSpec([None], tf.string, name="utterances")

    def rows(name):
        return tf.TensorSpec([None, hidden], tf.float32, name=name)

    k_last_rows = tf.TensorSpec([], tf.int32, name="k_last_rows")

    @tf.function(autograph=False, input_signature=[utterances])
    def encode_context(utterances):
        texts = tf.concat([tf.strings.join([prefix, utterances]) for _, prefix in variants], 0)
        encoded = tf.reshape(embedder.embed_batch(texts), [len(variants), -1, hidden])
        return {name: encoded[v] for v, (name, _) in enumerate(variants)}

    @tf.function(autograph=False, input_signature=[utterances])
    def encode_candidates(utterances):
        return {"after": embedder.embed_batch(tf.strings.join([after_text(""), utterances]))}

    @tf.function(autograph=False, input_signature=[rows("b1"), rows("b2"), rows("candidates"), k_last_rows])
    def score(b1, b2, candidates, k_last_rows):
        b1, b2, first = _triangle(b1, b2, k_last_rows)
        sums = curved_scoring.row_sums(b1, b2)[first:]
        return {"scores": curved_scoring.scores_from_row_sums(
            sums, tf.cast(candidates, tf.float64))}

    @tf.function(autograph=False, input_signature=[rows("b1"), rows("b2"), rows("candidates"), k_last_rows])
    def score_maxsim(b1, b2, candidates, k_last_rows):
        b1, b2, first = _triangle(b1, b2, k_last_rows)
        pairs = curved_scoring.triangle_pairs(tf.shape(b1)[0])
        pairs = tf.boolean_mask(pairs, pairs[:, 1] >= first)
        return {"scores": curved_scoring.maxsim_scores_from_mixes(
            curved_scoring.pair_mixes(b1, b2, pairs), pairs, tf.cast(candidates, tf.float64))}

    @tf.function(autograph=False, input_signature=[rows("before"), rows("candidates")])
    def score_bi(before, candidates):
        with tf.control_dependencies([_history_check(before)]):
            before = tf.cast(before, tf.float64)
        return {"scores": curved_scoring.bi_encoder_scores(before, tf.cast(candidates, tf.float64))}

    functions = {"encode_context": encode_context, "encode_candidates": encode_candidates,
                 "score": score, "score_maxsim": score_maxsim, "score_bi": score_bi}
    module.signature_functions = {name: functions[name] for name in SIGNATURES[curved]}
    module.curved = curved
    return module


def warmup_records(module: tf.Module, dialogues: Sequence[Dialogue]) -> list:
    """Serialized PredictionLogs for every signature of `module` (a `curved_module`): the first
    dialogue's turns are the history, every dialogue's last turn a candidate. Encoding requests
    come alone and batched; score requests carry the vectors the module gives the history, for
    each of WARMUP_K_LAST_ROWS."""
    if not dialogues:
        raise ValueError("warm-up needs at least one dialogue")
    history = [turn.text for turn in dialogues[0].turns]
    candidates = [d.turns[-1].text for d in dialogues]
    inputs: List[Tuple[str, Dict[str, np.ndarray]]] = []
    for name, texts in (("encode_context", history), ("encode_candidates", candidates)):
        inputs += [(name, {"utterances": np.array(batch, dtype=object)})
                   for batch in (texts[:1], texts)]
    functions = module.signature_functions
    context = {name: value.numpy() for name, value in
               functions["encode_context"](tf.constant(history)).items()}
    after = functions["encode_candidates"](tf.constant(candidates))["after"].numpy()
    if "score" in functions:
        triangle = {"b1": history_rows(context, "b1"), "b2": history_rows(context, "b2"),
                    "candidates": after}
        inputs += [(name, dict(triangle, k_last_rows=np.int32(k)))
                   for name in ("score", "score_maxsim") for k in WARMUP_K_LAST_ROWS]
    inputs.append(("score_bi", {"before": history_rows(context, BI_SPACE[module.curved]),
                                "candidates": after}))
    records = [layout.predict_log(name, values) for name, values in inputs]
    layout.check_record_count(records, f"{len(dialogues)} warm-up dialogues")
    return records


def curved_servable(embedder: SentenceEmbedder, warmup_dialogues: Sequence[Dialogue],
                    curved: str = "c3l", speaker_tokens: bool = True) -> layout.Servable:
    """The serving module, its signatures and warm-up records that run each of them."""
    module = curved_module(embedder, curved, speaker_tokens)
    return layout.Servable(module, module.signature_functions, warmup_records(module, warmup_dialogues))


def export_curved_model(embedder: SentenceEmbedder, export_dir: str,
                        warmup_dialogues: Sequence[Dialogue], curved: str = "c3l",
                        speaker_tokens: bool = True, version: Optional[int] = None) -> str:
    """Writes `export_dir/<version>/` and returns its path (see `layout.write_version`)."""
    return layout.write_version(*curved_servable(embedder, warmup_dialogues, curved, speaker_tokens),
                                export_dir, version)


register_servable("curved", ServedKind("dialogues", lambda runtime, settings, inputs: curved_servable(
    runtime, inputs, settings["curved"], settings["speaker_tokens"])))
