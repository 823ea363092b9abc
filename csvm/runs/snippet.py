"""The Python script, exported with a run, that reproduces it with the library."""

from __future__ import annotations

import pprint
import textwrap

from csvm.runs.config import RunConfig

__all__ = ["python_snippet"]


def python_snippet(config: RunConfig) -> str:
    """A Python script that reproduces a run with the library.

    The settings are written with :func:`pprint.pformat` (Python literals, not JSON), and
    read back through :func:`parse`, so the script refuses what the app would refuse.
    """
    values = textwrap.indent(pprint.pformat(config.to_dict(), sort_dicts=False, width=84), "    ")
    if config.multiclass:
        return f'''"""Reproduce a multi-class CSVM Explorer run with the csvm library."""

from csvm.runs.config import parse
from csvm.runs.targets import load_data

config, problems = parse(
{values}
)
assert not problems, problems
data = load_data(config)  # the chosen classes, labelled 0..k-1 in the order given
clf = config.build_estimator(data.image_shape)
clf.fit(data.X_train, data.y_train,
        callback=lambda e: print(e["pair"], e["iteration"], e["objective"]))
print("test accuracy:", clf.score(data.X_test, data.y_test))
'''
    return f'''"""Reproduce a CSVM Explorer run with the csvm library."""

from csvm.runs.config import parse
from csvm.data import load_pair

config, problems = parse(
{values}
)
assert not problems, problems
data = load_pair(config.dataset, config.class_a, config.class_b,
                 protocol=config.protocol, n_train=config.n_train,
                 random_state=config.seed)
clf = config.build_estimator(data.image_shape)
clf.fit(data.X_train, data.y_train,
        callback=lambda e: print(e["iteration"], e["step"], e["objective"]))
print("test accuracy:", clf.score(data.X_test, data.y_test))
'''
