"""Scripts that prepare data with the library: the demo corpus, the SR / STS / STP evaluation set
builders. Corpus converters live in `tfdialemb.converters` (`python -m tfdialemb.data convert`)."""
