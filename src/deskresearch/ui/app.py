"""The page's HTTP API: thin handlers over the ``Desk``, behind the ``Guard``.

GET    /                           the page (its files under /static/)
GET    /api/form                   the settings people change, with this run's defaults
POST   /api/check                  {topic?, settings} → {problems}: nothing is run
GET    /api/runs                   the store's runs: question, status, date, tokens, cost
POST   /api/runs                   {topic, settings} → 201 {thread_id}, or 422/502 {error, problems}
GET    /api/runs/{id}              one run: its state, status, reason, files
POST   /api/runs/{id}/cancel       stop it (it stays resumable)
POST   /api/runs/{id}/resume       continue it, with its own settings
POST   /api/runs/{id}/review       {answer} → 202: the review it waits for, answered (409: it
                                   waits for none; 422: not an answer)
DELETE /api/runs/{id}              its thread and its files
GET    /api/events?watch={id}      server-sent events: ``runs`` (the list changed) and
                                   ``progress`` (the watched run's panel)
GET    /runs/{id}/report           the HTML report with its evidence (sandboxed)
GET    /runs/{id}/download/{fmt}   md, html or json, as a file
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from deskresearch.report.outcome import finished
from deskresearch.session.settings import gather
from deskresearch.ui.desk import ANSWER, Desk
from deskresearch.ui.form import Refusal, as_dicts, form
from deskresearch.ui.guard import Guard, Policy

STATIC = Path(str(resources.files("deskresearch.ui").joinpath("static")))
MAX_BODY = 64_000  # bytes: a question and a few settings
KEEPALIVE_S = 15.0  # a comment on a quiet stream, so a dead connection is noticed
FRAME_S = 0.05  # at most 20 updates a second per page, however fast events come
THREAD = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
# The report may run its own (hashed) script and open its sources in new tabs: nothing else.
# Sandboxed, it has no origin: it cannot read the page, its cookie or the API.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; "
    "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox"
)
TYPES = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
         "json": "application/json"}  # fmt: skip

Handler = Callable[[Request], Awaitable[Response]]


def _refused(exc: Refusal) -> JSONResponse:
    return JSONResponse({"error": str(exc), "problems": as_dicts(exc.problems)}, exc.status)


def handles(desk: Desk) -> Callable[[Callable[[Desk, Request], Awaitable[Response]]], Handler]:
    """Bind a handler to the desk; a ``Refusal`` becomes its status and message."""

    def bind(handler: Callable[[Desk, Request], Awaitable[Response]]) -> Handler:
        async def endpoint(request: Request) -> Response:
            thread = request.path_params.get("thread")
            if thread is not None and not THREAD.match(thread):
                return JSONResponse({"error": "not a research id"}, 404)
            try:
                return await handler(desk, request)
            except Refusal as exc:
                return _refused(exc)

        return endpoint

    return bind


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise Refusal(413, f"the request is over {MAX_BODY} bytes")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise Refusal(400, "the request is not JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("settings", {}), dict):
        raise Refusal(400, "send {topic, settings: {name: value}}")
    return body


async def page(desk: Desk, request: Request) -> Response:
    """The page."""
    return FileResponse(STATIC / "index.html")


async def form_of(desk: Desk, request: Request) -> Response:
    """The form, and where runs are saved."""
    return JSONResponse(form(gather(desk.sources({}))) | {
        "store": desk.engine.where, "folder": str(desk.files.path.resolve())})  # fmt: skip


async def check(desk: Desk, request: Request) -> Response:
    """The problems of a form, without running anything."""
    body = await _body(request)
    topic = body.get("topic")
    _, found = desk.check(None if topic is None else str(topic), body.get("settings", {}))
    return JSONResponse({"problems": as_dicts(found)})


async def runs(desk: Desk, request: Request) -> Response:
    """The runs of the store."""
    return JSONResponse(await desk.runs())


async def start(desk: Desk, request: Request) -> Response:
    """Start a research."""
    body = await _body(request)
    job = await desk.start(str(body.get("topic") or ""), body.get("settings", {}))
    return JSONResponse({"thread_id": job.thread}, 201)


async def detail(desk: Desk, request: Request) -> Response:
    """One run."""
    return JSONResponse(await desk.detail(request.path_params["thread"]))


async def cancel(desk: Desk, request: Request) -> Response:
    """Stop a running research."""
    desk.cancel(request.path_params["thread"])
    return JSONResponse({"cancelling": True}, 202)


async def resume(desk: Desk, request: Request) -> Response:
    """Continue a saved research."""
    thread = request.path_params["thread"]
    job = await desk.resume(thread)
    return JSONResponse({"thread_id": thread, "finished": job is None})


async def review(desk: Desk, request: Request) -> Response:
    """Answer the review a research waits for ({"answer": true, or what review_plan takes})."""
    body = await _body(request)
    if "answer" not in body:
        raise Refusal(400, ANSWER)
    desk.answer(request.path_params["thread"], body["answer"])
    return JSONResponse({"answered": True}, 202)


async def delete(desk: Desk, request: Request) -> Response:
    """Delete a research and its files."""
    return JSONResponse({"removed": await desk.delete(request.path_params["thread"])})


async def events(desk: Desk, request: Request) -> Response:
    """The page's one event stream: the list changed; the watched run's panel."""
    watch = request.query_params.get("watch", "")

    async def stream() -> AsyncIterator[str]:
        listed, shown = desk.listing, -1
        while not desk.closing:
            seen = desk.changes.version
            if desk.listing != listed:
                listed = desk.listing
                yield "event: runs\ndata: {}\n\n"
            if (job := desk.jobs.get(watch)) is not None and job.version != shown:
                shown = job.version
                yield f"event: progress\ndata: {json.dumps(desk.snapshot(job))}\n\n"
            await desk.changes.wait(seen, KEEPALIVE_S)
            if desk.changes.version == seen:
                yield ": still here\n\n"
            else:
                await asyncio.sleep(FRAME_S)  # pacing, so a burst of events is one update

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"X-Accel-Buffering": "no"})  # fmt: skip


async def _text(desk: Desk, thread: str, fmt: str) -> tuple[str, str]:
    """A finished run's report as ``fmt`` and its file name: its own file, else made again."""
    files = {p.suffix[1:]: p for p in await desk.own_files(thread)}
    if fmt in files:
        return files[fmt].read_text(encoding="utf-8"), files[fmt].name
    values = await desk.result(thread)
    if not finished(values):
        raise Refusal(404, "this research has no report yet")
    if fmt == "json":
        again = desk.session.resume_command(thread)
        raise Refusal(404, f"its result file is not in its folder: {again} writes it again")
    stem = Path(files["json"]).stem if "json" in files else "report"
    if fmt == "md":
        return str(values.get("report") or ""), f"{stem}.md"
    from deskresearch.report.html import render_html

    language = str((values.get("settings") or {}).get("language") or "en-us")
    page = render_html(values, topic=str(values.get("topic") or ""), language=language)
    return page, f"{stem}.html"


async def report(desk: Desk, request: Request) -> Response:
    """The HTML report, to be shown in the page's frame."""
    text, _ = await _text(desk, request.path_params["thread"], "html")
    return Response(text, media_type=TYPES["html"],
                    headers={"Content-Security-Policy": REPORT_CSP, "X-Frame-Options": "SAMEORIGIN"})  # fmt: skip


async def download(desk: Desk, request: Request) -> Response:
    """The report as a file."""
    fmt = request.path_params["fmt"]
    if fmt not in TYPES:
        raise Refusal(404, "give md, html or json")
    text, name = await _text(desk, request.path_params["thread"], fmt)
    return Response(text, media_type=TYPES[fmt], headers={
        "Content-Disposition": f'attachment; filename="{name}"',
        "Content-Security-Policy": REPORT_CSP})  # fmt: skip


def build_app(desk: Desk, policy: Policy) -> Guard:
    """The page's server: the routes above, behind the guard; the desk lives as long as it."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with desk:
            yield

    bind = handles(desk)
    routes = [
        Route("/", bind(page)),
        Route("/api/form", bind(form_of)),
        Route("/api/check", bind(check), methods=["POST"]),
        Route("/api/runs", bind(runs)),
        Route("/api/runs", bind(start), methods=["POST"]),
        Route("/api/runs/{thread}", bind(detail)),
        Route("/api/runs/{thread}", bind(delete), methods=["DELETE"]),
        Route("/api/runs/{thread}/cancel", bind(cancel), methods=["POST"]),
        Route("/api/runs/{thread}/resume", bind(resume), methods=["POST"]),
        Route("/api/runs/{thread}/review", bind(review), methods=["POST"]),
        Route("/api/events", bind(events)),
        Route("/runs/{thread}/report", bind(report)),
        Route("/runs/{thread}/download/{fmt}", bind(download)),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    return Guard(Starlette(routes=routes, lifespan=lifespan), policy)
