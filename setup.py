"""tfdialemb: sentence and dialogue embeddings learned from dialogues, in TensorFlow/Keras."""
import setuptools

# The stack that installs together: Model Garden 2.20 pins TensorFlow 2.20, and
# transformers 4.x is the last line with TensorFlow classes (the RoBERTa / T5 baseline, the tests
# and data_prep/causal_lm_distractors.py, which samples STP distractors).
INSTALL_REQUIRES = [
    "tensorflow~=2.20.0",
    "tf-keras~=2.20.0",
    "tensorflow-text~=2.20.0",
    "tf-models-official~=2.20.0",
    "transformers>=4.57,<4.58",
    "numpy",
    "ml-dtypes",
    "scipy",
    "scikit-learn",
    "absl-py",
    "safetensors",
    "h5py",
    "bm25s",
    "pyyaml",  # the generic converter's yaml format
    "regex",  # BERT's basic words without TensorFlow (data stats)
    "tensorflow-serving-api~=2.20.0",
]

setuptools.setup(
    name="tfdialemb",
    version="0.1.0",
    description="Dialogue-based sentence and dialogue embeddings (DialogueCSE, dial2vec, FGC, "
    "triple-encoders, dialogue augmentations) on the TF Model Garden BERT encoder.",
    packages=setuptools.find_packages(include=["tfdialemb", "tfdialemb.*", "data_prep", "data_prep.*"]),
    package_data={"tfdialemb": ["resources/*.txt", "resources/*.jsonl", "demo/*.json"]},
    python_requires=">=3.10",
    install_requires=INSTALL_REQUIRES,
    extras_require={
        "test": ["pytest", "pytest-timeout", "pytest-xdist", "jieba", "gensim"],
        "chinese": ["jieba"],
        "doc2vec": ["gensim"],
    },
    entry_points={
        "console_scripts": [
            # `python -m tfdialemb.X` as a command: tfdialemb-X (its --help the same)
            "tfdialemb-data=tfdialemb.data.__main__:run",
            "tfdialemb-train=tfdialemb.commands.train:run",
            "tfdialemb-pretrain=tfdialemb.commands.pretrain:run",
            "tfdialemb-evaluate=tfdialemb.commands.evaluate:run",
            "tfdialemb-export=tfdialemb.commands.export:run",
            "tfdialemb-encode=tfdialemb.commands.encode:run",
            "tfdialemb-search=tfdialemb.commands.search:run",
            "tfdialemb-compare=tfdialemb.commands.compare:run",
            "tfdialemb-augment=tfdialemb.augment.__main__:run",
            "tfdialemb-thesis-grid=tfdialemb.commands.thesis_grid:run",
            "tfdialemb-demo=tfdialemb.demo.__main__:run",
            "tfdialemb-bench=tfdialemb.bench.__main__:run",
        ]
    },
)
