"""The commands: train, pretrain, evaluate, export, encode, search, compare and thesis_grid, and
`steps` (the commands run as the steps of the demo, the grid and compare). Each is run as `python
-m tfdialemb.NAME` (the entry module of that name) or `tfdialemb-NAME`; the data, augment, demo
and bench commands are their folders' `__main__`."""
