"""`python -m tfdialemb.encode`: writes the embeddings of a text file.
The command lives in `tfdialemb.commands.encode`."""
from tfdialemb.commands.encode import run

if __name__ == "__main__":
    run()
