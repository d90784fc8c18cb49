"""One trainable model per method, all driven by the shared training loop."""
