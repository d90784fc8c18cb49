"""Scripts that prepare data with the library: the demo corpus, the SR / STS / STP / response-selection
evaluation set builders. Corpus converters live in `tfdialemb.converters` (`python -m tfdialemb.data convert`)."""
