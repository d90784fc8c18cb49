"""The auxiliary NLI objective of curved contrastive learning (triple-encoders Sec. 3 "the same auxiliary
NLI learning objective as is used in standard CCL").

Neither paper writes it out; the released CCL and triple-encoder trainers add
sentence-transformers' ContrastiveLoss over AllNLI train pairs (Justus-Jonas/imaginaryNLP
imaginaryNLP/trainer.py:ImaginaryEmbeddingTrainer), per
pair 0.5 (y d^2 + (1 - y) relu(margin - d)^2) with the cosine distance d = 1 - cos and
margin 0.5, averaged over the batch (the mean is the training loop's). y = 1 pulls entailed
pairs together, y = 0 pushes contradictions at least `margin` apart.
"""
import tensorflow as tf

from tfdialemb.core.similarity import paired_cosine

MARGIN = 0.5


def nli_contrastive(first: tf.Tensor, second: tf.Tensor, label: tf.Tensor,
                    margin: float = MARGIN) -> tf.Tensor:
    """Per-pair contrastive loss [B] of sentence embeddings first, second [B, H], float32.

    `label` [B]: 1 entailment, 0 contradiction. The released code also feeds neutral pairs with
    y = 2, which is not a binary label: their loss 0.5 (2 d^2 - relu(margin - d)^2) can be
    negative and pulls them together harder than entailed pairs. `tfdialemb.data.nli` drops
    neutral pairs unless asked for the released labels.
    """
    if margin <= 0:
        raise ValueError(f"margin must be positive, got {margin}")
    label = tf.cast(label, tf.float32)
    distance = 1.0 - paired_cosine(first, second)
    return 0.5 * (label * tf.square(distance)
                  + (1.0 - label) * tf.square(tf.nn.relu(margin - distance)))
