"""Dialogues → training examples → TFRecord shards → tf.data pipelines."""
