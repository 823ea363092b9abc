"""Command line: ``python -m csvm data list|fetch`` (more sub-commands in csvm.cli)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from csvm.datasets import main_data

    commands = {"data": main_data}
    try:
        from csvm.cli import COMMANDS

        commands.update(COMMANDS)
    except ImportError:
        pass
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in commands:
        print(f"usage: python -m csvm {{{'|'.join(commands)}}} ...", file=sys.stderr)
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
