"""augcl: contrastive fine-tuning on augmented dialogues (the augmentation thesis, seed 004, Sec. 4.3).

An unmodified BERT-like encoder reads a whole dialogue as one sequence, linearised as the
released code does (voorhs/dialogue-augmentation mylib/modeling/dialogue/baseline_dialogue_encoder.py:
"0 Hello[SEP]1 Hi." wrapped in [CLS] ... [SEP], token type 0); the embedding is the last
layer's [CLS] state or masked mean (`pooling`). Positive pairs are (dialogue, augmentation) or
(augmentation, augmentation), mixed with the on-the-fly transforms (`tfdialemb.data.contrastive_pairs`);
the other dialogues of the batch are the negatives (`tfdialemb.losses.augmentation_contrast`).
`--augcl_views=dropout` is the ablation without augmentation: the dialogue against itself, the
two sides told apart by dropout alone (SimCSE's positive).
The input layout is recorded as the `dialogue` inference settings, so `DialogueEmbedder`,
`evaluate --task=dialogue` and `export --kind=dialogue` feed the encoder what training fed it and
serve the trained pooling. With `--augment_set`, --train_file is a plain dialogue file whose
augmentations the run writes first (`python -m tfdialemb.augment`, into MODEL_DIR/data-augmented/,
kept while the input and the augmentation flags stay the same).
"""
import dataclasses
import json
import math
import os

from tfdialemb.augment import flags as augment_flags
from tfdialemb.augment.command import augment_to, augmentation_plan
from tfdialemb.augment.presets import PRESETS, get_preset
from tfdialemb.data.choices import PAIRS, VIEWS
from tfdialemb.core.files import atomic_open
from tfdialemb.inference_settings import NUM_ROLES, POOLING
from tfdialemb.losses.choices import RELEASED_TEMPERATURE, VARIANTS
from tfdialemb.methods.dial2vec import TEMPERATURE
from tfdialemb.methods.shared_options import THESIS_RELEASED_ADAMW
from tfdialemb.methods.spec import MethodSpec, register_method
from tfdialemb.core.options import Option, Switch

EMB_DROPOUT = 0.1
"""bash-scripts/train/train-bert-roberta-retromae.sh `--emb-dropout 0.1` (the code's default is 0)."""
LAYOUT = {"separator": "sep", "speaker_prefix": True, "final_separator": True}
"""The released encoder input as `dialogue` inference settings: turns joined by [SEP], each
"{speaker index} {utterance}", closed by the tokenizer's [SEP]."""


LOSS = Option("augcl_loss", "released", "The contrastive loss: released (the default), "
              "mylib/learners/loss.py contrastive_symmetric, CE(S, I) + CE(Sᵀ, I) with S = x yᵀ / τ and x_i, y_i "
              "swapped at random; thesis, Sec. 3.2's -log exp(cos(x, y)) / Σ_z exp(cos(x, z)), one direction, "
              "no temperature.", choices=VARIANTS)
OPTIMIZER = Switch("augcl_optimizer", "paper", "The optimiser's schedule.",
                   paper="thesis Sec. 5: AdamW, weight decay 0.01 (not on biases and layer norms), the "
                         "constant --learning_rate (3e-6)",
                   released="mylib/learners/generic.py: AdamW with AMSGrad, weight decay 0.01 on all but "
                            "biases, one-cycle: a 10% cosine warm-up from 1e-6 to 1e-5, then cosine back to 1e-6")
RELEASED_PROCESSES, RELEASED_PROCESS_BATCH = 2, 128
"""bash-scripts/train/train-bert-roberta-retromae.sh: `--batch-size 128` per process, Lightning DDP
on the two GPUs of the thesis' run (mylib/utils/training/generic.py: all visible devices)."""
BATCH = Switch("augcl_batch", "paper", "What one optimisation step contrasts.",
               paper="thesis Sec. 5: a batch of --batch_size (128) dialogues, each the others' negative",
               released="bash-scripts/train/train-bert-roberta-retromae.sh under Lightning DDP on 2 GPUs: two "
                        "processes of 128, a row's negatives only the other rows of its own 128 (no all-gather), "
                        "gradients averaged over the 256: --batch_size=256 contrasted within each group of 128 "
                        "rows, on any number of replicas")
ONE_CYCLE_LENGTH = Switch("augcl_one_cycle_length", "paper", "How many steps --augcl_optimizer=released's "
                          "one-cycle spans.",
                          paper="the steps the run takes, so the learning rate ends at its floor",
                          released="mylib/trainers/encoder/data.py:16: floor(examples · epochs / 128), 128 being "
                                   "the per-process batch while each of the two DDP processes took half the data: "
                                   "the cycle is twice the run, which stops at about 0.63 of the peak rate")
AUGCL_TEMPERATURE = dataclasses.replace(TEMPERATURE, default=RELEASED_TEMPERATURE)
AUGCL_POOLING = dataclasses.replace(POOLING, default="cls")
EMB_DROPOUT_OPTION = Option("emb_dropout", EMB_DROPOUT, "Dropout rate on the pooled embeddings before "
                            "normalisation, training only (the released training scripts: 0.1).",
                            lower_bound=0.0, upper_bound=0.99)
GATHER_NEGATIVES = Option("gather_negatives", True, "In-batch negatives from every replica's rows (one "
                          "device's loss at the global batch); false: each replica's own rows, as the "
                          "released per-GPU batches.")
ON_THE_FLY = Option("on_the_fly", True, "Mix the on-the-fly transforms (halves, response selection, span "
                    "matching) with the precomputed views, one generator drawn per example (the '-m' sets "
                    "of thesis Table 1; false: precomputed views only). Unset with --augment_set: that set's "
                    "'-m' mark.")
PAIR = Option("pair", "orig_aug", "Precomputed positives: (dialogue, view) or (view, view); aug_aug "
              "takes two distinct views, or the dialogue and its view where it has one.", choices=PAIRS)
DROP_LONG = Option("drop_long_dialogues", True, "Leave out an example whose original or any view exceeds "
                   "--max_length tokens as the encoder reads it (thesis Sec. 5.1: the dialogues were filtered by "
                   "length; released filter_dataset_by_length.py, 512) instead of cutting it.")
AUGCL_VIEWS = Option("augcl_views", "augmented", "What a positive pair is: augmented, the dialogue and an "
                     "augmentation (the thesis); dropout, the ablation without augmentation: the whole dialogue "
                     "twice, told apart by the encoder's dropout alone (SimCSE's positive; the thesis reports no "
                     "such run, only the raw encoder).", choices=VIEWS)
AUGMENT_SET = Option("augment_set", None, "Augment a plain --train_file with this set of thesis Table 1 "
                     "first (the models it needs as python -m tfdialemb.augment takes them); unset: "
                     "--train_file is an augmented file already (or plain, on-the-fly transforms only).",
                     kind=str, choices=tuple(PRESETS))
AUGMENT_VIEWS = Option("augment_views", 1, "--augment_set: views per operation and dialogue.", lower_bound=1)
AUGMENTATION_OPTIONS = (AUGMENT_SET, AUGMENT_VIEWS) + augment_flags.MODEL_OPTIONS + augment_flags.OPTIONS
RELEASED_OPTIMIZER = {**THESIS_RELEASED_ADAMW, "learning_rate": 1e-5}
"""The released learner's optimiser at its max_lr 1e-5 (mylib/learners/generic.py
`BaseLearnerConfig`; the training scripts keep it), its one-cycle over the run's steps, or with
`--augcl_one_cycle_length=released` over the released run's planned length (`schedule_steps`)."""


@register_method
class AugclSpec(MethodSpec):
    """augcl, trained on `augcl` examples (a dialogue and its views, as turns)."""

    name = "augcl"
    paper = "Contrastive learning with dialogue augmentations (thesis, seed 004)"
    builder = "augcl"
    options = (AUGCL_POOLING, LOSS, AUGCL_TEMPERATURE, EMB_DROPOUT_OPTION, GATHER_NEGATIVES, ON_THE_FLY, PAIR,
               AUGCL_VIEWS, NUM_ROLES, OPTIMIZER, BATCH, ONE_CYCLE_LENGTH, DROP_LONG) + AUGMENTATION_OPTIONS
    defaults = {"batch_size": 128, "learning_rate": 3e-6, "freeze_layers": -3, "max_length": 512,
                "weight_decay": 0.01, "lr_schedule": "constant", "num_epochs": 5}
    """Thesis Sec. 5: batch 128, AdamW with weight decay 1e-2, constant learning rate 3e-6, all
    transformer layers frozen but the last 3, 5 epochs; 512 tokens (the released max_length)."""
    offers = ("dialogue", "sentence")
    bench_defaults = {"batch": 8, "dialogues": 500, "max_length": 256, "steps": 5, "warmup": 1}

    def resolve(self, given=None):
        """The options' values; --on_the_fly, when not given, follows --augment_set's "-m" mark."""
        params = super().resolve(given)
        if params.augment_set and ON_THE_FLY.name not in (given or {}):
            params = dataclasses.replace(params, on_the_fly=get_preset(params.augment_set).on_the_fly)
        return params

    def builder_params(self, params):
        dropout_only = params.augcl_views == "dropout"
        return {"max_roles": params.num_roles, "min_views": 0 if params.on_the_fly or dropout_only else 1,
                "drop_over_length": params.drop_long_dialogues}

    def make_model(self, encoder, params):
        from tfdialemb.methods.models.augcl import AugclModel  # pylint: disable=import-outside-toplevel

        return AugclModel(encoder, pooling=params.pooling, loss_variant=params.augcl_loss,
                          temperature=params.temperature, emb_dropout=params.emb_dropout,
                          gather_negatives=params.gather_negatives,
                          process_batch=RELEASED_PROCESS_BATCH if params.augcl_batch == "released" else None)

    def check(self, params, run):
        released_batch = RELEASED_PROCESSES * RELEASED_PROCESS_BATCH
        if params.augcl_batch == "released" and run.batch_size != released_batch:
            raise ValueError(f"--augcl_batch=released is {RELEASED_PROCESSES} processes of {RELEASED_PROCESS_BATCH}: "
                             f"give --batch_size={released_batch}, not {run.batch_size}")
        if params.augcl_views == "dropout" and params.augment_set:
            raise ValueError(f"--augcl_views=dropout pairs each dialogue with itself: the augmentations "
                             f"--augment_set={params.augment_set} writes would never be read; leave it out")
        if params.augcl_one_cycle_length == "released" and params.augcl_optimizer != "released":
            raise ValueError("--augcl_one_cycle_length=released sizes the released one-cycle schedule: give "
                             "--augcl_optimizer=released")
        warnings = []
        if params.augcl_loss == "thesis" and params.temperature != RELEASED_TEMPERATURE:
            warnings.append(f"--temperature={params.temperature} is unused: --augcl_loss=thesis has no temperature")
        preset = get_preset(params.augment_set) if params.augment_set else None
        if preset and preset.on_the_fly != params.on_the_fly:
            warnings.append(f"--augment_set={preset.name} {'mixes' if preset.on_the_fly else 'does not mix'} the "
                            f"on-the-fly transforms in thesis Table 1; this run trains with --on_the_fly="
                            f"{str(params.on_the_fly).lower()}")
        return warnings

    def schedule_steps(self, params, examples, num_epochs):
        """--augcl_one_cycle_length=released: the released cycle, floor(examples · epochs / 128)."""
        if params.augcl_one_cycle_length != "released":
            return None
        if not num_epochs:
            raise ValueError("--augcl_one_cycle_length=released sizes the cycle from the epochs: give --num_epochs")
        return max(1, math.floor(examples * num_epochs / RELEASED_PROCESS_BATCH))

    def unused_options(self, params):
        unused = () if params.augment_set else tuple(o.name for o in AUGMENTATION_OPTIONS
                                                        if o.name != AUGMENT_SET.name)
        return unused + ((AUGCL_TEMPERATURE.name,) if params.augcl_loss == "thesis" else ()) + (
            (GATHER_NEGATIVES.name,) if params.augcl_batch == "released" else ()) + (
            (ON_THE_FLY.name, PAIR.name) if params.augcl_views == "dropout" else ())

    def training_file(self, train_file, data_dir, params, run):
        """--train_file, or with --augment_set its augmented file, written once beside `data_dir`
        (DATA_DIR-augmented/)."""
        if not params.augment_set:
            return train_file

        given = {name: params[name] for name in augment_flags.flag_names()}
        # Beside the build's directory, which the build creates whole.
        augmented_dir = f"{data_dir}-augmented"
        output = os.path.join(augmented_dir, f"augmented-{params.augment_set}.jsonl")
        wanted = augmentation_plan(train_file, output, params.augment_set, given, run.seed,
                                   params.augment_views).fingerprint()
        record = output + ".flags.json"
        if os.path.isfile(output) and os.path.isfile(record):
            with open(record, encoding="utf-8") as f:
                if json.load(f) == wanted:
                    return output
        os.makedirs(augmented_dir, exist_ok=True)
        augment_to(train_file, output, params.augment_set, given, run.load_model, seed=run.seed,
                   views=params.augment_views, overwrite=True)
        with atomic_open(record) as f:
            json.dump(wanted, f, indent=1, sort_keys=True)
        return output

    def batches(self, dataset, tokenizer, params, run):
        from tfdialemb.data.contrastive_pairs import add_contrastive_pairs  # pylint: disable=import-outside-toplevel

        return add_contrastive_pairs(dataset, run.seed, tokenizer, run.max_length, params.num_roles,
                                     params.on_the_fly, params.pair, params.augcl_views)

    def optimizer_settings(self, params):
        return dict(RELEASED_OPTIMIZER) if params.augcl_optimizer == "released" else {}

    def inference_settings(self, params):
        return {"dialogue": {**LAYOUT, "num_roles": params.num_roles, "dialogue_pooling": params.pooling},
                "sentence": {"pooling": params.pooling}}
