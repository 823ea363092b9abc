"""Command-line flags for every setting of a run, checked by the table of settings."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable
from typing import Any

from csvm.runs.config import DEFAULTS, SPECS, RunConfig
from csvm.runs.presets import load_presets, preset_config, preset_key
from csvm.runs.values import none_is_typed, parse_value, show

__all__ = ["add_cli_arguments", "add_preset_argument", "from_cli", "unused_flags"]


def _cli_type(name: str):
    def convert(text: str) -> Any:
        try:
            return parse_value(name, text)
        except ValueError as reason:
            raise argparse.ArgumentTypeError(
                f"{text!r} {reason}; allowed is {SPECS[name].describe_range()}"
            ) from None

    convert.__name__ = SPECS[name].kind
    return convert


def _flag(name: str) -> str:
    """A setting's flag: ``--n-iter`` for ``n_iter`` (``--C`` keeps its capital)."""
    return "--C" if name == "C" else f"--{name.replace('_', '-')}"


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags (each is stored under ``cfg_<name>``; an omitted one is
    not stored at all), by name."""
    return {k[4:]: v for k, v in vars(args).items() if k.startswith("cfg_")}


def _metavar(spec) -> str:
    """``{poly,rbf,linear}`` for a closed list of choices (read from the registries when
    the parser is built), else the kind (``FLOAT``)."""
    # A pattern besides the choices (the app's uploaded "own-…" sets) is not for a
    # command line: the choices are still what to type.
    if spec.kind == "str" and spec.choices is not None:
        choices = [str(c) for c in spec.choices]
        if none_is_typed(spec):
            choices.append("none")  # the setting's None (protocol: a random split)
        return "{" + ",".join(choices) + "}"
    return spec.kind.upper()


def _default_help(spec, value, shown: str) -> str:
    """The default, and how to ask for the setting's None on the command line where it
    has one: ``Default none (no limit).`` or ``Default 1. Type none for no limit.``"""
    if not none_is_typed(spec):
        return f"Default {shown}."
    if value is None:
        return f"Default none ({spec.none_label})."
    return f"Default {shown}. Type none for {spec.none_label}."


def add_cli_arguments(parser: argparse.ArgumentParser, skip: Iterable[str] = ()) -> None:
    """A ``--flag`` for every setting (``--n-iter``, ``--C``, …), checked by the table.

    Defaults are left unset (None), so :func:`from_cli` can tell a given flag from an
    omitted one.
    """
    group = parser.add_argument_group("run settings (see csvm.runs.config.RunConfig)")
    for name, spec in SPECS.items():
        if not spec.cli or name in skip:
            continue
        default = show(name, getattr(DEFAULTS, name))
        group.add_argument(
            _flag(name),
            dest=f"cfg_{name}",
            type=_cli_type(name),
            default=argparse.SUPPRESS,
            metavar=_metavar(spec),
            help=f"{spec.help} {_default_help(spec, getattr(DEFAULTS, name), default)}",
        )


def add_preset_argument(parser: argparse.ArgumentParser) -> None:
    """``--preset NAME``: start from one of the app's presets (:func:`from_cli` reads it)."""
    keys = ", ".join(preset_key(p["name"]) for p in load_presets())
    parser.add_argument(
        "--preset",
        default=None,
        metavar="NAME",
        help=f"start from one of the app's presets (its name, or the start of its key: "
        f"{keys}); the other flags change its settings",
    )


def unused_flags(args: argparse.Namespace, config: RunConfig) -> list[str]:
    """The flags given on the command line that ``config`` does not read (``--kernel``
    for the L-CSVM, ``--cnn-epochs`` when the baselines are tuned): a command says so,
    where it went silently unused.

    Examples
    --------
    >>> args = argparse.Namespace(cfg_kernel="poly", cfg_n_iter=3)
    >>> unused_flags(args, RunConfig(model="lcsvm"))
    ['--kernel']
    """
    return [_flag(name) for name in _given(args) if not config.uses(name)]


def from_cli(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    """The RunConfig given on the command line (flags from :func:`add_cli_arguments`), over
    ``base``, else the preset ``--preset`` names (:func:`add_preset_argument`), else the
    library's defaults.

    Raises
    ------
    ValueError
        When ``--preset`` names no preset, or several.
    """
    if base is None and getattr(args, "preset", None):
        base = preset_config(args.preset)
    base = base or DEFAULTS
    return dataclasses.replace(base, **_given(args))
