"""What the AppTest suites share: opening the app with a URL, waiting for a run's results,
and reading the figures a page drew (Plotly specs, SVG charts)."""

from __future__ import annotations

import base64
import html
import json
import re
import time
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def open_app(query: dict[str, str] | None = None) -> AppTest:
    """``app.py`` run once with ``query`` as its URL's parameters."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def wait_for_results(at: AppTest, seconds: float = 120) -> AppTest:
    """Rerun the page until a run's comparison table is drawn."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        at.run()
        if any(s.value == "Comparison on the same split" for s in at.header):
            return at
        time.sleep(0.5)
    raise AssertionError("the run did not finish in time")


def specs(at: AppTest) -> list[dict]:
    """Every Plotly figure on the page, as its JSON spec."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def titled(at: AppTest, prefix: str) -> list[dict]:
    """The figures whose title starts with ``prefix``."""
    return [s for s in specs(at) if s["layout"].get("title", {}).get("text", "").startswith(prefix)]


def chart_points(at: AppTest, prefix: str) -> list[int]:
    """The points of every SVG chart (csvm.figures.chart_svg) whose title starts with
    ``prefix``, one count per chart."""
    found = []
    for m in at.markdown:
        for title, points in re.findall(r'data-title="([^"]*)" data-points="(\d+)"', m.value):
            if html.unescape(title).startswith(prefix):
                found.append(int(points))
    return found


def query(at: AppTest, key: str) -> str:
    """A query parameter as text (older AppTests give a list of values)."""
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def plotly_array(value) -> np.ndarray:
    """A figure's array, whether Plotly wrote it as a list or as typed binary data."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if isinstance(shape, str):
            shape = tuple(int(n) for n in shape.split(","))
        return flat.reshape(shape) if shape else flat
    return np.asarray(value)


def preset_box(at: AppTest):
    """The Train page's preset box (its key changes with the name it shows)."""
    return next(box for box in at.selectbox if box.label == "Preset")
