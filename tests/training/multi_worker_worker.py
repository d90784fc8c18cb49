"""One worker of the two-process MultiWorkerMirroredStrategy test (run by test_distributed_runs).

argv: build_dir model_dir weights_out rendezvous_dir index count. The worker binds a free port
itself and holds it while it publishes it in rendezvous_dir and waits for the others; it lets go
only just before its own server binds it, so no other process can take the port in between (a
port picked by the test and released before the workers start could be).
"""
import json
import os
import socket
import sys
import time

import tfdialemb  # noqa: F401  (tf.keras → tf-keras before TensorFlow starts)
from tfdialemb.core.distribute import make_strategy

build_dir, model_dir, weights_out, rendezvous, index, count = sys.argv[1:7]
index, count = int(index), int(count)


def publish_port() -> socket.socket:
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    os.makedirs(rendezvous, exist_ok=True)
    staging = os.path.join(rendezvous, f".port-{index}")
    with open(staging, "w", encoding="utf-8") as f:
        f.write(str(held.getsockname()[1]))
    os.replace(staging, os.path.join(rendezvous, f"port-{index}"))
    return held


def peer_ports(timeout: float = 120.0) -> list:
    deadline = time.time() + timeout
    paths = [os.path.join(rendezvous, f"port-{i}") for i in range(count)]
    while not all(map(os.path.exists, paths)):
        if time.time() > deadline:
            sys.exit(f"worker {index}: the other workers published no port within {timeout:.0f} s")
        time.sleep(0.05)
    ports = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            ports.append(int(f.read()))
    return ports


held = publish_port()
workers = [f"127.0.0.1:{port}" for port in peer_ports()]
os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})
held.close()
strategy = make_strategy("multi_worker")  # before any other TensorFlow op; binds the port just released

import numpy as np  # noqa: E402

sys.path.insert(0, sys.path[0] + "/../support")
import tiny_bert  # noqa: E402
from tfdialemb.data.pipeline import make_dataset  # noqa: E402
from tfdialemb.encoders import Encoder, EncoderConfig  # noqa: E402
from tfdialemb.methods.models.mge import MatchingGuidedEmbeddingModel  # noqa: E402
from tfdialemb.training.loop import LoopConfig, TrainingLoop  # noqa: E402
from tfdialemb.training.optimizer import OptimizerConfig  # noqa: E402
from tiny_corpus import TOKENIZER  # noqa: E402


def build_method():
    import tensorflow as tf

    tf.keras.utils.set_random_seed(3)
    encoder = Encoder(EncoderConfig.from_huggingface(tiny_bert.HF_CONFIG)).build_variables()
    return MatchingGuidedEmbeddingModel(encoder, turns=2, negatives=2)


loop = TrainingLoop(
    strategy, build_method,
    lambda context: make_dataset(build_dir, 4, training=True, input_context=context, seed=1, repeat=True),
    TOKENIZER, LoopConfig(model_dir=model_dir, max_steps=3, optimizer=OptimizerConfig(learning_rate=1e-3),
                          checkpoint_every=2))
loop.run()
np.savez(weights_out, *[v.numpy() for v in loop.method.trainable_variables])
