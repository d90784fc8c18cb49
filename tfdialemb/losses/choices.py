"""The values the losses take as options, importable without TensorFlow: the methods' options
offer them as the commands' flag choices before any model is touched."""

DEFAULT_TEMPERATURE = 0.2
"""Interlocutor NT-Xent: dial2vec's τ of Eq. 6."""
SIMILARITIES = ("dot", "cosine")
"""Cross-view contrast: the similarity of two projected views."""
ANCHORS = {"original": ((0, 1), (2, 3)), "all": ((0, 1), (1, 0), (2, 3), (3, 2))}
"""Intra-view contrast: which views anchor a term l(anchor, partner) of a context, as indices of
`intra_view_contrast.VIEWS`: the original pairs z+ and z−, as FGC Eq. 3 writes L_ivc, or every view,
as NT-Xent (which Eq. 3 follows) makes each of its 2N views an anchor; Eq. 2 constrains all four."""
VARIANTS = ("released", "thesis")
"""Augmentation contrast (augcl): the released code's loss or the thesis' (`augmentation_contrast`)."""
RELEASED_TEMPERATURE = 0.1
"""Augmentation contrast: voorhs/dialogue-augmentation mylib/learners/dialogue_encoder.py
`DialogueEncoderLearnerConfig.temperature`."""
