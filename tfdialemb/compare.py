"""`python -m tfdialemb.compare`: training configurations compared over seeds.
The command lives in `tfdialemb.commands.compare`."""
from tfdialemb.commands.compare import run

if __name__ == "__main__":
    run()
