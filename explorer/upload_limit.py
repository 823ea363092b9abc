"""Bytes a network address may upload in ten minutes, in front of Streamlit's uploads.

Streamlit keeps every uploaded file in the server's memory until its session lets it go.
A script that asked for upload addresses and sent a 45 MB file to each, over and over,
took a server from 395 MB to 1,115 MB in 3.3 s, and nothing counted it: the upload
quotas of :mod:`csvm.data.own_images` see only the images a student chooses to use.

:class:`UploadLimitMiddleware` counts the bytes of every request to
``/_stcore/upload_file`` by the address it comes from (the rule of
:func:`explorer.rate_limit.client_address`, so cleared cookies and new tabs do not help)
over a sliding window, and answers 429 with a plain sentence once an address has sent
``CSVM_UPLOAD_MB_PER_ADDRESS`` megabytes (default 300) in ten minutes: six of the largest
uploads the app takes (50 MB), or hundreds of run exports.  A class behind one router
shares one address: raise it there (README), or 0 turns it off.

No Streamlit here: plain ASGI.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from explorer.rate_limit import client_address, trusted_proxies

__all__ = ["ENV_UPLOAD", "UploadBudget", "UploadLimitMiddleware", "upload_budget_mb"]

#: Megabytes one network address may upload in :data:`WINDOW_SECONDS`; 0: no limit.
ENV_UPLOAD = "CSVM_UPLOAD_MB_PER_ADDRESS"
_DEFAULT_MB = 300.0
WINDOW_SECONDS = 600.0
_UPLOAD_PATH = "/_stcore/upload_file"
_MAX_ADDRESSES = 4096

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_REFUSAL = (
    "This network address has uploaded {mb:.0f} MB in the last ten minutes, the most this "
    "server takes (CSVM_UPLOAD_MB_PER_ADDRESS). Wait a few minutes and upload again."
)


def upload_budget_mb(environ: Mapping[str, str] | None = None) -> float:
    """The megabytes ``CSVM_UPLOAD_MB_PER_ADDRESS`` allows (0: no limit).

    Raises
    ------
    ValueError
        A value that is not a number of megabytes, naming the variable.
    """
    environ = os.environ if environ is None else environ
    text = environ.get(ENV_UPLOAD, "").strip()
    if not text:
        return _DEFAULT_MB
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ValueError(
            f"environment variable {ENV_UPLOAD}={text!r} is not a number of megabytes: "
            "write, say, 300 (0 turns the limit off)"
        )
    return value


class UploadBudget:
    """Bytes uploaded per address over a sliding window (thread-safe, bounded).

    Parameters
    ----------
    limit_bytes : int
        Bytes one address may send within ``window`` seconds (0: no limit).
    window : float
        Seconds.
    clock : callable
        Seconds, monotonic (a test passes its own).
    """

    def __init__(
        self,
        limit_bytes: int,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit_bytes, self.window, self.clock = int(limit_bytes), window, clock
        self._sent: OrderedDict[str, deque[tuple[float, int]]] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> UploadBudget:
        """The budget ``CSVM_UPLOAD_MB_PER_ADDRESS`` sets (:func:`upload_budget_mb`).

        Raises
        ------
        ValueError
            As :func:`upload_budget_mb`.
        """
        return cls(int(upload_budget_mb(environ) * 2**20))

    def used(self, address: str) -> int:
        """Bytes ``address`` has sent within the window."""
        with self._lock:
            return sum(n for _, n in self._recent(address))

    def charge(self, address: str, nbytes: int) -> bool:
        """Count ``nbytes`` against ``address``; False (nothing counted) when they would
        take it past the limit."""
        if self.limit_bytes <= 0:
            return True
        with self._lock:
            recent = self._recent(address)
            if sum(n for _, n in recent) + nbytes > self.limit_bytes:
                return False
            recent.append((self.clock(), int(nbytes)))
            self._sent.move_to_end(address)
            while len(self._sent) > _MAX_ADDRESSES:  # the least recently active goes
                self._sent.popitem(last=False)
            return True

    def _recent(self, address: str) -> deque[tuple[float, int]]:
        recent = self._sent.setdefault(address, deque())
        start = self.clock() - self.window
        while recent and recent[0][0] < start:
            recent.popleft()
        return recent


class UploadLimitMiddleware:
    """Refuse uploads beyond an address's budget (see the module's docstring).

    Parameters
    ----------
    app : ASGI application
    budget : UploadBudget, optional
        Default: ``CSVM_UPLOAD_MB_PER_ADDRESS`` megabytes in ten minutes.
    trusted : int, optional
        Reverse proxies to trust for ``X-Forwarded-For`` (default: ``CSVM_TRUST_FORWARDED``).
    """

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        budget: UploadBudget | None = None,
        trusted: int | None = None,
    ) -> None:
        self.app = app
        self.budget = budget or UploadBudget.from_env()
        self.trusted = trusted_proxies() if trusted is None else trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        method = str(scope.get("method", "")).upper()
        if scope.get("type") != "http" or _UPLOAD_PATH not in path or method not in ("PUT", "POST"):
            await self.app(scope, receive, send)
            return
        headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers") or []
        ]
        peer = (scope.get("client") or (None,))[0]
        address = client_address(peer, headers, self.trusted) or "unknown"
        length = next((v for k, v in headers if k.lower() == "content-length"), "")
        # Browsers send the length first; a request without one is counted as the limit
        # allows at most (Streamlit refuses a file above server.maxUploadSize anyway).
        nbytes = int(length) if length.isdigit() else 50 * 2**20
        if not self.budget.charge(address, nbytes):
            await _refuse(send, self.budget.used(address) / 2**20)
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, mb: float) -> None:
    body = _REFUSAL.format(mb=mb).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", b"60"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
