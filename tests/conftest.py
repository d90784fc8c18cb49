"""Shared fixtures: tiny BERTs in every checkpoint layout, built in the test, never downloaded.

The CPU is split into two logical devices before TensorFlow starts, so MirroredStrategy tests can
run two replicas on this machine.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tfdialemb  # noqa: E402,F401  (routes tf.keras to tf-keras first)
import tensorflow as tf  # noqa: E402

_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
)

import tiny_bert  # noqa: E402


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
