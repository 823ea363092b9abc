"""CSVM Explorer: the entry point (``streamlit run app.py``).

``streamlit run`` finds the ``st.App`` below and serves it, so every browser gets an
``HttpOnly`` owner cookie (:mod:`explorer.owner_cookie`); each page run then executes this
file as ``__main__``.  Worker processes are spawned and re-import it as ``__mp_main__``:
neither branch runs there.  Streamlit versions without ``st.App`` run the script directly.
"""

import streamlit as st

if __name__ == "__main__":
    from explorer.app import main

    main()
elif __name__ != "__mp_main__" and hasattr(st, "App"):
    from starlette.middleware import Middleware

    from explorer.owner_cookie import OwnerCookieMiddleware

    app = st.App(__file__, middleware=[Middleware(OwnerCookieMiddleware)])
