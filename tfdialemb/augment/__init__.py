"""Dialogue augmentations of the augmentation thesis (seed 004, Sec. 4.1-4.2): one class per
operation (`base.Augmentation`), named sets of Table 1 (`presets`), and the
`python -m tfdialemb.augment` command that writes augmented dialogue files."""
