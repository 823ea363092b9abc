"""CSVM Explorer: the entry point (``streamlit run app.py``).

``streamlit run`` finds the ``st.App`` below and serves it, so every browser gets an
``HttpOnly`` owner cookie (:mod:`explorer.owner_cookie`), reruns are rate-limited per tab
and per network address (:mod:`explorer.rate_limit`), uploads per address
(:mod:`explorer.upload_limit`) and the worker pool ends with the
server; each page run then executes this file as ``__main__``.  Worker processes are
spawned and re-import it as ``__mp_main__``: neither branch runs there.  Streamlit
versions without ``st.App`` run the script directly.
"""

import streamlit as st

if __name__ == "__main__":
    from explorer.app import main

    main()
elif __name__ != "__mp_main__" and hasattr(st, "App"):
    import importlib
    from contextlib import asynccontextmanager

    from starlette.middleware import Middleware

    from explorer.owner_cookie import OwnerCookieMiddleware
    from explorer.pool import get_pool, shutdown_pool
    from explorer.rate_limit import Limits, RerunLimitMiddleware
    from explorer.upload_limit import UploadBudget, UploadLimitMiddleware

    @asynccontextmanager
    async def _lifespan(_app):
        # uvicorn ends the process by raising the SIGTERM it caught again: atexit never
        # runs, so the workers (suspended ones too) are ended here, as the server stops.
        yield
        shutdown_pool()

    # The first visitor's page run would otherwise import the library, scikit-learn and
    # Plotly: a fresh server's first visit took 4.4-4.9 s, later ones 2.8-3.0 s; with these
    # imported as the server starts, 3.4-3.6 s (the first load of bench/bench_controls.py).
    for module in ("explorer.live", "explorer.own_data", "explorer.reload", "explorer.train_view"):
        importlib.import_module(module)
    # The worker pool too: its fork server and spare workers import the library and load
    # the default images (1-3 s of CPU) while nobody waits: the first visit, 3.0-3.1 s.
    get_pool()
    # Reruns beyond a rate per tab and per network address wait, the newest replacing the
    # held one (explorer.rate_limit); read now, so a bad CSVM_RERUNS_* stops the start.
    limits = Limits.from_env()
    # Upload bytes per network address in ten minutes (explorer.upload_limit), read now
    # for the same reason.
    uploads = UploadBudget.from_env()
    app = st.App(
        __file__,
        middleware=[
            Middleware(OwnerCookieMiddleware),
            Middleware(RerunLimitMiddleware, limits=limits),
            Middleware(UploadLimitMiddleware, budget=uploads, trusted=limits.trusted),
        ],
        lifespan=_lifespan,
    )
