"""The rerun limit in front of Streamlit's websocket (issue 37, row 2), message by message:
reruns beyond the rate are held and the newest replaces the held one, so the page ends on
the last widget values; other messages keep their order; one address shares one bucket."""

from __future__ import annotations

import asyncio

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from explorer.rate_limit import (
    Limits,
    RerunLimiter,
    RerunLimitMiddleware,
    _Connection,
    client_address,
    trusted_proxies,
)

STREAM = {"type": "websocket", "path": "/_stcore/stream", "client": ("10.0.0.7", 5000)}


def _rerun(value: int, fragment: str = "") -> dict:
    msg = BackMsg()
    msg.rerun_script.fragment_id = fragment
    widget = msg.rerun_script.widget_states.widgets.add()
    widget.id, widget.int_value = "w_n_iter", value
    return {"type": "websocket.receive", "bytes": msg.SerializeToString()}


def _heartbeat() -> dict:
    msg = BackMsg()
    msg.app_heartbeat = True
    return {"type": "websocket.receive", "bytes": msg.SerializeToString()}


def _value(message: dict) -> int:
    return BackMsg.FromString(message["bytes"]).rerun_script.widget_states.widgets[0].int_value


class _Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _connection(limits: Limits, clock: _Clock, address="10.0.0.7"):
    inbox: asyncio.Queue = asyncio.Queue()
    limiter = RerunLimiter(limits, clock=clock)
    return _Connection(limiter, address, inbox.get), inbox, limiter


# Rates high enough that a held rerun looks at the (fake) clock again every 50 ms.
_LIMITS = Limits(session_rate=20, session_burst=2, address_rate=0, address_burst=1)


def test_reruns_beyond_the_burst_wait_and_the_newest_wins():
    async def scenario():
        clock = _Clock()
        conn, inbox, limiter = _connection(_LIMITS, clock)
        for value in range(1, 8):
            inbox.put_nowait(_rerun(value))
        first = [_value(await conn.receive()) for _ in range(2)]  # the burst
        waiting = asyncio.ensure_future(conn.receive())
        await asyncio.sleep(0.2)  # no time passes on the clock: no token
        assert not waiting.done()
        clock.now += 1.0
        last = _value(await asyncio.wait_for(waiting, 5))
        conn.close()
        return first, last, limiter

    first, last, limiter = asyncio.run(scenario())
    assert first == [1, 2]
    assert last == 7, "the held reruns 3-6 were replaced by the newest, 7"
    assert limiter.held == 4


def test_other_messages_keep_their_order_behind_a_held_rerun():
    async def scenario():
        clock = _Clock()
        conn, inbox, _ = _connection(_LIMITS, clock)
        for message in [_rerun(1), _rerun(2), _rerun(3), _heartbeat(), _rerun(4), _rerun(5)]:
            inbox.put_nowait(message)
        out = [await conn.receive() for _ in range(2)]
        waiting = asyncio.ensure_future(conn.receive())
        await asyncio.sleep(0.2)
        clock.now += 1.0
        out.append(await asyncio.wait_for(waiting, 5))
        out.append(await asyncio.wait_for(conn.receive(), 5))  # the heartbeat, no token
        clock.now += 1.0
        out.append(await asyncio.wait_for(conn.receive(), 5))
        conn.close()
        return out

    out = asyncio.run(scenario())
    kinds = [BackMsg.FromString(m["bytes"]).WhichOneof("type") for m in out]
    assert kinds == ["rerun_script"] * 3 + ["app_heartbeat", "rerun_script"]
    assert [
        _value(m) for m in out if BackMsg.FromString(m["bytes"]).rerun_script.widget_states.widgets
    ] == [1, 2, 3, 5]


def test_a_fragment_rerun_does_not_replace_a_whole_page_rerun():
    async def scenario():
        clock = _Clock()
        conn, inbox, _ = _connection(_LIMITS, clock)
        for message in [_rerun(1), _rerun(2), _rerun(3), _rerun(4, fragment="live")]:
            inbox.put_nowait(message)
        out = [await conn.receive() for _ in range(2)]
        waiting = asyncio.ensure_future(conn.receive())
        await asyncio.sleep(0.2)
        clock.now += 1.0
        out.append(await asyncio.wait_for(waiting, 5))
        out.append(await asyncio.wait_for(conn.receive(), 5))
        conn.close()
        return [BackMsg.FromString(m["bytes"]).rerun_script.fragment_id for m in out]

    assert asyncio.run(scenario()) == ["", "", "", "live"]


def test_a_disconnect_is_passed_at_once_and_drops_what_was_held():
    async def scenario():
        clock = _Clock()
        conn, inbox, _ = _connection(_LIMITS, clock)
        for value in range(1, 5):
            inbox.put_nowait(_rerun(value))
        inbox.put_nowait({"type": "websocket.disconnect", "code": 1001})
        out = [await asyncio.wait_for(conn.receive(), 5) for _ in range(3)]
        conn.close()
        return out

    out = asyncio.run(scenario())
    # Two reruns of the burst, then the disconnect, not the held reruns 3 and 4.
    assert [m["type"] for m in out] == ["websocket.receive"] * 2 + ["websocket.disconnect"]


def test_sessions_of_one_address_share_its_bucket():
    async def scenario():
        clock = _Clock()
        limits = Limits(session_rate=0, session_burst=1, address_rate=20, address_burst=3)
        limiter = RerunLimiter(limits, clock=clock)
        inboxes = [asyncio.Queue(), asyncio.Queue(), asyncio.Queue()]
        conns = [
            _Connection(limiter, address, box.get)
            for address, box in zip(["10.0.0.7", "10.0.0.7", "10.0.0.8"], inboxes, strict=True)
        ]
        for box in inboxes:
            for value in range(1, 4):
                box.put_nowait(_rerun(value))
        got = [await conns[0].receive() for _ in range(2)]
        got.append(await conns[1].receive())  # the address's third token
        second = asyncio.ensure_future(conns[1].receive())
        other = await asyncio.wait_for(conns[2].receive(), 5)  # its own address: at once
        await asyncio.sleep(0.2)
        blocked = not second.done()
        clock.now += 1.0
        await asyncio.wait_for(second, 5)
        for conn in conns:
            conn.close()
        return len(got), blocked, _value(other)

    assert asyncio.run(scenario()) == (3, True, 1)


def test_the_middleware_leaves_http_and_other_sockets_alone_and_limits_the_stream():
    seen = []

    async def app(scope, receive, send):
        seen.append((scope["type"], await receive()))

    async def scenario():
        middleware = RerunLimitMiddleware(app, limits=_LIMITS)

        async def receive():
            return {"type": "http.request"}

        await middleware({"type": "http", "path": "/"}, receive, None)
        await middleware({**STREAM}, _fake_receive([_rerun(9)]), None)

    asyncio.run(scenario())
    assert seen[0] == ("http", {"type": "http.request"})
    assert _value(seen[1][1]) == 9


def _fake_receive(messages):
    queue: asyncio.Queue = asyncio.Queue()
    for m in messages:
        queue.put_nowait(m)
    return queue.get


def test_the_client_address_trusts_only_the_proxies_it_is_told_of():
    forwarded = [("X-Forwarded-For", "6.6.6.6, 10.1.2.3")]
    assert client_address("127.0.0.1", forwarded, trusted=0) == "localhost"
    assert client_address("10.9.9.9", forwarded, trusted=0) == "10.9.9.9"
    # One trusted proxy: what it saw (the last entry); the browser's own claim is ignored.
    assert client_address("127.0.0.1", forwarded, trusted=1) == "10.1.2.3"
    assert client_address("127.0.0.1", forwarded, trusted=2) == "6.6.6.6"
    assert client_address("127.0.0.1", [], trusted=1) == "localhost"  # not proxied
    assert client_address(None, [], trusted=0) is None


def test_settings_from_the_environment_and_their_messages():
    assert trusted_proxies({"CSVM_TRUST_FORWARDED": "true"}) == 1
    assert trusted_proxies({}) == 0
    limits = Limits.from_env({"CSVM_RERUNS_PER_SESSION": "5:12", "CSVM_RERUNS_PER_ADDRESS": "0"})
    assert (limits.session_rate, limits.session_burst, limits.address_rate) == (5, 12, 0)
    assert Limits.from_env({"CSVM_RERUNS_PER_SESSION": "4"}).session_burst == 12
    with pytest.raises(ValueError, match="CSVM_RERUNS_PER_ADDRESS=.*such as 3 or 3:10"):
        Limits.from_env({"CSVM_RERUNS_PER_ADDRESS": "lots"})
    with pytest.raises(ValueError, match="CSVM_TRUST_FORWARDED"):
        trusted_proxies({"CSVM_TRUST_FORWARDED": "nginx"})


def test_an_untrusted_proxy_is_named_once_in_the_log(caplog):
    async def app(scope, receive, send):
        await receive()

    proxied = {**STREAM, "client": ("127.0.0.1", 1), "headers": [(b"x-forwarded-for", b"10.1.2.3")]}

    async def scenario():
        middleware = RerunLimitMiddleware(app, limits=_LIMITS)
        for _ in range(2):
            await middleware(dict(proxied), _fake_receive([_rerun(1)]), None)

    with caplog.at_level("WARNING", logger="explorer.rate_limit"):
        asyncio.run(scenario())
    warnings = [r.getMessage() for r in caplog.records if "CSVM_TRUST_FORWARDED" in r.getMessage()]
    assert len(warnings) == 1 and "localhost" in warnings[0]


def _message(kind: str) -> dict:
    """A BackMsg whose one field ``kind`` is a flag (``load_git_info``, ``debug_…``)."""
    msg = BackMsg()
    setattr(msg, kind, True)
    return {"type": "websocket.receive", "bytes": msg.SerializeToString()}


def test_git_info_passes_once_and_developer_messages_never():
    """16,000 load_git_info messages in 0.2 s made Streamlit run git 16,000 times: every
    page took 23 s, for minutes after the sender left."""

    async def scenario():
        clock = _Clock()
        conn, inbox, limiter = _connection(_LIMITS, clock)
        for _ in range(500):
            inbox.put_nowait(_message("load_git_info"))
        inbox.put_nowait(_message("debug_shutdown_runtime"))
        inbox.put_nowait(_heartbeat())
        out = [await asyncio.wait_for(conn.receive(), 5) for _ in range(2)]
        conn.close()
        return out, limiter

    out, limiter = asyncio.run(scenario())
    kinds = [BackMsg.FromString(m["bytes"]).WhichOneof("type") for m in out]
    assert kinds == ["load_git_info", "app_heartbeat"]
    assert limiter.dropped == 500  # 499 repeats and the shutdown


def test_a_flood_of_any_other_message_is_held_then_the_connection_closed():
    async def scenario():
        clock = _Clock()
        conn, inbox, _ = _connection(_LIMITS, clock)
        for _ in range(1000):
            inbox.put_nowait(_heartbeat())
        passed = 0
        while True:
            message = await asyncio.wait_for(conn.receive(), 5)
            if message["type"] == "websocket.disconnect":
                conn.close()
                return passed, message
            passed += 1

    passed, message = asyncio.run(scenario())
    assert passed == 100  # the burst; no time passed on the clock for more
    assert message["code"] == 1008
