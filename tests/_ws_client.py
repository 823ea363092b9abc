"""A Streamlit client that speaks the app's websocket protocol without a browser.

The browser and the server exchange protobufs over ``/_stcore/stream``: the browser sends
``BackMsg`` (a rerun with its widgets' values, a heartbeat), the server answers with
``ForwardMsg`` (a new session, the page's elements as deltas, "script finished").  This
client does the same from Python, so a test can open many sessions (from other loopback
addresses, with or without a cookie) and send what a mischievous student would, fast.

It is test code: it reads only what the tests need (the elements' text, the widgets' ids,
labels and values) and keeps the widget values it has sent, as the browser does.
"""

from __future__ import annotations

import http.client
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import FileUploaderState, UploadedFileInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

__all__ = ["Element", "StreamlitClient", "flood", "http_get"]

# Element types whose value is a widget's (the ones the tests change or press).
_WIDGET_VALUE = {
    "number_input": "double_value",
    "button": "trigger_value",
    "checkbox": "bool_value",
    "text_input": "string_value",
    "file_uploader": "file_uploader_state_value",
}


@dataclass
class Element:
    """One element of a page as the deltas drew it."""

    kind: str  # "markdown", "number_input", "button", "alert", ...
    text: str  # its body or label
    widget_id: str = ""
    data_type: int = 0  # a number input's: 0 int, 1 float
    default: Any = None


@dataclass
class Page:
    """What one script run drew, and how it ended."""

    elements: list[Element] = field(default_factory=list)
    finished: bool = False
    status: str = ""  # the script_finished status name
    exception: str = ""

    def texts(self) -> str:
        return "\n".join(e.text for e in self.elements)

    def widget(self, kind: str, label: str) -> Element:
        """The widget of ``kind`` whose label contains ``label`` (case-insensitive)."""
        for e in self.elements:
            if e.kind == kind and e.widget_id and label.lower() in e.text.lower():
                return e
        known = [(e.kind, e.text) for e in self.elements if e.widget_id]
        raise LookupError(f"no {kind} labelled {label!r} on the page; widgets: {known}")


def _source(address: str) -> tuple[str, int]:
    return (address, 0)


def http_get(
    url: str, path: str = "/", source: str = "127.0.0.1", cookie: str = "", timeout: float = 60
) -> tuple[int, dict[str, list[str]], bytes]:
    """``GET path`` from ``source`` (a loopback address such as 127.0.0.2); returns the
    status, the headers (lower-case names, every value) and the body."""
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(
        parsed.hostname, parsed.port, timeout=timeout, source_address=_source(source)
    )
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        response = conn.getresponse()
        headers: dict[str, list[str]] = {}
        for name, value in response.getheaders():
            headers.setdefault(name.lower(), []).append(value)
        return response.status, headers, response.read()
    finally:
        conn.close()


class StreamlitClient:
    """One browser tab: an HTTP visit for the cookies, then the app's websocket.

    Parameters
    ----------
    url : str
        The server, ``http://127.0.0.1:PORT``.
    source : str
        The loopback address to connect from (127.0.0.1 is "localhost" to Streamlit;
        127.0.0.2 and up are other client addresses).
    cookies : dict, optional
        Cookies to start with (another tab of the same browser passes the first tab's
        ``cookies``); by default the server's first response gives fresh ones.
    page : str
        The page's URL path, e.g. "train" ("" is the app's first page).
    """

    def __init__(
        self,
        url: str,
        source: str = "127.0.0.1",
        cookies: dict[str, str] | None = None,
        page: str = "",
        query: str = "",
    ) -> None:
        self.url = url
        self.source = source
        self.cookies = dict(cookies or {})
        self.page_name = page
        self.query = query
        self.page_hash = ""
        self.session_id = ""  # the server's id of this session (uploads are filed under it)
        self.widgets: dict[str, Any] = {}  # widget id -> (proto field, value) sent
        self.auto_reruns: dict[str, float] = {}  # live fragment id -> its interval
        self.runs = 0  # runs read to their end
        self.started = 0  # whole-page runs seen starting (each a "new_session" message)
        self.url_query = query  # the page's URL query, as the server last set it
        self._ws = None
        self._pending: list[ForwardMsg] = []

    # -- connecting ---------------------------------------------------------------------
    def open(self, timeout: float = 60) -> StreamlitClient:
        """Visit the page over HTTP (cookies), then open the websocket (no script run yet)."""
        _, headers, _ = http_get(
            self.url, "/" + self.page_name, self.source, self.cookie_header(), timeout
        )
        self._keep_cookies(headers)
        host = urlparse(self.url).netloc
        xsrf = self.cookies.get("_streamlit_xsrf", "")
        self._ws = connect(
            f"ws://{host}/_stcore/stream",
            subprotocols=["streamlit", xsrf] if xsrf else ["streamlit"],
            origin=self.url,
            additional_headers={"Cookie": self.cookie_header()},
            compression=None,
            open_timeout=timeout,
            ping_interval=None,
            max_size=2**26,
            proxy=None,
            source_address=_source(self.source),
        )
        self._ws.__enter__()  # closed by close(); websockets 17 warns on a bare connect()
        return self

    def _keep_cookies(self, headers: dict[str, list[str]]) -> None:
        for value in headers.get("set-cookie", []):
            jar: SimpleCookie = SimpleCookie()
            jar.load(value)
            for name, morsel in jar.items():
                self.cookies[name] = morsel.value

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
            self._ws = None

    def __enter__(self) -> StreamlitClient:
        return self.open() if self._ws is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sending --------------------------------------------------------------------------
    def rerun_message(self, changes: dict[str, Any] | None = None, fragment_id: str = "") -> bytes:
        """A ``rerun_script`` BackMsg carrying every widget value sent so far plus
        ``changes`` (widget id -> value; the proto field is taken from the element)."""
        for widget_id, value in (changes or {}).items():
            kind = self._kinds.get(widget_id, "number_input")
            self.widgets[widget_id] = (_WIDGET_VALUE.get(kind, "double_value"), value)
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        state.page_script_hash = self.page_hash
        state.page_name = "" if self.page_hash else self.page_name
        state.fragment_id = fragment_id
        state.is_auto_rerun = bool(fragment_id)
        for widget_id, (field_name, value) in self.widgets.items():
            widget = state.widget_states.widgets.add()
            widget.id = widget_id
            if field_name == "double_value" and isinstance(value, int):
                field_name = "int_value"
            if field_name == "file_uploader_state_value":  # a message: copied, not set
                widget.file_uploader_state_value.CopyFrom(value)
            else:
                setattr(widget, field_name, value)
        # A button's press is sent once, then it is back to unpressed.
        self.widgets = {k: v for k, v in self.widgets.items() if v[0] != "trigger_value"}
        return msg.SerializeToString()

    _kinds: dict[str, str] = {}

    def send(self, data: bytes) -> None:
        self._ws.send(data)

    def rerun(self, changes: dict[str, Any] | None = None, timeout: float = 60) -> Page:
        """Run the page (with ``changes`` to its widgets) and wait for it to finish."""
        self.send(self.rerun_message(changes))
        return self.read_run(timeout)

    def press(self, label: str, page: Page, timeout: float = 60) -> Page:
        """Press the button labelled ``label`` on ``page`` and wait for the rerun."""
        button = page.widget("button", label)
        return self.rerun({button.widget_id: True}, timeout)

    def upload(
        self,
        label: str,
        name: str,
        content: bytes,
        page: Page,
        mime: str = "application/zip",
        timeout: float = 60,
    ) -> Page:
        """Put ``content`` in the file uploader labelled ``label`` on ``page`` as the
        browser does, and wait for the rerun that reads it.

        The browser asks the session for an upload URL (a ``file_urls_request``), PUTs the
        file there over HTTP (multipart, with the session's cookies and, when XSRF
        protection is on, the XSRF cookie's value as the ``X-Xsrftoken`` header), then
        reruns with the uploader's state naming the file.  A refused PUT raises
        RuntimeError with the server's status and answer.
        """
        uploader = page.widget("file_uploader", label)
        request_id = uuid.uuid4().hex
        ask = BackMsg()
        ask.file_urls_request.request_id = request_id
        ask.file_urls_request.file_names.append(name)
        ask.file_urls_request.session_id = self.session_id
        self.send(ask.SerializeToString())
        urls = self._file_urls(request_id, timeout)
        status, answer = self._put(urls.upload_url, name, content, mime, timeout)
        if status not in (200, 204):
            raise RuntimeError(f"the upload of {name} was refused: {status} {answer[:300]!r}")
        state = FileUploaderState()
        state.uploaded_file_info.append(
            UploadedFileInfo(name=name, size=len(content), file_id=urls.file_id, file_urls=urls)
        )
        return self.rerun({uploader.widget_id: state}, timeout)

    def _file_urls(self, request_id: str, timeout: float) -> Any:
        """The session's answer to a file_urls_request; other messages meanwhile are kept
        for the next read."""
        deadline = time.monotonic() + timeout
        kept: list[ForwardMsg] = []
        try:
            while time.monotonic() < deadline:
                for msg in self.messages(max(0.05, deadline - time.monotonic())):
                    if msg.WhichOneof("type") != "file_urls_response":
                        kept.append(msg)
                        continue
                    answer = msg.file_urls_response
                    if answer.response_id != request_id:
                        continue
                    if answer.error_msg or not answer.file_urls:
                        raise RuntimeError(f"no upload URL: {answer.error_msg or 'none given'}")
                    return answer.file_urls[0]
        finally:
            self._pending[:0] = kept
        raise TimeoutError(f"no upload URL in {timeout} s")

    def _put(
        self, path: str, name: str, content: bytes, mime: str, timeout: float
    ) -> tuple[int, bytes]:
        """PUT one file to ``path`` as a multipart form, as the browser's uploader does."""
        boundary = uuid.uuid4().hex
        body = (
            (
                f"--{boundary}\r\n"
                f'Content-Disposition: form-data; name="file"; filename="{name}"\r\n'
                f"Content-Type: {mime}\r\n\r\n"
            ).encode()
            + content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        headers = {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Cookie": self.cookie_header(),
            "Origin": self.url,
        }
        if "_streamlit_xsrf" not in self.cookies:
            # The page's HTML sets no XSRF cookie: the browser gets it from the health
            # check its script makes first.
            _, answer, _ = http_get(
                self.url, "/_stcore/health", self.source, self.cookie_header(), timeout
            )
            self._keep_cookies(answer)
            headers["Cookie"] = self.cookie_header()
        xsrf = self.cookies.get("_streamlit_xsrf", "")
        if xsrf:
            headers["X-Xsrftoken"] = xsrf
        parsed = urlparse(self.url)
        conn = http.client.HTTPConnection(
            parsed.hostname, parsed.port, timeout=timeout, source_address=_source(self.source)
        )
        try:
            conn.request("PUT", path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    # -- reading --------------------------------------------------------------------------
    def messages(self, timeout: float) -> Iterator[ForwardMsg]:
        """Forward messages as they arrive, until ``timeout`` seconds pass without one
        (first those an upload set aside while it waited for its URL)."""
        while self._pending:
            yield self._pending.pop(0)
        while True:
            try:
                data = self._ws.recv(timeout=timeout)
            except TimeoutError:
                return
            msg = ForwardMsg()
            msg.ParseFromString(data)
            yield msg

    def read_run(self, timeout: float = 60, fragment: bool = False) -> Page:
        """Read until a whole-page run has finished (``fragment``: until a fragment run,
        or a whole-page run it asked for, has finished)."""
        page = Page()
        deadline = time.monotonic() + timeout
        fragment_run = fragment  # the next run to start is the fragment's own
        while time.monotonic() < deadline:
            for msg in self.messages(max(0.05, deadline - time.monotonic())):
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    if not fragment_run:  # a whole-page run registers its fragments again
                        self.started += 1
                        self.auto_reruns.clear()
                    fragment_run = False
                    self.page_hash = msg.new_session.page_script_hash or self.page_hash
                    session_id = msg.new_session.initialize.session_id
                    self.session_id = session_id or self.session_id
                    page = Page()  # a fresh run's elements
                elif kind == "auto_rerun":
                    self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
                elif kind == "stop_auto_rerun":
                    for fragment_id in msg.stop_auto_rerun.fragment_ids:
                        self.auto_reruns.pop(fragment_id, None)
                elif kind == "delta":
                    self._read_delta(msg, page)
                elif kind == "page_info_changed":
                    self.url_query = msg.page_info_changed.query_string
                elif kind == "script_finished":
                    status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                    if status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" and not fragment:
                        continue
                    page.finished, page.status = True, status
                    if status != "FINISHED_EARLY_FOR_RERUN":
                        self.runs += 1
                        return page
                    page = Page()
                if time.monotonic() > deadline:
                    break
        raise TimeoutError(f"no finished run in {timeout} s; last run drew: {page.texts()[:500]}")

    def tick(self, timeout: float = 60) -> Page:
        """What the browser does each interval of a live fragment (``run_every``): rerun the
        fragment; returns what that run drew (or the whole page, when the fragment asked
        for a whole-page rerun).  An empty page when no fragment ticks."""
        if not self.auto_reruns:
            return Page(finished=True)
        fragment_id = next(iter(self.auto_reruns))
        self.send(self.rerun_message(fragment_id=fragment_id))
        return self.read_run(timeout, fragment=True)

    def watch(self, predicate, timeout: float = 60) -> Page:
        """Tick the live fragment (at its interval) until ``predicate(page text)`` holds;
        returns that page.  Raises TimeoutError with the last text otherwise."""
        deadline = time.monotonic() + timeout
        page = Page()
        while time.monotonic() < deadline:
            interval = min(self.auto_reruns.values(), default=0.5)
            time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
            page = self.tick(max(1.0, deadline - time.monotonic()))
            if predicate(page.texts()):
                return page
            if not self.auto_reruns and not predicate(page.texts()):
                page = self.rerun(timeout=max(1.0, deadline - time.monotonic()))
                if predicate(page.texts()):
                    return page
        raise TimeoutError(f"not seen in {timeout} s; last drawn: {page.texts()[-500:]}")

    def _read_delta(self, msg: ForwardMsg, page: Page) -> None:
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        body = getattr(element, kind)
        text = ""
        for name in ("body", "label", "text"):
            if hasattr(body, name) and isinstance(getattr(body, name), str):
                text = getattr(body, name)
                if text:
                    break
        widget_id = getattr(body, "id", "") if kind in _WIDGET_VALUE else ""
        if kind == "exception":
            page.exception = f"{body.type}: {body.message}"
        item = Element(kind=kind, text=text, widget_id=widget_id)
        if kind == "number_input":
            item.data_type = body.data_type
            item.default = body.default
        if widget_id:
            StreamlitClient._kinds[widget_id] = kind
        page.elements.append(item)


def flood(client: StreamlitClient, widget_id: str, per_second: float, stop: threading.Event) -> int:
    """Send reruns that change a number input as fast as ``per_second`` allows until
    ``stop`` is set, reading (and dropping) the server's answers meanwhile; returns the
    number sent.  Runs in a thread of its own."""
    sent, value, interval = 0, 1, 1.0 / per_second
    next_at = time.monotonic()
    reader = threading.Thread(target=_drain, args=(client, stop), daemon=True)
    reader.start()
    try:
        while not stop.is_set():
            value = 2 if value == 1 else 1
            client.send(client.rerun_message({widget_id: value}))
            sent += 1
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                stop.wait(delay)
    except ConnectionClosed:
        pass
    return sent


def _drain(client: StreamlitClient, stop: threading.Event) -> None:
    try:
        while not stop.is_set():
            try:
                client._ws.recv(timeout=0.5)
            except TimeoutError:
                continue
    except ConnectionClosed:
        pass


@contextmanager
def session(url: str, **options: Any) -> Iterator[StreamlitClient]:
    """An open :class:`StreamlitClient`, closed afterwards."""
    client = StreamlitClient(url, **options).open()
    try:
        yield client
    finally:
        client.close()
