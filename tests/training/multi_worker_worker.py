"""One worker of the two-process MultiWorkerMirroredStrategy test (run by test_distributed_runs).

argv: build_dir model_dir weights_out. TF_CONFIG names the cluster and this worker.
"""
import sys

import tfdialemb  # noqa: F401  (tf.keras → tf-keras before TensorFlow starts)
from tfdialemb.distribute import make_strategy

strategy = make_strategy("multi_worker")  # first, before any other TensorFlow op

import numpy as np  # noqa: E402

sys.path.insert(0, sys.path[0] + "/..")
import tiny_bert  # noqa: E402
from tfdialemb.data.pipeline import make_dataset  # noqa: E402
from tfdialemb.encoders import Encoder, EncoderConfig  # noqa: E402
from tfdialemb.methods.mge import MatchingGuidedEmbeddingModel  # noqa: E402
from tfdialemb.training.loop import LoopConfig, TrainingLoop  # noqa: E402
from tfdialemb.training.optimizer import OptimizerConfig  # noqa: E402
from tiny_corpus import TOKENIZER  # noqa: E402

build_dir, model_dir, weights_out = sys.argv[1:4]


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
