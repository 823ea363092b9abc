"""What a class sees, measured in a real browser: the filter above the fold, labels that
are not cut off, figure text that does not run into other text (issue 23).

Each function takes a Playwright page and returns plain data, so a test can assert on it
and say exactly what was wrong.
"""

from __future__ import annotations

from typing import Any

#: Text holders that Streamlit cuts with an ellipsis (or lets overflow) when too narrow.
_LABELS = ", ".join(
    [
        "button p",
        "button div[data-testid='stMarkdownContainer']",
        "[data-testid='stMetricValue'] > div",
        "[data-testid='stMetricLabel'] p",
        "[data-testid='stWidgetLabel'] p",
        "[data-testid='stTab'] p",
        "[data-testid='stPageLink'] span",
    ]
)

_TRUNCATED = f"""() => [...document.querySelectorAll(`{_LABELS}`)]
    .filter(e => e.offsetParent !== null && e.clientWidth > 0
                 && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.innerText.trim()).filter(t => t.length)"""

# Every text element of every Plotly figure (and SVG figure) on screen (titles, subplot titles, tick
# labels, legend entries, numbers in heatmap cells), pairs whose boxes overlap by more
# than 2 px each way.
_OVERLAPS = """() => {
    const out = [];
    for (const plot of document.querySelectorAll('.js-plotly-plot, svg.csvm-figure')) {
        const boxes = [...plot.querySelectorAll('svg text')]
            .filter(t => t.textContent.trim() && t.getClientRects().length)
            .map(t => [t.textContent.trim(), t.getBoundingClientRect()])
            .filter(([_, r]) => r.width > 0 && r.height > 0);
        for (let i = 0; i < boxes.length; i++)
            for (let j = i + 1; j < boxes.length; j++) {
                const [a, p] = boxes[i], [b, q] = boxes[j];
                const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
                const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
                if (w > 2 && h > 2) out.push(a + ' | ' + b);
            }
    }
    return out;
}"""

_FILTER = """() => {
    const view = document.querySelector('.st-key-filter_view');
    if (!view) return null;
    const svg = view.querySelector('svg.csvm-weight');
    const r = view.getBoundingClientRect();
    const planes = svg ? [...svg.querySelectorAll('g.plane')].map(g => g.getBoundingClientRect())
                       : [];
    // Type size on screen: the SVG's own size times its scale on the page.
    const scale = svg ? svg.getScreenCTM().a : 1;
    const fonts = svg ? [...svg.querySelectorAll('text.value')]
        .map(t => parseFloat(t.getAttribute('font-size')) * scale) : [];
    // The cells' bottom edge (the element's own box may pass the fold).
    const bottom = planes.length ? Math.max(...planes.map(p => p.bottom)) : r.bottom;
    return {top: r.top, bottom: bottom, left: r.left, right: r.right,
            cells: planes.map(p => p.width), fonts: fonts};
}"""


# Every text of every Plotly figure on screen that runs past its figure's edge by more than
# 4 px (the figure's SVG clips it): a subplot title too long for a narrow column.  Not 2:
# a colour bar's upright title passes the edge by 2.2 px with every glyph whole.
_OUTSIDE = """() => {
    const out = [];
    for (const plot of document.querySelectorAll('.js-plotly-plot')) {
        const f = plot.getBoundingClientRect();
        if (!f.width) continue;
        for (const t of plot.querySelectorAll('svg text')) {
            const text = t.textContent.trim();
            if (!text || !t.getClientRects().length) continue;
            const r = t.getBoundingClientRect();
            if (r.width && (r.left < f.left - 4 || r.right > f.right + 4)) out.push(text);
        }
    }
    return out;
}"""


def figure_text_outside(page) -> list[str]:
    """Texts of Plotly figures that run past their figure's left or right edge (cut off)."""
    return page.evaluate(_OUTSIDE)


def truncated_labels(page) -> list[str]:
    """Labels on screen (buttons, metrics, widget labels, tabs, links) cut off by their box."""
    return page.evaluate(_TRUNCATED)


def overlapping_figure_text(page) -> list[str]:
    """Pairs of text in a Plotly figure whose boxes overlap (e.g. "0.02" | "03.04")."""
    return page.evaluate(_OVERLAPS)


_NARROW_CELLS = """() => [...document.querySelectorAll(
        "[data-testid='stTable'] td [data-testid='stMarkdownContainer']")]
    .filter(e => {
        if (e.offsetParent === null) return false;
        const line = parseFloat(getComputedStyle(e.querySelector('p') || e).lineHeight);
        const wrapped = e.getBoundingClientRect().height > 1.5 * line;
        return wrapped && e.getBoundingClientRect().width < e.parentElement.clientWidth - 40;
    })
    .map(e => e.innerText.trim().slice(0, 40))"""


def narrow_table_cells(page) -> list[str]:
    """Table cells whose text wraps onto more lines while well short of the cell's width
    (Streamlit held each cell's text to 400 px, whatever the table's width)."""
    return page.evaluate(_NARROW_CELLS)


# Every word of an image caption (figcaption: example images, support vectors, feature
# maps) whose letters do not all sit on one line: "horizont" above "al (−1)".
_BROKEN_WORDS = """() => {
    const out = [];
    for (const cap of document.querySelectorAll('figcaption')) {
        if (cap.offsetParent === null) continue;
        const node = cap.firstChild;
        if (!node || node.nodeType !== Node.TEXT_NODE) continue;
        const text = node.textContent;
        const range = document.createRange();
        const tops = [];
        for (let i = 0; i < text.length; i++) {
            range.setStart(node, i); range.setEnd(node, i + 1);
            const r = range.getClientRects();
            tops.push(r.length ? Math.round(r[0].top) : null);
        }
        let start = 0;
        for (let i = 0; i <= text.length; i++) {
            if (i < text.length && !/\\s/.test(text[i])) continue;
            const lines = new Set(tops.slice(start, i).filter(t => t !== null));
            if (lines.size > 1) out.push(text.slice(start, i));
            start = i + 1;
        }
    }
    return out;
}"""


def broken_words(page) -> list[str]:
    """Words of image captions broken across lines ("horizont" / "al (−1)")."""
    return page.evaluate(_BROKEN_WORDS)


def filter_view(page) -> dict[str, Any] | None:
    """The Train page's filter: its box in the window (``bottom``: its cells' bottom
    edge), the width in pixels of each filter's plane (its heatmap), and the type size
    on screen of the numbers in the cells (None: not on the page)."""
    return page.evaluate(_FILTER)
