"""The estimators' docstrings are numpydoc as scikit-learn writes them, and their Examples
run (issue 36: "C : float, default=1.0"; each example on small data, well under 2 s)."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re

import pytest

from csvm import SMO, KernelCSVM, LinearCSVM, SmallCNN

ESTIMATORS = [KernelCSVM, LinearCSVM, SmallCNN, SMO]
MODULES = ["csvm.model.kernelised", "csvm.model.linear", "csvm.model.baselines", "csvm.model.smo"]
#: An entry of a Parameters or Attributes section: "name : type" or "a, b : type".
ENTRY = re.compile(r"^    ([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*) : (.+)$")


def _section(doc: str, title: str) -> list[str]:
    lines = inspect.cleandoc(doc).splitlines()
    lines = ["    " + line for line in lines]  # entries sit at the class's indent
    start = lines.index(f"    {title}") + 2
    assert lines[start - 1].strip() == "-" * len(title)
    end = next((i for i in range(start, len(lines)) if lines[i].strip().startswith("---")), None)
    return lines[start : (end - 1 if end else len(lines))]


def _entries(doc: str, title: str) -> dict[str, str]:
    found = {}
    for line in _section(doc, title):
        match = ENTRY.match(line)
        if match:
            for name in match.group(1).split(", "):
                found[name] = match.group(2)
    return found


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_states_its_default(cls):
    entries = _entries(cls.__doc__, "Parameters")
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name == "self":
            continue
        assert name in entries, f"{cls.__name__} does not document {name}"
        written = re.search(r"default=(.+)$", entries[name])
        assert written, f"{cls.__name__}.{name}: no default= in {entries[name]!r}"
        assert ast.literal_eval(written.group(1)) == param.default, (name, written.group(1))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_attributes_are_one_entry_each(cls):
    section = _section(cls.__doc__, "Attributes")
    entries = [line for line in section if ENTRY.match(line)]
    body = [line for line in section if line.strip() and not ENTRY.match(line)]
    assert entries and all(line.startswith("        ") for line in body), body[:3]
    assert all(name.endswith("_") for name in _entries(cls.__doc__, "Attributes"))


@pytest.mark.parametrize("module", MODULES)
def test_examples_run(module):
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
