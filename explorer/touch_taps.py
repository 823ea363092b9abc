"""A tap on a clickable Plotly figure, as a mouse click: the playground's plane (a tap adds a
point) and a multi-class run's grid of filters (a tap picks a sub-problem), on a phone or a
classroom's touch screen.

Streamlit draws a figure with ``on_select`` in Plotly's "pan" drag mode, whatever the
figure asks for.  In that mode Plotly takes the touch itself (``preventDefault``: no mouse
events follow it) and on a tap sends ``plotly_click`` but selects nothing: its select on
click reads the event's ``clientX``, which a touch event does not have.  Streamlit reads
only the selection, so a tap did nothing (a mouse click at the same place adds a point).

The script below, constant (no user input in it), watches taps on figures whose
``clickmode`` selects, and when Plotly has taken the touch it sends the same place as a
mouse press and release once the figure's double-click delay has passed (a press within
it counts as a double click, which clears the selection).  A tap the browser turns into
mouse events itself (Plotly did not take it) is left alone, so nothing is added twice.
"""

from __future__ import annotations

__all__ = ["TAP_SCRIPT"]

#: The mouse press follows the tap this long (ms) after Plotly's double-click delay (the
#: figure's ``doubleClickDelay``: 300 ms by default, 500 in Streamlit's figures).
_AFTER_MS = 50
#: A touch that moved further than this (px) or lasted longer (ms) is a drag, not a tap.
_MOVE_PX, _HOLD_MS = 10, 600

TAP_SCRIPT = f"""<script>
(() => {{
  const w = window.parent && window.parent.document ? window.parent : window;
  if (w.__csvmTaps) return;
  w.__csvmTaps = true;
  const doc = w.document;
  const clickable = (el) => {{
    const drag = el && el.closest ? el.closest('.nsewdrag') : null;
    const gd = drag ? drag.closest('.js-plotly-plot') : null;
    const mode = gd && gd._fullLayout ? String(gd._fullLayout.clickmode || '') : '';
    return mode.indexOf('select') >= 0 ? [drag, gd] : null;
  }};
  let tap = null;
  doc.addEventListener('touchstart', (e) => {{
    const t = e.touches[0];
    const found = e.touches.length === 1 ? clickable(e.target) : null;
    tap = found ? {{drag: found[0], gd: found[1], x: t.clientX, y: t.clientY,
                    when: Date.now(), start: e}} : null;
  }}, {{capture: true, passive: true}});
  doc.addEventListener('touchend', (e) => {{
    const t = e.changedTouches[0];
    const mine = tap;
    tap = null;
    if (!mine || !t || !mine.start.defaultPrevented) return;
    if (Math.hypot(t.clientX - mine.x, t.clientY - mine.y) > {_MOVE_PX}) return;
    if (Date.now() - mine.when > {_HOLD_MS}) return;
    setTimeout(() => {{
      const at = {{bubbles: true, cancelable: true, view: w, clientX: mine.x, clientY: mine.y}};
      mine.drag.dispatchEvent(new MouseEvent('mousedown', {{...at, button: 0, buttons: 1}}));
      doc.dispatchEvent(new MouseEvent('mouseup', {{...at, button: 0, buttons: 0}}));
    }}, ((mine.gd._context || {{}}).doubleClickDelay || 300) + {_AFTER_MS});
  }}, {{capture: true, passive: true}});
}})();
</script>"""
