"""How the pages draw: projector mode (larger type and figures), Plotly charts and tables
that follow it, SVG figures (pictures while a run plays), grids of images and the results'
number formats."""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitAPIException

from csvm import figures
from csvm.figures.image_html import image_grid_html
from csvm.figures.svg_image import svg_as_image

__all__ = [
    "chart",
    "image_grid",
    "keep_units",
    "link_to",
    "markup_figure",
    "playing",
    "projected",
    "projector_mode",
    "result_columns",
    "svg_figure",
    "table",
]


#: "p = " or "p < " before a p-value, as csvm.analysis.stats.format_p is written.
_P_VALUE = re.compile(r"\bp ([=<]) ")


def keep_units(text: str) -> str:
    """``text`` with every number kept on one line with its "%", and "p = 0.62" or
    "p < 0.001" whole (no-break spaces): a projector's narrow column otherwise breaks
    "67.95" from "%"."""
    return _P_VALUE.sub("p\u00a0\\1\u00a0", text.replace(" %", "\u00a0%"))


def projector_mode() -> bool:
    """Whether this session shows the app for a projector (larger type and figures)."""
    return bool(st.session_state.get("projector"))


def projected(fig: go.Figure) -> go.Figure:
    """``fig`` with the projector's larger type when projector mode is on (changed in
    place): for pages that draw a figure in a column or with options of their own."""
    return figures.for_projector(fig) if projector_mode() else fig


def chart(fig, key: str, **options) -> None:
    """A Plotly figure at full width, enlarged in projector mode; ``options`` go to
    ``st.plotly_chart`` (``on_select``, ``selection_mode``)."""
    st.plotly_chart(projected(fig), key=key, width="stretch", **options)


def table(data: Any, **options: Any) -> None:
    """A table: ``st.dataframe`` (sorting, scrolling; ``options`` go to it), or in projector
    mode ``st.table``, whose HTML the projector's style sets at 18 px or more.

    The data grid draws its cells on a canvas at 14 px that no style sheet reaches, and
    CSS zoom left the canvas wider than its column.  The number formats of
    ``column_config`` ("%.2f %%") are kept in the projector's table.
    """
    if not projector_mode():
        st.dataframe(data, **options)
        return
    frame = pd.DataFrame(data)
    formats = {
        name: column["type_config"]["format"]
        for name, column in (options.get("column_config") or {}).items()
        if name in frame.columns
        and isinstance(column, dict)
        and (column.get("type_config") or {}).get("format")
    }
    styler = frame.style.format(
        {name: (lambda v, f=f: "" if pd.isna(v) else f % v) for name, f in formats.items()}
    )
    st.table(styler.hide(axis="index") if options.get("hide_index") else styler)


#: Whether the figures drawn now change at the next tick (see :func:`playing`).
_PLAYING: contextvars.ContextVar[bool] = contextvars.ContextVar("csvm_playing", default=False)


@contextlib.contextmanager
def playing(moving: bool) -> Iterator[None]:
    """Within the block, :func:`markup_figure` draws SVG figures as images when ``moving``
    (a run playing: :mod:`csvm.figures.svg_image` says why), inline SVG otherwise."""
    token = _PLAYING.set(moving)
    try:
        yield
    finally:
        _PLAYING.reset(token)


def markup_figure(markup: str, name: str) -> None:
    """A figure drawn as SVG or HTML markup by :mod:`csvm.figures` (no Plotly: nothing to
    build per tick but a string, and nothing for a new browser to load first), in a
    container keyed ``figure_<name>`` (for the layout checks and the browser tests)."""
    with st.container(key=f"figure_{name}"):
        svg_figure(markup)


def svg_figure(markup: str) -> None:
    """SVG (or HTML) markup from :mod:`csvm.figures`: an image of it while a run plays
    (:func:`playing`), inline otherwise."""
    st.markdown(svg_as_image(markup) if _PLAYING.get() else markup, unsafe_allow_html=True)


def image_grid(images, captions, title: str, cols: int = 8) -> None:
    """A titled grid of grey images as HTML (:mod:`csvm.figures.image_html`: no Plotly, so
    a new visitor's first page does not wait for Plotly's script), larger in projector mode."""
    markup = image_grid_html(images, captions, title, cols=cols, large=projector_mode())
    st.markdown(markup, unsafe_allow_html=True)


def result_columns() -> dict[str, Any]:
    """How the pages format accuracy and time columns of a results table."""
    return {
        "train accuracy": st.column_config.NumberColumn(format="%.2f %%"),
        "test accuracy": st.column_config.NumberColumn(format="%.2f %%"),
        "seconds": st.column_config.NumberColumn(format="%.2f s"),
    }


def link_to(where: Any, page: str, label: str, icon: str, help: str | None = None) -> bool:
    """A link to another page of the app in ``where`` (a column, the page); False, and
    nothing drawn, when the page runs on its own outside ``app.py``'s navigation (a test's
    ``AppTest.from_file``), where Streamlit raises: ``StreamlitAPIException``, or
    ``KeyError`` in 1.55."""
    try:
        where.page_link(page, label=label, icon=icon, help=help)
    except (StreamlitAPIException, KeyError):
        return False
    return True
