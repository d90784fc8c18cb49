"""`python -m tfdialemb.train`: trains a method on dialogues.
The command lives in `tfdialemb.commands.train`."""
from tfdialemb.commands.train import run

if __name__ == "__main__":
    run()
