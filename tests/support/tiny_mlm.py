"""Token ids and controlled output biases for the tiny fill-mask models of tests/augment."""
import numpy as np

import tiny_bert

VOCAB = tiny_bert.WORDS


def token_ids(*tokens):
    """Ids of `tokens` in tiny_bert's vocabulary."""
    return [VOCAB.index(t) for t in tokens]


def probabilities_bias(probabilities):
    """An output bias whose softmax gives each named token its probability and spreads the rest
    evenly over the other tokens."""
    rest = 1.0 - sum(probabilities.values())
    bias = np.full(len(VOCAB), np.log(rest / (len(VOCAB) - len(probabilities))), np.float32)
    for token, p in probabilities.items():
        bias[VOCAB.index(token)] = np.log(p)
    return bias
