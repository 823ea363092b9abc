"""The command line of :mod:`csvm` (``csvm data|train|reproduce|sweep|curve``): :func:`main`
dispatches to one module per command."""

from csvm.cli.main import main

__all__ = ["main"]
