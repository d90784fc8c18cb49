"""Inference-time scorers that keep per-dialogue state between turns."""
