"""DialogueCSE's Table 2 baselines without a training loop: whitening, flow, average GloVe."""
