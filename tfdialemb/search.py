"""`python -m tfdialemb.search`: semantic search over a text file.
The command lives in `tfdialemb.commands.search`."""
from tfdialemb.commands.search import run

if __name__ == "__main__":
    run()
