"""The guard in front of the page's server: Host, site and key, decided request by request."""

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from deskresearch.ui.guard import Guard, Policy, has_key, hosts_for, refusal

PORT = 8765
POLICY = Policy(hosts_for("127.0.0.1", PORT), "the-key", PORT)
OWN = {"host": f"127.0.0.1:{PORT}"}


@pytest.mark.parametrize(("method", "headers", "why"), [
    ("GET", {"host": f"rebound.example:{PORT}"}, "is not this server's"),
    ("GET", {"host": "127.0.0.1:9999"}, "is not this server's"),  # another port, another server
    ("GET", {**OWN, "sec-fetch-site": "cross-site"}, "another site"),
    ("GET", {**OWN, "sec-fetch-site": "same-site"}, "another site"),  # localhost, another port
    ("POST", {**OWN, "origin": "http://127.0.0.1:9999"}, "another origin"),
    ("POST", {**OWN, "origin": "null"}, "another origin"),  # a sandboxed frame, a file
    ("POST", OWN, "needs the page's Origin"),
    ("DELETE", {**OWN, "sec-fetch-site": "same-origin"}, "needs the page's Origin"),
])  # fmt: skip
def test_a_request_from_elsewhere_is_refused_with_the_reason(
    method: str, headers: dict[str, str], why: str
) -> None:
    assert why in refusal(POLICY, method, headers)


@pytest.mark.parametrize(("method", "headers"), [
    ("GET", {**OWN, "sec-fetch-site": "none"}),  # the printed link, typed or opened
    ("GET", {**OWN, "sec-fetch-site": "same-origin"}),
    ("GET", {"host": f"LOCALHOST:{PORT}"}),  # names are case-insensitive
    ("POST", {**OWN, "origin": f"http://127.0.0.1:{PORT}", "sec-fetch-site": "same-origin"}),
])  # fmt: skip
def test_the_page_s_own_requests_pass(method: str, headers: dict[str, str]) -> None:
    assert refusal(POLICY, method, headers) == ""


def test_the_key_is_the_cookie_s_value_exactly() -> None:
    assert has_key(POLICY, {"cookie": f"other=1; deskresearch-ui-{PORT}=the-key"})
    assert not has_key(POLICY, {"cookie": f"deskresearch-ui-{PORT}=the-key-not"})
    assert not has_key(POLICY, {"cookie": "deskresearch-ui-9999=the-key"})  # another server's
    assert not has_key(POLICY, {"cookie": '"unbalanced'})
    assert not has_key(POLICY, {})


def test_a_server_on_every_interface_answers_to_the_machine_s_names_and_loopback() -> None:
    hosts = hosts_for("0.0.0.0", PORT)
    assert {f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}"} <= hosts
    assert len(hosts) > 3  # the machine's own name too
    assert hosts_for("::1", PORT) >= {f"[::1]:{PORT}"}
    assert "localhost" in hosts_for("127.0.0.1", 80) and "localhost" not in hosts


def test_the_link_s_key_becomes_a_strict_cookie_and_every_response_forbids_outside_loads() -> None:
    async def hello(request: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    app = Guard(Starlette(routes=[Route("/", hello), Route("/api/x", hello)]), POLICY)
    client = TestClient(app, base_url=f"http://127.0.0.1:{PORT}")
    first = client.get("/?token=the-key", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "the-key" in cookie
    assert client.get("/api/x").text == "hello"  # the client keeps the cookie
    page = client.get("/")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    stranger = TestClient(app, base_url=f"http://127.0.0.1:{PORT}")
    assert stranger.get("/?token=guess").status_code == 401
    assert stranger.get("/api/x").status_code == 401


def test_a_one_visit_key_opens_the_page_once_and_the_printed_key_stays_good() -> None:
    async def hello(request: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    policy = Policy(hosts_for("127.0.0.1", PORT), "the-key", PORT, once={"browser-key"})
    app = Guard(Starlette(routes=[Route("/", hello)]), policy)

    def visit(key: str) -> int:
        client = TestClient(app, base_url=f"http://127.0.0.1:{PORT}")  # a browser of its own
        return client.get("/", params={"token": key}, follow_redirects=False).status_code

    browser = TestClient(app, base_url=f"http://127.0.0.1:{PORT}")
    first = browser.get("/", params={"token": "browser-key"}, follow_redirects=False)
    assert first.status_code == 303 and browser.cookies[policy.cookie] == "the-key"
    assert browser.get("/").text == "hello"  # the lasting key's cookie lets it in from now on
    assert visit("browser-key") == 401
    assert [visit("the-key"), visit("the-key")] == [303, 303]
    assert policy.once == set()


def test_a_key_that_is_not_ascii_is_refused_like_any_wrong_key() -> None:
    app = Guard(Starlette(routes=[Route("/", lambda request: PlainTextResponse("hi"))]), POLICY)
    client = TestClient(app, base_url=f"http://127.0.0.1:{PORT}")
    assert client.get("/", params={"token": "é"}, follow_redirects=False).status_code == 401
    raw = f"{POLICY.cookie}=é".encode("latin-1")  # a cookie header as some client sent it
    assert client.get("/", headers={b"cookie": raw}).status_code == 401
