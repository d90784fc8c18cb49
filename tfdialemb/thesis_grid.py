"""`python -m tfdialemb.thesis_grid`: the augmentation thesis' Table 3 grid.
The command lives in `tfdialemb.commands.thesis_grid`."""
from tfdialemb.commands.thesis_grid import run

if __name__ == "__main__":
    run()
