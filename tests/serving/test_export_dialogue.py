"""`tfdialemb.export --kind=dialogue`: a SavedModel fed flat turns, turn counts and speakers gives
DialogueEmbedder's dial2vec embeddings."""
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops before loading)
import tiny_bert
from tiny_corpus import TOKENIZER
from warmup_records import read_warmup_requests

from tfdialemb.dialogue import Dialogue, Turn, write_dialogues
from tfdialemb.encoders import Encoder, EncoderConfig, load_pretrained, save_pretrained
from tfdialemb.inference.dialogue_embedder import DialogueEmbedder
from tfdialemb.serving import dialogue

HIDDEN = 32
DIALOGUES = [
    Dialogue("two", (Turn("user", "hello world"), Turn("agent", "how are you"))),
    Dialogue("three", (Turn("a", "book a taxi please"), Turn("b", "fine"),
                       Turn("c", "the hotel is not helpful"), Turn("a", "thanks"))),
    # 12 turns of 6 tokens: cut at the tiny BERT's 64 positions, turn ids past its 4-row table.
    Dialogue("long", tuple(Turn("us"[i % 2], "good morning how are you") for i in range(12))),
]
# The signature's inputs written out by hand: role ids by first appearance in each dialogue.
TURN_COUNTS = [2, 4, 12]
SPEAKERS = [0, 1] + [0, 1, 2, 0] + [0, 1] * 6
TURNS = [turn.text for d in DIALOGUES for turn in d.turns]


def _flat(dialogues):
    """Hand-flattened signature inputs of some of DIALOGUES."""
    starts = np.cumsum([0] + TURN_COUNTS)
    chosen = [DIALOGUES.index(d) for d in dialogues]
    return {"turns": [TURNS[i] for n in chosen for i in range(starts[n], starts[n + 1])],
            "turn_counts": [TURN_COUNTS[n] for n in chosen],
            "speakers": [SPEAKERS[i] for n in chosen for i in range(starts[n], starts[n + 1])]}


def _call(signature, turns, turn_counts, speakers):
    return {name: value.numpy() for name, value in signature(
        turns=tf.constant(turns), turn_counts=tf.constant(turn_counts, tf.int32),
        speakers=tf.constant(speakers, tf.int32)).items()}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Version 2 written by the command ([EOU], mean pooling, three roles, a warm-up file) while
    the library writes version 1 ([SEP], Eq. 4, two roles) and DialogueEmbedder computes both
    in Python; the checkpoint has role and turn tables, so both use them."""
    root = tmp_path_factory.mktemp("dialogue_export")
    tf.keras.utils.set_random_seed(3)
    config = EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG).replace(role_vocab_size=2,
                                                                        turn_vocab_size=4)
    checkpoint = save_pretrained(Encoder(config).build_variables(), TOKENIZER,
                                 str(root / "checkpoint"))
    warmup = str(root / "warmup.jsonl")
    write_dialogues(DIALOGUES[:2], warmup)
    export_dir = root / "models"
    command = subprocess.Popen(
        [sys.executable, "-m", "tfdialemb.export", "--kind=dialogue",
         f"--init_checkpoint={checkpoint}", f"--export_dir={export_dir}", "--version=2",
         "--separator=eou", "--dialogue_pooling=mean", "--num_roles=3",
         f"--warmup_dialogues={warmup}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    pretrained = load_pretrained(checkpoint)
    paper = DialogueEmbedder.from_pretrained(pretrained)  # the checkpoint's role and turn tables in use
    library_dir = dialogue.export_dialogue_model(paper, str(export_dir), DIALOGUES, version=1)
    released = DialogueEmbedder.from_pretrained(pretrained, separator="eou", num_roles=3)
    expected = {"library": paper.embed(DIALOGUES), "command": released.embed(DIALOGUES)}
    stdout, stderr = command.communicate(timeout=300)
    assert command.returncode == 0, stderr[-3000:]
    dirs = {"library": library_dir, "command": str(export_dir / "2")}
    return {"dirs": dirs, "expected": expected, "stdout": stdout, "embedder": paper,
            "serve": {name: tf.saved_model.load(path).signatures["serving_default"]
                      for name, path in dirs.items()}}


def test_served_embeddings_equal_the_dialogue_embedder(exported):
    library = _call(exported["serve"]["library"], TURNS, TURN_COUNTS, SPEAKERS)
    expected = exported["expected"]["library"]
    assert sorted(library) == ["embeddings", "p1", "p2"]
    np.testing.assert_allclose(library["embeddings"], expected["interlocutor"], atol=1e-5)
    for name in ("p1", "p2"):
        np.testing.assert_allclose(library[name], expected[name], atol=1e-5, err_msg=name)
    command = _call(exported["serve"]["command"], TURNS, TURN_COUNTS, SPEAKERS)
    expected = exported["expected"]["command"]
    assert sorted(command) == ["embeddings", "p1", "p2", "p3"]
    np.testing.assert_allclose(command["embeddings"], expected["mean"], atol=1e-5)
    for name in ("p1", "p2", "p3"):
        np.testing.assert_allclose(command[name], expected[name], atol=1e-5, err_msg=name)
    # Only the second dialogue has a third speaker.
    assert np.abs(command["p3"][[0, 2]]).max() == 0 and np.abs(command["p3"][1]).max() > 0
    # One dialogue alone is embedded as in the batch (padding does not leak).
    alone = _call(exported["serve"]["library"], **_flat(DIALOGUES[:1]))
    np.testing.assert_allclose(alone["embeddings"], library["embeddings"][:1], atol=1e-5)


def test_dialogue_inputs_flatten_by_hand():
    inputs = dialogue.dialogue_inputs(DIALOGUES)
    assert inputs["turns"].tolist() == TURNS
    assert inputs["turn_counts"].tolist() == TURN_COUNTS
    assert inputs["speakers"].tolist() == SPEAKERS


def test_bad_inputs_fail_clearly(exported):
    serve = exported["serve"]["library"]
    cases = [
        ({"turn_counts": [2, 4]}, "turn_counts must sum to the number of turns"),
        ({"turn_counts": [2, 4, 13]}, "turn_counts must sum to the number of turns"),
        ({"speakers": SPEAKERS[:-1]}, r"speakers must give one role id per turn\] \[Condition x == y did not hold "
                                      rf"element-wise:\] \[x \(speakers_given:0\) = \] \[{len(SPEAKERS) - 1}\] "
                                      rf"\[y \(turns_given[_0-9]*:0\) = \] \[{len(SPEAKERS)}\]"),
        ({"turn_counts": [0, 6, 12]}, "every dialogue needs at least one turn"),
        ({"speakers": [-1] + SPEAKERS[1:]}, "speakers: every speaker id must be non-negative"),
    ]
    for change, message in cases:
        inputs = {**_flat(DIALOGUES), **change}
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            _call(serve, **inputs)
    with pytest.raises(ValueError, match="dialogue pooling must be one of"):
        dialogue.dialogue_module(exported["embedder"], "p1")


def _warmup_requests(version_dir):
    requests = []
    for signature, inputs in read_warmup_requests(version_dir):
        assert signature == "serving_default"
        values = {name: value.tolist() for name, value in inputs.items()}
        values["turns"] = [turn.decode("utf-8") for turn in values["turns"]]
        requests.append(values)
    return requests


def test_warmup_requests_hold_each_dialogue_then_all_and_run(exported):
    batches = {"library": [DIALOGUES[:1], DIALOGUES[1:2], DIALOGUES[2:], DIALOGUES],
               "command": [DIALOGUES[:1], DIALOGUES[1:2], DIALOGUES[:2]]}
    for version, expected in batches.items():
        requests = _warmup_requests(exported["dirs"][version])
        assert requests == [_flat(batch) for batch in expected], version
        for request in requests:  # as TF Serving replays them
            served = _call(exported["serve"][version], **request)
            assert served["embeddings"].shape == (len(request["turn_counts"]), HIDDEN)


def test_command_reports_the_signature(exported):
    out = exported["stdout"]
    assert f"wrote TF Serving model version 2 to {exported['dirs']['command']}" in out
    rows = f"float32 [None, {HIDDEN}]"
    assert ("signature serving_default: turns string [None], turn_counts int32 [None], "
            f"speakers int32 [None] -> embeddings {rows}, p1 {rows}, p2 {rows}, p3 {rows}") in out
    assert "warm-up: 2 dialogues in" in out
