"""`python -m tfdialemb.export`: exports a TF Serving SavedModel.
The command lives in `tfdialemb.commands.export`."""
from tfdialemb.commands.export import run

if __name__ == "__main__":
    run()
