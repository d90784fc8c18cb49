"""`python -m tfdialemb.evaluate`: evaluates a model or a baseline on a task.
The command lives in `tfdialemb.commands.evaluate`."""
from tfdialemb.commands.evaluate import run

if __name__ == "__main__":
    run()
