"""Reads back the TF Serving warm-up file of an exported version, as the model server does."""
import os

import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2


def read_warmup_requests(version_dir):
    """[(signature name, {input name: numpy array}), ...] of the version's warm-up PredictLogs."""
    path = os.path.join(version_dir, "assets.extra", "tf_serving_warmup_requests")
    requests = []
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
        log = prediction_log_pb2.PredictionLog.FromString(record)
        assert log.WhichOneof("log_type") == "predict_log"
        request = log.predict_log.request
        requests.append((request.model_spec.signature_name,
                         {name: tf.make_ndarray(request.inputs[name]) for name in request.inputs}))
    return requests
