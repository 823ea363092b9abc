"""An SVG figure as an ``<img>`` of itself, for pages that redraw it every second.

The live Train page draws its figures as inline SVG (:mod:`csvm.figures.chart_svg`), which
Streamlit's Markdown element parses and turns into one React element per node on every
tick.  A Chromium profile of the two-layer preset playing at load 10 (bench_pause) spent a
third of the page's main thread in that Markdown parse and most of the rest in React: the
page fell behind its pace and a Pause click waited behind it.  As an ``<img>`` the same
picture is one element, decoded by the browser's image pipeline.  It loses what inline SVG
gives a still page (each value's tooltip, text a reader can select, the page's font), so
pages use it only while a run plays, and draw the inline figure once it stops.

No Streamlit here.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

__all__ = ["svg_as_image"]

#: What an image's SVG uses for ``font-family:inherit`` (an image inherits nothing): the
#: app's face where the system has it, else the nearest sans-serif; unquoted, as the
#: image's SVG writes its attributes in single quotes.
FONT = "Source Sans Pro,Arial,Helvetica,Liberation Sans,DejaVu Sans,sans-serif"

_ROOT = re.compile(r"<svg\b[^>]*>")
_SAFE = " !$'()*+,-./:;=?@[]^_`{|}~"  # no &: the page would read &amp; as &
_TITLE = re.compile(r"<title>[^<]*</title>")
_ATTR = re.compile(r'\s([\w:-]+)="([^"]*)"')


def svg_as_image(svg: str) -> str:
    """The ``<svg>`` figure ``svg`` as an ``<img>`` drawing the same picture.

    Parameters
    ----------
    svg : str
        One ``<svg>`` element as :mod:`csvm.figures` draws it (a root with ``viewBox``,
        ``width="100%"`` and either ``height="N"`` or a style with ``height:auto``, and
        perhaps ``max-width`` or ``max-height``).
        Anything else is returned as it is.

    Returns
    -------
    str
        An ``<img>`` with the SVG as a ``data:`` URI, sized as the inline figure is (the
        column's width; the fixed or largest height of a root with one), its ``aria-label`` as
        ``alt``, its ``data-`` attributes and its classes with ``-image`` appended
        (``csvm-chart-image``).

    Examples
    --------
    >>> svg = ('<svg xmlns="http://www.w3.org/2000/svg" class="csvm-figure" role="img" '
    ...        'aria-label="a &amp; b" viewBox="0 0 10 5" width="100%" '
    ...        'style="font-family:inherit;height:auto"><rect width="1" height="1"/></svg>')
    >>> img = svg_as_image(svg)
    >>> img.startswith('<img class="csvm-figure-image" alt="a &amp; b"')
    True
    """
    root = _ROOT.match(svg.lstrip())
    if root is None or not svg.rstrip().endswith("</svg>"):
        return svg
    attrs = dict(_ATTR.findall(root.group(0)))
    # An image shows no tooltip: its titles (one per cell or point) would only add bytes.
    body = _TITLE.sub("", svg.strip()).replace("font-family:inherit", f"font-family:{FONT}", 1)
    if "xmlns=" not in root.group(0):  # an image's SVG is a document of its own
        body = body.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"', 1)
    # Percent-encoded, not base64 (a third larger): with its quotes made single, the
    # picture needs only %, #, < and > escaped, and its size stays about the SVG's own.
    data = quote(body.replace('"', "'"), safe=_SAFE)
    height = attrs.get("height", "")
    fixed = height.replace(".", "", 1).isdigit()
    style = "display:block;width:100%" + (f";height:{height}px" if fixed else ";height:auto")
    for side in ("width", "height"):
        limit = re.search(rf"max-{side}:\s*([\d.]+px)", attrs.get("style", ""))
        if limit:
            style += f";max-{side}:{limit.group(1)}"
    if fixed or "max-height" in style:  # held to a height: fitted in it, top-centred
        style += ";object-fit:contain;object-position:50% 0"
    classes = " ".join(f"{c}-image" for c in attrs.get("class", "").split())
    label = html.escape(html.unescape(attrs.get("aria-label", "figure")))
    # The root's data- attributes (a chart's title and number of points) stay readable.
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items() if k.startswith("data-"))
    return (
        f'<img class="{classes}" alt="{label}"{extra} style="{style}" '
        f'src="data:image/svg+xml,{data}">'
    )
