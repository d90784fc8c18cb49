"""Options and settings several methods share, declared once (a method that changes a default
derives its own with `dataclasses.replace`)."""
from tfdialemb.core.options import Option

NEGATIVES = Option("negatives", 9, "Negatives per positive, sampled from other dialogues "
                   "(DialogueCSE Table 5: 1/4/9/19; dial2vec: 9).", lower_bound=1)
TEMPERATURE = Option("temperature", 0.1, "Softmax temperature (mge: NT-Xent τ of Eq. 8; "
                     "siamese_m: initial 1/scale; dial2vec: τ of Eq. 6).", lower_bound=1e-6)

THESIS_RELEASED_ADAMW = {"schedule": "one_cycle", "warmup_steps": 0, "amsgrad": True, "no_decay": ("bias",)}
"""The augmentation thesis' released optimiser, shared by its learners (voorhs/dialogue-augmentation
mylib/learners/generic.py `BaseLearner.configure_optimizers`): AdamW with AMSGrad, weight decay on
every parameter but biases (`get_parameter_groups`), the one-cycle schedule (`tfdialemb.training.optimizer.OneCycle`, which
warms up by itself: no linear warm-up before it)."""
