"""Class board page: the runs of this server (or of the teacher's class code), newest
first or best first; open one, compare a few, project the best four."""

from __future__ import annotations

from explorer.app import ensure_app
from explorer.class_board_view import draw_board
from explorer.owner_cookie import heartbeat

ensure_app()  # a page's own URL on a fresh server: run it inside the app

heartbeat()
draw_board()
