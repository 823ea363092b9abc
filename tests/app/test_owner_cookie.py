"""The HttpOnly owner cookie: set once per browser, never readable by page scripts."""

import asyncio

from explorer.owner_cookie import (
    COOKIE,
    OwnerCookieMiddleware,
    request_token,
    set_cookie_header,
    valid_token,
)


async def _inner(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def _call(scope) -> list[tuple[bytes, bytes]]:
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    asyncio.run(OwnerCookieMiddleware(_inner)(scope, receive, send))
    return sent[0].get("headers", [])


def _set_cookies(headers) -> list[str]:
    return [v.decode() for k, v in headers if k == b"set-cookie"]


def test_a_browser_without_the_cookie_gets_an_httponly_one():
    (cookie,) = _set_cookies(_call({"type": "http", "scheme": "http", "headers": []}))
    name, rest = cookie.split("=", 1)
    assert name == COOKIE and valid_token(rest.split(";")[0])
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_each_browser_gets_its_own_token():
    tokens = {
        _set_cookies(_call({"type": "http", "headers": []}))[0].split(";")[0] for _ in range(20)
    }
    assert len(tokens) == 20


def test_a_browser_with_a_valid_cookie_keeps_it():
    header = (b"cookie", f"a=1; {COOKIE}={'x' * 32}".encode())
    assert _set_cookies(_call({"type": "http", "headers": [header]})) == []


def test_a_malformed_cookie_is_replaced():
    for bad in ("short", "x" * 31 + "!", "", "x" * 33):
        header = (b"cookie", f"{COOKIE}={bad}".encode())
        assert request_token({"headers": [header]}) is None
        assert len(_set_cookies(_call({"type": "http", "headers": [header]}))) == 1


def test_https_directly_or_behind_a_proxy_marks_it_secure():
    direct = _set_cookies(_call({"type": "http", "scheme": "https", "headers": []}))[0]
    proxied = _set_cookies(
        _call({"type": "http", "scheme": "http", "headers": [(b"x-forwarded-proto", b"https")]})
    )[0]
    assert "Secure" in direct and "Secure" in proxied


def test_websocket_handshakes_pass_through_untouched():
    seen = []

    async def inner(scope, receive, send):
        seen.append(scope["type"])

    asyncio.run(OwnerCookieMiddleware(inner)({"type": "websocket", "headers": []}, None, None))
    assert seen == ["websocket"]


def test_the_header_names_path_and_lifetime():
    header = set_cookie_header("y" * 32, secure=True).decode()
    assert header.startswith(f"{COOKIE}={'y' * 32}; Path=/; Max-Age=")
    assert header.endswith("Secure")


def test_a_copied_xsrf_value_never_maps_to_an_owner_cookie_key(monkeypatch):
    import explorer.owner_cookie as owner_cookie

    token = "z" * 32
    monkeypatch.setattr(owner_cookie, "_cookie", {COOKIE: token}.get)
    by_cookie = owner_cookie.browser_key()
    # A forger who sends no owner cookie but the same string as an XSRF cookie.
    monkeypatch.setattr(owner_cookie, "_cookie", {"_streamlit_xsrf": token}.get)
    assert owner_cookie.browser_key() != by_cookie
    monkeypatch.setattr(owner_cookie, "_cookie", {}.get)
    assert owner_cookie.browser_key() is None
