"""``python -m csvm <command> ...``: the same as the ``csvm`` console script."""

import sys

from csvm.cli.main import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m csvm"))
