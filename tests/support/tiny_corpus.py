"""Small seeded dialogue corpora in the tiny BERT vocabulary, shared by data and training tests."""
import numpy as np

import tiny_bert
from tfdialemb.data.sampling import DialoguePool
from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.text import BertTokenizer

TOKENIZER = BertTokenizer(list(tiny_bert.WORDS), lower_case=True)
WORDS = ["hello", "world", "good", "morning", "how", "are", "you", "fine", "thanks", "book", "taxi",
         "hotel", "please", "need", "help", "cafe"]


SR_SELECT_LINES = [
    "0\thello world\tgreet\t1,2\t3,4",
    "1\tgood morning\tgreet\t\t",
    "2\thow are you\tgreet\t\t",
    "3\tbook taxi please\tbook\t\t",
    "4\tbook hotel please\tbook\t\t",
    "5\tbook taxi\tbook\t4,3\t0,1,2",
]
"""A DialogueCSE semantic-retrieval file in its released format: two queries, six sentences."""


def corpus(n=12, seed=0):
    """`n` dialogues of 2-6 alternating turns of 1-5 words."""
    rng = np.random.default_rng(seed)
    dialogues = []
    for i in range(n):
        turns = [Turn("ab"[t % 2], " ".join(rng.choice(WORDS, size=rng.integers(1, 6))))
                 for t in range(int(rng.integers(2, 7)))]
        dialogues.append(Dialogue(f"d{i}", tuple(turns)))
    return dialogues


def packed_ids(text, max_length):
    """`[CLS] pieces [SEP]` of one text, tokenized alone (a second path to what builds store)."""
    pieces = TOKENIZER.tokenize([text]).to_list()[0]
    return [TOKENIZER.cls_id] + pieces[: max_length - 2] + [TOKENIZER.sep_id]


def utterance_pool(*dialogues):
    """A negative pool holding every dialogue of `dialogues` (lists of texts), dialogue i under index i."""
    pool = DialoguePool(capacity=100, seed=0)
    for index, texts in enumerate(dialogues):
        pool.add(index, texts)
    return pool
