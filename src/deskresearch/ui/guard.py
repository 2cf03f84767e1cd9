"""Who may talk to the page's server: the page it served, in the browser of whoever holds its link.

A research costs money (the keys of whoever runs ``deskresearch ui``) and its reports may be
private, while any web page the same browser opens can send requests to localhost. So every
request passes, in order:

1. **Host**: the Host header must name this server (its loopback names, or the address it was
   told to listen on, with its port). A page elsewhere that makes its own name resolve to
   127.0.0.1 (DNS rebinding) sends its own name, and is refused.
2. **Site**: a browser says where a request comes from (``Sec-Fetch-Site``, ``Origin``); only
   this origin, or the user themselves (a typed or opened link: ``none``), may ask anything.
   A request that changes something (POST, DELETE) must carry this origin in ``Origin``.
3. **Key**: a secret made at start-up is in the link the command prints (as Jupyter's token);
   the first visit with it trades it for a cookie (HttpOnly, SameSite=Strict), which every
   other request must carry. Another local user or program without the link gets nothing.
   The browser the command opens gets a key of its own that opens the page once: a browser's
   command line, link included, shows in ``ps`` to every local user for as long as it runs.

Every response carries a Content-Security-Policy that lets the page load only its own files
(no CDN, font or analytics could be loaded even by mistake), and is never framed elsewhere.
"""

from __future__ import annotations

import hmac
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
NO_KEY = """<!DOCTYPE html><html lang="en"><meta charset="utf-8"><title>deskresearch</title>
<h1>deskresearch</h1><p>Open the link that <code>deskresearch ui</code> printed when it started:
it carries this session's key. (A restarted <code>deskresearch ui</code> prints a new one.)</p>
</html>"""


def bracketed(host: str) -> str:
    """A host as it appears in a URL or a Host header (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@dataclass(frozen=True)
class Policy:
    """What the guard accepts: the Host values, and the keys.

    Frozen but for ``once``, which a visit uses up (on the server's event loop).

    Args:
        hosts: accepted Host headers, lower case, ``name:port``.
        token: the key in the printed link.
        port: the port (names the cookie: cookies are per host, not per port).
        once: keys good for one visit (the link handed to a browser); a visit uses its key up.
    """

    hosts: frozenset[str]
    token: str
    port: int
    once: set[str] = field(default_factory=set, compare=False, hash=False)

    @property
    def cookie(self) -> str:
        """The cookie's name."""
        return f"deskresearch-ui-{self.port}"


def hosts_for(bind: str, port: int) -> frozenset[str]:
    """The Host headers a server listening on ``bind``:``port`` answers to.

    Its loopback names always; the address it listens on; for a wildcard (all interfaces), the
    machine's own name and addresses, as other machines on the network would call it.
    """
    names = set(LOOPBACK)
    if bind in WILDCARDS:
        name = socket.gethostname()
        names |= {name, socket.getfqdn()}
        try:
            names |= {str(a[4][0]) for a in socket.getaddrinfo(name, None)}
        except OSError:
            pass
    else:
        names.add(bind)
    hosts = {f"{bracketed(n).lower()}:{port}" for n in names}
    # A browser leaves out the default port.
    return frozenset(hosts | ({bracketed(n).lower() for n in names} if port == 80 else set()))


def refusal(policy: Policy, method: str, headers: Mapping[str, str]) -> str:
    """Why a request is refused ("": it may go on to the key check); ``headers`` lower-case."""
    host = headers.get("host", "").lower()
    if host not in policy.hosts:
        return f"refused: the Host {host!r} is not this server's (DNS rebinding?)"
    site = headers.get("sec-fetch-site", "")
    if site not in ("", "same-origin", "none"):
        return f"refused: a request from another site ({site})"
    origin = headers.get("origin")
    if origin is not None and origin.lower() != f"http://{host}":
        return f"refused: a request from another origin ({origin})"
    if method in UNSAFE and origin is None:
        return "refused: a change needs the page's Origin header"
    return ""


def same(given: str, key: str) -> bool:
    """``given == key`` in constant time (as bytes: compare_digest refuses non-ASCII text)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), key.encode())


def opens(policy: Policy, given: str) -> bool:
    """Whether a link's key opens the page: the printed one, or a one-visit key (used up)."""
    if same(given, policy.token):
        return True
    for key in list(policy.once):
        if same(given, key):
            policy.once.discard(key)
            return True
    return False


def has_key(policy: Policy, headers: Mapping[str, str]) -> bool:
    """Whether the request carries the key's cookie."""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 - http.cookies raises CookieError (and worse) on junk
        return False
    morsel = jar.get(policy.cookie)
    return morsel is not None and same(morsel.value, policy.token)


class Guard:
    """ASGI middleware: the three checks above, and the security headers on every response."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse, trade the key for its cookie, or pass the request on."""
        if scope["type"] != "http":  # the lifespan
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        method, path = scope["method"], scope["path"]
        response: Response | None = None
        if why := refusal(self.policy, method, headers):
            response = JSONResponse({"error": why}, status_code=403)
        elif not has_key(self.policy, headers):
            given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])
            if path == "/" and method == "GET" and opens(self.policy, given[0]):
                response = RedirectResponse("/", status_code=303)  # the key leaves the address bar
                response.set_cookie(self.policy.cookie, self.policy.token, httponly=True,
                                    samesite="strict", path="/")  # fmt: skip
            elif path == "/":
                response = HTMLResponse(NO_KEY, status_code=401)
            else:
                response = JSONResponse({"error": "no key: open the link deskresearch ui "
                                                  "printed"}, status_code=401)  # fmt: skip
        sender = _with_headers(send)
        if response is not None:
            await response(scope, receive, sender)
        else:
            await self.app(scope, receive, sender)


def _with_headers(send: Send) -> Send:
    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {k.decode("latin-1").lower() for k, _ in message.get("headers", [])}
            extra = [(k.encode(), v.encode()) for k, v in HEADERS.items() if k not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sender
