"""Who owns a run: a browser secret that page scripts cannot read.

Streamlit's ``_streamlit_xsrf`` cookie is readable by page scripts (its frontend must copy
it into request headers), so a student who got hold of its value, or sniffed it, could
pose as its browser.  Ownership rests instead on ``csvm_owner``: a random token the server
sets ``HttpOnly`` (no script reads it), ``SameSite=Lax`` (no other site sends it) and
``Secure`` behind HTTPS.  The browser sends it with the websocket handshake, where
``st.context.cookies`` sees it, and again after every reload.

The cookie is set by :class:`OwnerCookieMiddleware`, an ASGI middleware that ``app.py``
hands to ``st.App`` (Streamlit 1.5x and later serve through Starlette).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any

#: The cookie's name.
COOKIE = "csvm_owner"
#: How long a browser keeps its owner token: a school term.
MAX_AGE_S = 120 * 24 * 3600
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def valid_token(value: object) -> bool:
    """Whether ``value`` looks like a token this module issued (32 URL-safe characters)."""
    return isinstance(value, str) and bool(_TOKEN.match(value))


def new_token() -> str:
    """A fresh random owner token: 24 bytes, 32 URL-safe characters."""
    return secrets.token_urlsafe(24)


def request_token(scope: Scope) -> str | None:
    """The owner token an HTTP request carries, or None (missing or malformed)."""
    for name, value in scope.get("headers") or []:
        if name.lower() != b"cookie":
            continue
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(value.decode("latin-1"))
        except CookieError:
            continue
        if COOKIE in jar and valid_token(jar[COOKIE].value):
            return jar[COOKIE].value
    return None


def is_https(scope: Scope) -> bool:
    """Whether the browser reached us over HTTPS, directly or through a proxy that says so."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    return any(
        name.lower() == b"x-forwarded-proto" and value.strip().lower() == b"https"
        for name, value in scope.get("headers") or []
    )


def set_cookie_header(token: str, secure: bool) -> bytes:
    """The ``Set-Cookie`` value that gives a browser its owner token."""
    parts = [f"{COOKIE}={token}", "Path=/", f"Max-Age={MAX_AGE_S}", "HttpOnly", "SameSite=Lax"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts).encode("latin-1")


class OwnerCookieMiddleware:
    """Give every browser that has none an ``HttpOnly`` owner token.

    Parameters
    ----------
    app : ASGI application
        The application to wrap (Streamlit's).

    Examples
    --------
    >>> import streamlit as st                                      # doctest: +SKIP
    >>> from starlette.middleware import Middleware                 # doctest: +SKIP
    >>> app = st.App("app.py", middleware=[Middleware(OwnerCookieMiddleware)])  # doctest: +SKIP
    """

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Only plain HTTP responses can set cookies; a websocket handshake only reads them.
        if scope.get("type") != "http" or request_token(scope) is not None:
            await self.app(scope, receive, send)
            return
        header = set_cookie_header(new_token(), is_https(scope))

        async def send_with_cookie(message: Message) -> None:
            if message.get("type") == "http.response.start":
                headers = list(message.get("headers") or [])
                headers.append((b"set-cookie", header))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_cookie)
