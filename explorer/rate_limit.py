"""Reruns a browser may ask for: token buckets per session and per network address.

Any browser can ask the server to rerun its page by sending a ``rerun_script`` message
over the websocket (a changed widget sends one).  Two scripts sending 200 a second froze
a two-core server: ``/_stcore/health`` took 4-26 s, a fresh page did not load within a
minute, and the messages already read kept the server busy long after the flood ended.

:class:`RerunLimitMiddleware` sits in front of Streamlit's websocket (``app.py`` hands it
to ``st.App``).  Each rerun needs a token from its session's bucket and from its address's
bucket (all sessions of one address share that one, so opening more tabs or clearing
cookies does not buy more reruns).  A rerun beyond the rate is not lost: it is held, and
a newer rerun of the same page (or fragment) replaces the held one, because every rerun
carries the values of all the page's widgets.  So the page always ends on the last value
the student set, a little later, and the server runs at most the rate's scripts.  Other
messages keep their order behind a held rerun, and have a bucket of their own per
connection (20 a second, a burst of 100): a flood of any message is held, and a
connection holding more than 256 is closed.  ``load_git_info`` passes once per connection
(Streamlit answers it by running git on the event loop) and developer messages never.

The address is the connection's peer, or, behind reverse proxies the server is told to
trust (``CSVM_TRUST_FORWARDED``, the number of proxies), the address the nearest trusted
proxy saw in ``X-Forwarded-For``.  The same function names the address for the job
pool's fair share (:func:`explorer.owner_cookie.client_address`).

No Streamlit here besides its message definitions (``streamlit.proto``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg

__all__ = [
    "ENV_ADDRESS",
    "ENV_SESSION",
    "ENV_TRUST",
    "Bucket",
    "Limits",
    "RerunLimitMiddleware",
    "RerunLimiter",
    "client_address",
    "trusted_proxies",
]

#: Reruns per second and burst for one session (one tab): "RATE" or "RATE:BURST".
ENV_SESSION = "CSVM_RERUNS_PER_SESSION"
#: The same for all sessions of one network address together; 0 turns it off.
ENV_ADDRESS = "CSVM_RERUNS_PER_ADDRESS"
#: How many reverse proxies in front of the server to trust for ``X-Forwarded-For``.
ENV_TRUST = "CSVM_TRUST_FORWARDED"

# A live page ticks about once a second and a student clicks a few times a second at
# most; 3 a second with a burst of 10 leaves both untouched.  One address: 5 a second
# with a burst of 15 is a few students sharing a router; a class behind one router
# raises it (README).  With five flooding tabs on one address a fresh page took 2.6 s
# at 5:15 and 3.0-7.0 s at 8:30 on two loaded cores (bench/bench_flood.py,
# docs/benchmarks.md).
_DEFAULT_SESSION = (3.0, 10.0)
_DEFAULT_ADDRESS = (5.0, 15.0)
# Addresses whose buckets are kept (a full, idle bucket is dropped first).
_MAX_ADDRESSES = 4096
# Messages held behind a rerun before the connection counts as abusive and is closed.
_MAX_HELD = 256
_STREAM_PATH = "_stcore/stream"
# Messages that make the server run a script (or redo cached work) and so cost it CPU.
_COSTLY = {"rerun_script", "clear_cache"}
# Messages a page sends once: Streamlit answers "load_git_info" by running git on the
# server's event loop, and a script sending 16,000 of them in 0.2 s slowed every page to
# 23 s for minutes after it left.  A second one on a connection is dropped.
_ONCE = {"load_git_info"}
# Messages a class's browsers never need (a developer's): dropped.
_DROPPED = {"debug_disconnect_websocket", "debug_shutdown_runtime", "set_run_on_save"}
# Every other message (heartbeats, stop, upload URLs, anything unparsed): per connection,
# 20 a second with a burst of 100, far above a page's own use.  Beyond it they are held,
# and a connection holding more than _MAX_HELD is closed as abusive.
_OTHER = (20.0, 100.0)

_LOG = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _rate(environ: Mapping[str, str], name: str, default: tuple[float, float]):
    text = environ.get(name, "").strip()
    if not text:
        return default
    rate, _, burst = text.partition(":")
    try:
        values = (float(rate), float(burst) if burst else max(1.0, 3 * float(rate)))
    except ValueError:
        values = (-1.0, -1.0)
    if values[0] < 0 or values[1] < 1 and values[0] > 0:
        raise ValueError(
            f"environment variable {name}={text!r} is not a rate: write reruns per second, "
            f"optionally with a burst, such as 3 or 3:10 (0 turns the limit off)"
        )
    return values


def trusted_proxies(environ: Mapping[str, str] | None = None) -> int:
    """The number of reverse proxies to trust for ``X-Forwarded-For`` (0: none)."""
    environ = os.environ if environ is None else environ
    text = environ.get(ENV_TRUST, "").strip().lower()
    if text in ("", "0", "false", "no"):
        return 0
    if text in ("true", "yes"):
        return 1
    if not text.isdigit():
        raise ValueError(
            f"environment variable {ENV_TRUST}={text!r}: write the number of reverse "
            f"proxies in front of the server (1 for one nginx), or 0"
        )
    return int(text)


def client_address(
    peer: str | None, headers: Iterable[tuple[str, str]], trusted: int = 0
) -> str | None:
    """The network address a browser connects from.

    Parameters
    ----------
    peer : str or None
        The address of the connection's other end (a proxy, when there is one).
    headers : iterable of (name, value)
        The request's headers.
    trusted : int
        Reverse proxies in front of the server that append to ``X-Forwarded-For``; the
        address is then the one the outermost trusted proxy saw (entries further left
        are whatever the browser claims, and are ignored).

    Returns
    -------
    str or None
        The address, "localhost" for the loopback host itself, or None when unknown.
    """
    address = peer
    if trusted:
        hops = [
            part.strip()
            for name, value in headers
            if name.lower() == "x-forwarded-for"
            for part in value.split(",")
            if part.strip()
        ]
        if len(hops) >= trusted:
            address = hops[-trusted]
    if address in ("127.0.0.1", "::1", "localhost"):
        return "localhost"
    return address or None


class Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``burst`` kept."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens, self.at = burst, now

    def refill(self, now: float) -> float:
        """The tokens there are at ``now``."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return self.tokens

    def wait(self, now: float) -> float:
        """Seconds until a token is there (0: one is there now)."""
        missing = 1.0 - self.refill(now)
        return 0.0 if missing <= 0 else missing / self.rate


@dataclass(frozen=True)
class Limits:
    """Reruns per second and burst, per session and per address (rate 0: no limit)."""

    session_rate: float = _DEFAULT_SESSION[0]
    session_burst: float = _DEFAULT_SESSION[1]
    address_rate: float = _DEFAULT_ADDRESS[0]
    address_burst: float = _DEFAULT_ADDRESS[1]
    trusted: int = 0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The limits the ``CSVM_RERUNS_*`` and ``CSVM_TRUST_FORWARDED`` variables set.

        Raises
        ------
        ValueError
            A variable that is not a rate (or a number of proxies), naming it.
        """
        environ = os.environ if environ is None else environ
        session = _rate(environ, ENV_SESSION, _DEFAULT_SESSION)
        address = _rate(environ, ENV_ADDRESS, _DEFAULT_ADDRESS)
        return cls(*session, *address, trusted=trusted_proxies(environ))


class RerunLimiter:
    """The server's buckets: one per session (made by the caller) and one per address.

    Parameters
    ----------
    limits : Limits
    clock : callable
        Seconds, monotonic (a test passes its own).
    """

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self._addresses: dict[str, Bucket] = {}
        self.held = 0  # reruns replaced by a newer one while held (for the benchmark)
        self.delayed = 0  # reruns that waited for a token
        self.dropped = 0  # repeated one-off and developer messages dropped

    def session_bucket(self) -> Bucket | None:
        """A fresh bucket for a new session (None: sessions are not limited)."""
        if self.limits.session_rate <= 0:
            return None
        return Bucket(self.limits.session_rate, self.limits.session_burst, self.clock())

    def _address_bucket(self, address: str | None, now: float) -> Bucket | None:
        if self.limits.address_rate <= 0 or address is None:
            return None
        bucket = self._addresses.pop(address, None)  # re-inserted last: most recent
        if bucket is None:
            bucket = Bucket(self.limits.address_rate, self.limits.address_burst, now)
            if len(self._addresses) >= _MAX_ADDRESSES:  # the least recently used goes
                self._addresses.pop(next(iter(self._addresses)))
        self._addresses[address] = bucket
        return bucket

    def take(self, session: Bucket | None, address: str | None) -> float:
        """Take a token from both buckets and return 0, or return the seconds until both
        have one (taking nothing)."""
        now = self.clock()
        buckets = [b for b in (session, self._address_bucket(address, now)) if b is not None]
        wait = max((b.wait(now) for b in buckets), default=0.0)
        if wait <= 0:
            for bucket in buckets:
                bucket.tokens -= 1.0
        return wait


def _kind(message: Message) -> tuple[str, str]:
    """(BackMsg type, fragment id) of a websocket message; ("", "") for anything else."""
    data = message.get("bytes") if message.get("type") == "websocket.receive" else None
    if not data:
        return "", ""
    try:
        msg = BackMsg.FromString(data)
    except Exception:  # noqa: BLE001 - Streamlit itself rejects it, with its own message
        return "", ""
    kind = msg.WhichOneof("type") or ""
    return kind, msg.rerun_script.fragment_id if kind == "rerun_script" else ""


class _Connection:
    """One websocket's receive side: reruns beyond the rate held, newer ones replacing
    them, everything delivered in order."""

    def __init__(self, limiter: RerunLimiter, address: str | None, receive: Receive) -> None:
        self._limiter = limiter
        self._address = address
        self._receive = receive
        self._bucket = limiter.session_bucket()
        self._other = Bucket(*_OTHER, limiter.clock())
        self._sent_once: set[str] = set()
        self._held: deque[tuple[Message, str, str]] = deque()
        self._reading: asyncio.Future | None = None

    def _hold(self, message: Message) -> None:
        kind, fragment = _kind(message)
        if kind in _DROPPED or kind in self._sent_once:
            self._limiter.dropped += 1
            return
        if kind in _ONCE:
            self._sent_once.add(kind)
        if kind in _COSTLY and self._held and self._held[-1][1:] == (kind, fragment):
            self._held[-1] = (message, kind, fragment)  # newer widget values win
            self._limiter.held += 1
            return
        self._held.append((message, kind, fragment))

    async def receive(self) -> Message:
        while True:
            wait = None
            if self._held:
                message, kind, _ = self._held[0]
                wait = self._wait(kind)
                if wait <= 0:
                    self._held.popleft()
                    return message
                self._limiter.delayed += 1
                if len(self._held) > _MAX_HELD:
                    self._held.clear()
                    return {"type": "websocket.disconnect", "code": 1008}
            if self._reading is None:
                self._reading = asyncio.ensure_future(self._receive())
            done, _ = await asyncio.wait({self._reading}, timeout=wait)
            if done:
                message = self._reading.result()
                self._reading = None
                if message.get("type") == "websocket.disconnect":
                    self._held.clear()  # nobody is left to answer
                    return message
                self._hold(message)

    def _wait(self, kind: str) -> float:
        """Seconds until the first held message may pass (0: now, its token taken)."""
        if kind in _COSTLY:
            return self._limiter.take(self._bucket, self._address)
        wait = self._other.wait(self._limiter.clock())
        if wait <= 0:
            self._other.tokens -= 1.0
        return wait

    def close(self) -> None:
        if self._reading is not None:
            self._reading.cancel()


class RerunLimitMiddleware:
    """Limit the reruns each websocket session, and each network address, may ask for.

    Parameters
    ----------
    app : ASGI application
        The application to wrap (Streamlit's).
    limits : Limits, optional
        Default: :meth:`Limits.from_env`.

    Examples
    --------
    >>> import streamlit as st                                      # doctest: +SKIP
    >>> from starlette.middleware import Middleware                 # doctest: +SKIP
    >>> app = st.App("app.py", middleware=[Middleware(RerunLimitMiddleware)])  # doctest: +SKIP
    """

    def __init__(
        self, app: Callable[[Scope, Receive, Send], Awaitable[None]], limits: Limits | None = None
    ) -> None:
        self.app = app
        self.limiter = RerunLimiter(limits or Limits.from_env())
        self._warned = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "websocket" or not str(scope.get("path", "")).endswith(
            _STREAM_PATH
        ):
            await self.app(scope, receive, send)
            return
        headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers") or []
        ]
        peer = (scope.get("client") or (None,))[0]
        address = client_address(peer, headers, self.limiter.limits.trusted)
        if not self.limiter.limits.trusted and not self._warned:
            self._warn_if_proxied(headers, address)
        connection = _Connection(self.limiter, address, receive)
        try:
            await self.app(scope, connection.receive, send)
        finally:
            connection.close()

    def _warn_if_proxied(self, headers: list[tuple[str, str]], address: str | None) -> None:
        """Say once, in the server's log, that every browser looks like one address."""
        if any(name.lower() == "x-forwarded-for" for name, _ in headers):
            self._warned = True
            _LOG.warning(
                "Browsers reach this server through a proxy (X-Forwarded-For), but %s is "
                "not set: every browser counts as the proxy's address %s for the rerun limit "
                "and the fair share. Set %s to the number of proxies in front of the server "
                "(1 for one nginx).",
                ENV_TRUST,
                address,
                ENV_TRUST,
            )
