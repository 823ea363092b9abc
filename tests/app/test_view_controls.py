"""Projector mode and the pace are the app's, not the Train page's: drawn first in the
sidebar on every page, kept in the session and in every page's URL (issue 33)."""

from __future__ import annotations

import pytest

from tests._apptest import open_app, query


@pytest.mark.parametrize("page", ["pages/compare.py", "pages/about.py", "pages/playground.py"])
def test_projector_and_pace_survive_another_page(page):
    at = open_app({"projector": "1", "pace": "live"})
    assert at.toggle(key="projector").value is True
    at.switch_page(page).run()
    assert not at.exception
    # The shell draws them on every page, first in the sidebar, before the page links.
    assert at.sidebar.get("toggle")[0].key == "projector"
    assert at.toggle(key="projector").value is True
    assert at.select_slider(key="pace").value == "live"
    assert query(at, "projector") == "1" and query(at, "pace") == "live"
    at.switch_page("pages/train.py").run()
    assert at.toggle(key="projector").value is True
    assert at.select_slider(key="pace").value == "live"


def test_turning_projector_mode_off_leaves_the_url():
    at = open_app({"projector": "1"})
    at.toggle(key="projector").set_value(False).run()
    at.switch_page("pages/about.py").run()
    assert at.toggle(key="projector").value is False
    assert "projector" not in at.query_params
