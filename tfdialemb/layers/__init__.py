"""Method layers: each paper equation as a pure function or a small Keras layer."""
