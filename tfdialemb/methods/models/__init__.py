"""The methods' trainable Keras models, one module per method beside its spec in
`tfdialemb.methods`: a spec loads its model in `make_model`, so the specs, and with them every
command's flags and `--help`, load no TensorFlow."""
