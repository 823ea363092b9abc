"""User-given text (class folder names, display names, dataset names) made safe for figures.

Plotly draws a subset of HTML in titles, tick labels, legends, annotations and hover text
(``<a href>``, ``<b>``, ``<span style>``, ``<sup>`` …): a class folder named
``<a href=...>CLICK`` became a clickable link in a confusion matrix.  The SVG and HTML
figures (:mod:`csvm.figures.chart_svg`, :mod:`csvm.figures.image_html`, …) are shown with
``unsafe_allow_html`` and need the same.  :func:`plain` is the one helper every figure uses
for text it did not write itself.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["plain", "plain_all", "plain_in_template", "plain_lines"]

# Numeric references for the quotes: Plotly decodes only a few named entities
# (amp, lt, gt, nbsp, …), not "&quot;", which it would show as it is.  The apostrophe's
# is html.escape's, so markup is the same as before this helper.
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#x27;"})


def plain(text: object) -> str:
    """``text`` as a figure shows it literally: no tag, link or entity of it is rendered.

    Safe in Plotly's text (titles, ticks, legends, hover, annotations) and in HTML or SVG
    text and attribute values.  Escape once, where the name enters the figure: escaped
    text escaped again shows its entities (``&amp;lt;``).

    Parameters
    ----------
    text : object
        Any value; it is turned into ``str`` first.

    Returns
    -------
    str
        ``&``, ``<``, ``>`` and both quotes as character references.
    """
    return str(text).translate(_ESCAPES)


def plain_all(texts: Iterable[object]) -> list[str]:
    """:func:`plain` of each of ``texts``."""
    return [plain(t) for t in texts]


def plain_in_template(text: object) -> str:
    """:func:`plain` for text written into a Plotly ``hovertemplate`` or ``texttemplate``:
    its ``%`` too becomes a reference, so a name such as ``%{y}`` is shown, not filled in.
    """
    return plain(text).replace("%", "&#37;")


def plain_lines(text: object, width: int, sep: str = " · ") -> str:
    """:func:`plain` of ``text`` broken into lines of at most ``width`` characters where
    it has ``sep`` (a run's name: "γ 0.02 · η 0.1 · C no limit · …"), joined by Plotly's
    ``<br>``; a part longer than ``width`` keeps a line of its own.  Plotly neither wraps a
    legend entry nor a title: a long one ran out of its figure.

    Examples
    --------
    >>> plain_lines("γ 0.02 · η 0.1 · C no limit", 16)
    'γ 0.02 · η 0.1<br>C no limit'
    >>> plain_lines("<b>a</b> · b", 40)
    '&lt;b&gt;a&lt;/b&gt; · b'
    """
    lines: list[str] = []
    for part in str(text).split(sep):
        if lines and len(lines[-1]) + len(sep) + len(part) <= width:
            lines[-1] += sep + part
        else:
            lines.append(part)
    return "<br>".join(plain(line) for line in lines)
