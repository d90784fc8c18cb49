"""Baselines without a training loop: DialogueCSE's Table 2 (whitening, flow, average GloVe),
dial2vec's Table 2 (LDA, Doc2Vec, utterance average, RoBERTa / T5 mean pooling) and TF-IDF."""
