"""The training loop every method shares: optimizer, distribution, checkpoints and resume."""
