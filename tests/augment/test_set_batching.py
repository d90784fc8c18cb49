"""A whole set (insert, replace, crop, shuffle, on tiny models) writes the same lines whether its
dialogues go through together or one at a time, and in whatever order: every draw of a dialogue
comes from its own generator, and the models' batching across dialogues changes no result."""
import json

import numpy as np

from tfdialemb.augment.augmented_file import Plan, augment_chunk
from tfdialemb.augment.crop import StageCrop
from tfdialemb.augment.operations import OperationSet, load_similarity
from tfdialemb.augment.shuffle import StageShuffle
from tfdialemb.augment.token_insertion import TokenInsertion
from tfdialemb.augment.token_replacement import TokenReplacement
from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.inference.kinds import load

SEED, VIEWS = 4, 2
WORDS = ("hello world good morning how are you fine thanks book taxi hotel please need cafe help "
         "not work naive resume").split()


def dialogues(count=5):
    """Dialogues of 12 to 16 turns of 3 to 8 words of the tiny vocabulary (so that the tiny
    encoder tells the utterances apart), all distinct."""
    rng = np.random.default_rng(0)
    found = []
    for number in range(count):
        turns = [Turn("ab"[k % 2], " ".join(rng.choice(WORDS, size=rng.integers(3, 9))))
                 for k in range(12 + number)]
        found.append(Dialogue(f"d{number}", tuple(turns)))
    return found


def test_batches_of_dialogues_write_what_one_dialogue_at_a_time_writes(random_mlm, hf_safetensors_dir):
    similarity = load_similarity("sentence_encoder", hf_safetensors_dir, load, batch_size=8)
    fill = dict(fill_stop_words="none", fill_batch_size=4)
    operations = OperationSet((TokenInsertion(random_mlm, seed=SEED, min_fill_prob=0.0, **fill),
                               TokenReplacement(random_mlm, seed=SEED, **fill),
                               StageCrop(similarity, seed=SEED), StageShuffle(similarity, seed=SEED)), similarity)
    corpus = dialogues()

    def lines(batch_size, order):
        plan = Plan("", "", operations.names, views=VIEWS, seed=SEED, batch_size=batch_size)
        by_dialogue = {}
        for line in augment_chunk([corpus[i] for i in order], operations, plan):
            by_dialogue.setdefault(json.loads(line)["labels"]["source_id"], []).append(line)
        return by_dialogue

    together = lines(len(corpus), range(len(corpus)))
    assert lines(1, range(len(corpus))) == together
    assert lines(2, reversed(range(len(corpus)))) == together
    written = [json.loads(line)["labels"]["augmentations"] for group in together.values() for line in group]
    assert {tuple(a) for a in written} == {(), ("insert",), ("replace",), ("crop",), ("shuffle",)}
    assert len(written) == len(corpus) * (1 + 4 * VIEWS)  # every operation applied to every dialogue
