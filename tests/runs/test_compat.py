"""Links and bundles made by version 0.1 (the flat layout) still read the same.

The fixtures were written by the previous layout (commit 70d3230): a shared URL's query
(``url_v0.1.json``, with the view keys ``pace`` and ``projector`` beside the settings)
and an exported run (``export_v0.1.zip``).  Splitting :mod:`csvm.runs.config` must keep
both formats, and the reproduce script's text apart from its import lines.
"""

import io
import json
import zipfile
from pathlib import Path

from csvm.runs.config import SPECS, RunConfig
from csvm.runs.persistence import export_run, load_config
from csvm.runs.query import from_query, to_query
from csvm.runs.snippet import python_snippet

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VIEW_KEYS = ("pace", "projector")


def _url_query() -> dict[str, str]:
    return json.loads((FIXTURES / "url_v0.1.json").read_text())


def _bundle() -> bytes:
    return (FIXTURES / "export_v0.1.zip").read_bytes()


def _bundle_file(name: str) -> str:
    with zipfile.ZipFile(FIXTURES / "export_v0.1.zip") as zf:
        return zf.read(name).decode("utf-8")


def test_fixture_url_parses_to_its_values():
    query = _url_query()
    config, problems = from_query(query)
    assert problems == []
    settings = {k: v for k, v in query.items() if k not in VIEW_KEYS}
    assert set(settings) <= set(SPECS)
    expected = {
        "C": 1.0,
        "class_a": "4",
        "class_b": "9",
        "degree": 3,
        "gamma": 0.5,
        "kernel": "poly",
        "lam": 0.05,
        "n_iter": 3,
        "n_train": 60,
        "regulariser": "l2sq",
        "seed": 7,
    }
    assert set(expected) == set(settings)  # the test names every setting of the link
    for name, value in expected.items():
        got = getattr(config, name)
        assert got == value and type(got) is type(value), name
    # Every setting the link leaves out keeps its default.
    defaults = RunConfig()
    for name in set(SPECS) - set(settings):
        assert getattr(config, name) == getattr(defaults, name), name


def test_fixture_url_round_trips():
    query = _url_query()
    config, _ = from_query(query)
    assert to_query(config) == {k: v for k, v in query.items() if k not in VIEW_KEYS}


def test_fixture_bundle_loads_without_problems():
    config, problems = load_config(_bundle())
    assert problems == []
    stored = json.loads(_bundle_file("config.json"))
    loaded = config.to_dict()
    assert {k: v for k, v in loaded.items() if k in stored} == stored
    # Settings added since the fixture was written (e.g. layers) keep their defaults.
    defaults = RunConfig().to_dict()
    assert {k: v for k, v in loaded.items() if k not in stored} == {
        k: defaults[k] for k in set(loaded) - set(stored)
    }
    # The bundle and the link describe the same run.
    assert config == from_query(_url_query())[0]


def test_export_writes_the_same_config_json():
    config, _ = load_config(_bundle())
    blob = export_run(config, {"csvm": None})
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        written = json.loads(zf.read("config.json"))
    stored = json.loads(_bundle_file("config.json"))
    # Same keys in the same order, but for settings added since the fixture was written,
    # which are written at their defaults.
    added = [k for k in written if k not in stored]
    assert [k for k in written if k in stored] == list(stored)
    assert {k: v for k, v in written.items() if k in stored} == stored
    assert {k: written[k] for k in added} == {k: RunConfig().to_dict()[k] for k in added}
    for key, value in stored.items():
        assert type(written[key]) is type(value), key


def test_reproduce_script_unchanged_but_for_imports():
    config, _ = load_config(_bundle())

    stored = json.loads(_bundle_file("config.json"))
    # Settings added since the fixture was written appear at their defaults, one line each.
    added = tuple(f"     '{k}': " for k in config.to_dict() if k not in stored)

    def body(text: str) -> list[str]:
        skip = ("from ", "import ", *added) if added else ("from ", "import ")
        return [line for line in text.splitlines() if not line.startswith(skip)]

    assert body(python_snippet(config)) == body(_bundle_file("reproduce.py"))
