"""Who owns a run: a browser secret that page scripts cannot read.

Streamlit's ``_streamlit_xsrf`` cookie is readable by page scripts (its frontend must copy
it into request headers), so a student who got hold of its value, or sniffed it, could
pose as its browser.  Ownership rests instead on ``csvm_owner``: a random token the server
sets ``HttpOnly`` (no script reads it), ``SameSite=Lax`` (no other site sends it) and
``Secure`` behind HTTPS.  The browser sends it with the websocket handshake, where
``st.context.cookies`` sees it, and again after every reload.

The cookie is set by :class:`OwnerCookieMiddleware`, an ASGI middleware that ``app.py``
hands to ``st.App`` (Streamlit 1.5x and later serve through Starlette).  Page scripts
read who their browser is with :func:`browser_key` (and where it connects from, with
:func:`client_address`); :func:`owner` hashes the key and tells the pool where the
browser connects from.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any

import streamlit as st

from explorer.pool import get_pool
from explorer.rate_limit import client_address as address_of
from explorer.rate_limit import trusted_proxies

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


# -- who this browser is, for page scripts --------------------------------------------
def xsrf_token(cookie: str) -> str:
    """The token inside Streamlit's XSRF cookie: the same for one browser across reloads.

    Streamlit writes the cookie as ``2|mask|masked_token|timestamp`` and re-masks it with a
    fresh 4-byte mask on every response, so the unmasked token (masked XOR the repeated
    mask) is what stays the same.  Any other format is returned as it is.
    """
    parts = cookie.strip("\"'").split("|")
    try:
        if len(parts) == 4 and parts[0] == "2":
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
            if mask:
                # A websocket-style mask: its 4 bytes repeat along the token.
                return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked)).hex()
    except ValueError:
        pass
    return cookie


def _cookie(name: str) -> str | None:
    """One of the browser's cookies as the websocket handshake carried it, or None."""
    try:
        value = st.context.cookies.get(name)
    except Exception:  # noqa: BLE001 - no browser (AppTest, bare mode)
        return None
    return value if isinstance(value, str) and value else None


def browser_key() -> str | None:
    """What identifies this browser across reloads, or None without a browser.

    The ``HttpOnly`` owner cookie (:class:`OwnerCookieMiddleware`) when the server sets it;
    Streamlit's XSRF token only on a server without that middleware (Streamlit before
    ``st.App``), where a script-readable value is all there is.  The two are kept apart
    by a prefix, so a copied XSRF value never matches an owner cookie's key.
    """
    token = _cookie(COOKIE)
    if valid_token(token):
        return f"owner:{token}"
    xsrf = _cookie("_streamlit_xsrf")
    return f"xsrf:{xsrf_token(xsrf)}" if xsrf else None


def client_address() -> str | None:
    """The network address this browser connects from ("localhost" for this machine), or
    None without a browser (AppTest).

    The websocket's peer, or behind ``CSVM_TRUST_FORWARDED`` reverse proxies the address
    the outermost of them saw (:func:`explorer.rate_limit.client_address`, the same rule
    as the rerun limit's).  The pool's fair share and its cap per address count by it, so
    a student who clears the owner cookie is still one person.
    """
    try:
        headers = st.context.headers
        if not headers:
            return None
        peer = st.context.ip_address  # None for the loopback host
        forwarded = [("x-forwarded-for", v) for v in headers.get_all("X-Forwarded-For")]
    except Exception:  # noqa: BLE001 - no browser (AppTest, bare mode)
        return None
    try:
        trusted = trusted_proxies()
    except ValueError:  # the server refused to start with it (app.py); be safe here
        trusted = 0
    return address_of(peer or "localhost", forwarded, trusted)


def owner() -> str:
    """Who owns the runs this page starts: the browser (so a reload keeps control of its
    run, while a shared link opened in another browser is a read-only view), or the
    session when no browser cookie is available.  The pool learns the browser's network
    address with it (:func:`client_address`)."""
    if "owner" not in st.session_state:
        key = browser_key()
        st.session_state["owner"] = (
            hashlib.sha256(key.encode()).hexdigest()[:32] if key else uuid.uuid4().hex
        )
        get_pool().note_address(st.session_state["owner"], client_address())
    return st.session_state["owner"]


def heartbeat() -> None:
    """Tell the pool this session is alive: renews the leases of all its jobs, whichever
    page it is on, and keeps its finished runs from being forgotten."""
    pool, me = get_pool(), owner()
    pool.note_address(me, client_address())  # after a long silence the pool forgot it
    pool.heartbeat(me)
