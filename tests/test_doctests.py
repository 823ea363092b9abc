"""Every example in a docstring of csvm or of the app's explorer package runs and gives
what it shows.

The docstrings' ``>>>`` lines are the quickest reading of what a helper does ("1 cell
diverged; it is scored with its best filter"); a few modules' examples were run by tests
of their own and the rest by nobody, so an example could go stale unseen.  Modules are
found by walking the two packages: a new module's examples are checked without a line here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import csvm
import explorer


def _modules_with_examples() -> list[str]:
    """The dotted names of the csvm and explorer modules whose docstrings hold examples."""
    found = []
    finder = doctest.DocTestFinder()
    for package in (csvm, explorer):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            if any(test.examples for test in finder.find(module)):
                found.append(info.name)
    return found


MODULES = _modules_with_examples()


def test_the_walk_finds_the_modules_with_examples():
    # The walk itself must see the packages' modules, or every test below would vanish.
    assert {"csvm.figures.sweeps", "csvm.model.smo", "explorer.measured"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_examples_give_what_they_show(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"
