"""`python -m tfdialemb.pretrain`: continued pre-training on dialogue text.
The command lives in `tfdialemb.commands.pretrain`."""
from tfdialemb.commands.pretrain import run

if __name__ == "__main__":
    run()
