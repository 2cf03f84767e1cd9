"""``deskresearch ui`` refuses requests that are not its own page's, in headless chromium.

A page on another loopback origin, in the same browser (so with the desk's cookie), posts to
the desk by ``fetch`` and by a form and reads its list: nothing starts, nothing is spent or
saved. A name of the attacker's mapped to 127.0.0.1 in the browser (DNS rebinding) gets
nothing; a foreign ``Origin`` or ``Host``, a cross-site or same-site request and a missing or
guessed key are refused.
"""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext

from tests.support import browser
from tests.support.desk import Desk
from tests.support.desk_page import TOPIC, model_calls, threads
from tests.support.loopback import FakeWeb

pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip


ATTACK = """<!DOCTYPE html><html><body>
<form id="f" method="post" action="{desk}/api/runs" enctype="text/plain">
<input name='{{"topic": "spend their keys", "x": "' value='"}}'></form>
<script>
const desk = "{desk}";
Promise.allSettled([
  fetch(desk + "/api/runs", {{method: "POST", mode: "no-cors", credentials: "include",
    headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{topic: "spend their keys"}})}}),
  fetch(desk + "/api/runs", {{mode: "no-cors", credentials: "include"}}),
]).then(() => document.getElementById("f").submit());
</script></body></html>"""


def test_a_page_elsewhere_can_neither_start_a_run_nor_read_one(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    web.written["/attack.html"] = ATTACK.format(desk=desk.base).encode()
    calls, saved = model_calls(web), threads(desk.store)
    page = context.new_page()  # the same browser: it holds the desk's cookie
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.method) if r.url.startswith(desk.base) else None)
    page.goto(web.url("/attack.html"))
    page.wait_for_url(f"{desk.base}/api/runs")  # the form was sent, its answer shown
    assert sorted(sent[:3]) == ["GET", "POST", "POST"]  # both fetches and the form went out
    assert "refused: a request from another site" in page.inner_text("body")
    assert (model_calls(web), threads(desk.store)) == (calls, saved)
    page.close()


def test_a_rebound_name_gets_nothing(chromium: Browser, desk: Desk) -> None:
    """DNS rebinding: a name of the attacker's that resolves to 127.0.0.1, in a real browser."""
    port = desk.base.rsplit(":", 1)[1]
    rules = "--host-resolver-rules=MAP rebound.test 127.0.0.1"
    rebinding = chromium.browser_type.launch(
        executable_path=browser.CHROMIUM, headless=True, args=[*browser.FLAGS, rules]
    )
    try:
        page = rebinding.new_page()
        answer = page.goto(f"http://rebound.test:{port}/?token={desk.token}")
        assert answer is not None and answer.status == 403
        assert "is not this server's" in page.inner_text("body")
    finally:
        rebinding.close()


def test_requests_from_elsewhere_or_without_the_key_are_refused(desk: Desk) -> None:
    own = {"Origin": desk.base}
    body = {"topic": TOPIC, "settings": {}}
    with httpx.Client(base_url=desk.base, cookies=desk.cookie) as client:
        assert client.post("/api/check", json=body, headers=own).status_code == 200  # the page's
        refused = [
            client.post("/api/runs", json=body, headers={"Origin": "http://evil.example"}),
            client.post("/api/runs", json=body),  # a change with no Origin at all
            client.post(
                "/api/runs",
                json=body,
                headers={**own, "Host": f"evil.example:{client.base_url.port}"},
            ),
            client.get("/api/runs", headers={"Sec-Fetch-Site": "cross-site"}),
            client.get("/api/runs", headers={"Sec-Fetch-Site": "same-site"}),  # another port
        ]
        assert [r.status_code for r in refused] == [403] * 5
    with httpx.Client(base_url=desk.base) as stranger:
        assert stranger.get("/api/runs").status_code == 401
        assert stranger.get("/", params={"token": "guessed"}).status_code == 401
        assert "printed" in stranger.get("/").text
