"""Shared fixtures: tiny BERTs in every checkpoint layout, built in the test, never downloaded.

The CPU is split into two logical devices before TensorFlow starts, so MirroredStrategy tests can
run two replicas on this machine.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "support"))

import tfdialemb  # noqa: E402,F401  (routes tf.keras to tf-keras first)
import tensorflow as tf  # noqa: E402

_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
)

import tiny_bert  # noqa: E402


@pytest.fixture(scope="session")
def two_replicas():
    """One MirroredStrategy over the two logical CPUs for the whole session: several strategies
    running collectives in one process step on each other's collective keys."""
    from tfdialemb.core.distribute import make_strategy

    return make_strategy("mirrored", devices=["/cpu:0", "/cpu:1"])


@pytest.fixture
def restore_precision():
    """For a test that sets a precision policy or XLA encoders: float32 without XLA afterwards, as
    every other test of the process expects."""
    yield
    from tfdialemb.core import precision

    precision.apply("float32")


@pytest.fixture(scope="session")
def tiny_state():
    """A random PyTorch-layout state dict for tiny_bert.HF_CONFIG."""
    return tiny_bert.random_pytorch_state(seed=0)


@pytest.fixture(scope="session")
def hf_safetensors_dir(tmp_path_factory, tiny_state):
    return tiny_bert.write_hf_safetensors_dir(tmp_path_factory.mktemp("hf_st"), tiny_state)


@pytest.fixture(scope="session")
def reference_model(tiny_state):
    """transformers' TFBertModel holding tiny_state, loaded by transformers' own PyTorch→TF code."""
    return tiny_bert.transformers_model(tiny_state)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow (over a minute)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: end-to-end test over a minute; runs with --runslow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow; run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
