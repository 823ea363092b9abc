"""Any browser can send Streamlit's ``clear_cache`` message (two bytes over the websocket,
no login): the server then runs ``caching.cache_data.clear()`` and
``caching.cache_resource.clear()`` for every user.  The worker pool, and with it every
student's runs, must survive that."""

from __future__ import annotations

from streamlit.runtime import caching

from explorer.pool import get_pool
from tests._apptest import open_app
from tests.jobs._job_targets import count


def _clear_cache_message() -> None:
    """What the server does on a ``clear_cache`` BackMsg (AppSession's handler)."""
    caching.cache_data.clear()
    caching.cache_resource.clear()


def test_clear_cache_keeps_the_pool_and_its_runs():
    at = open_app()
    pool = get_pool()
    job = pool.submit(count, {"n": 2}, owner="student")
    for _ in range(5):
        _clear_cache_message()
        at.run()
        assert not at.exception
        assert get_pool() is pool
    assert pool.get(job) is not None  # the student's job is still known to the server
