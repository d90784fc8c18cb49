"""Scripts that prepare data with the library: the demo corpus, the SR / STS / STP / response-selection
evaluation set builders. Corpus converters live in `tfdialemb.converters` (`python -m tfdialemb.data convert`)."""
# tfdialemb first: its import sets TensorFlow's log level and the quiet start-up (tfdialemb.core.quiet)
# before a builder such as build_stp_set imports TensorFlow itself.
import tfdialemb  # noqa: F401  pylint: disable=unused-import
