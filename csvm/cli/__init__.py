"""The command line of :mod:`csvm` (``csvm train|sweep|reproduce|data``): :func:`main`
dispatches to one module per command."""

from csvm.cli.main import main

__all__ = ["main"]
