"""Small seeded dialogue corpora in the tiny BERT vocabulary, shared by data and training tests."""
import numpy as np

import tiny_bert
from tfdialemb.dialogue import Dialogue, Turn
from tfdialemb.text import BertTokenizer

TOKENIZER = BertTokenizer(list(tiny_bert.WORDS), lower_case=True)
WORDS = ["hello", "world", "good", "morning", "how", "are", "you", "fine", "thanks", "book", "taxi",
         "hotel", "please", "need", "help", "cafe"]


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
