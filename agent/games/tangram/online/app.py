"""The participants' origin: their page, the game's frame, the engine, the calls, the game socket.

| path | what |
|---|---|
| ``/p/<code>`` | the participant's page (consent, each game in turn, the completion) |
| ``/join?PROLIFIC_PID=...`` | open recruitment: a new participant, sent on to their own ``/p/<code>`` |
| ``/play`` | the game's frame: our socket redirection, then the engine |
| ``/g/<hash>/<file>`` | the engine and pack: immutable, gzip when accepted |
| ``/s/<file>`` | our page's scripts and styles (revalidated by ETag) |
| ``POST /api/visit|consent|game|finished|leave`` | the page's calls (JSON, the link's code in the body) |
| ``POST /api/answers|draft|withdraw`` | a questionnaire page's answers, what it holds so far, stop and delete |
| ``/ws?ticket=<ticket>`` | the agent's socket (sockets.py) |

Nothing else is served: no directory, no path outside these files, no console. The lab's pages
(lab.py: ``make_app`` without assets and sockets) serve only ``/p/<code>``, ``/s/<file>`` and the
calls visit, consent, game (which then hands out no ticket: the lab's game window plays), answers,
draft and withdraw. Request bodies
are capped (``MAX_BODY``) and must arrive within ``Limits.body_s``; a call's body is validated
(:class:`Call`: a flat JSON object of known fields and types) and anything else is answered 4xx with
one line, never 500. Every page load, call, file, engine download and socket is counted against the
rate limits of guard.py, and nothing secret (API key, a link's code, a ticket) is written to a page
other than the participant's own code and ticket, or to a log.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.web_protocol import RequestPayloadError
from pydantic import BaseModel

from agent.core.studies.online import AnswerError, EndClaim, OnlineRun, ProlificIds, Visit, well_formed
from agent.core.studies.store import StoreError
from agent.games.tangram.config import Config
from agent.games.tangram.online.assets import Assets
from agent.games.tangram.online.calls import AnswersCall, Call, DraftCall, WithdrawCall, parse_call
from agent.games.tangram.online.deadlines import DeadlineHandler
from agent.games.tangram.online.guard import Client, Kind, RateLimiter, client_of
from agent.games.tangram.online.sockets import GameSockets

log = logging.getLogger(__name__)

MAX_BODY = 16 * 1024
MAX_ANSWERS_BODY = 64 * 1024
"""A questionnaire page's answers (its free text bounded by the study file: MAX_PAGE_CHARS)."""
STATIC_FILES = ("participant.html", "participant.js", "participant.css", "play.js", "play.css")
COMMON_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "SAMEORIGIN",
}
IMMUTABLE = "public, max-age=31536000, immutable"
TYPES = {".js": "text/javascript", ".wasm": "application/wasm", ".pck": "application/octet-stream",
         ".css": "text/css", ".html": "text/html"}
PLAY_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<title>Tangram</title><link rel="stylesheet" href="/s/play.css"></head>
<body><canvas id="canvas" width="1920" height="1080" tabindex="0">The game needs a browser with WebGL 2.</canvas>
<div id="status" role="status">Loading the game...</div>
<script type="application/json" id="boot">{boot}</script>
<script src="/s/play.js"></script></body></html>
"""


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    etag: str
    content_type: str


def _static() -> dict[str, StaticFile]:
    folder = resources.files(__package__) / "static"
    out = {}
    for name in STATIC_FILES:
        body = (folder / name).read_bytes()
        suffix = name[name.rindex("."):]
        out[name] = StaticFile(body, f'"{hashlib.sha256(body).hexdigest()[:20]}"', TYPES[suffix])
    return out


class _SentFile(web.FileResponse):
    """A file response the handler sends itself (so that it knows when the sending ends): aiohttp's
    own call of ``prepare`` after the handler then does nothing (FileResponse would send it again)."""

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        if self.prepared:
            return None
        return await super().prepare(request)


def _send(request: web.Request, item: StaticFile) -> web.Response:
    if request.headers.get("If-None-Match") == item.etag:
        return web.Response(status=304, headers={"ETag": item.etag, "Cache-Control": "no-cache"})
    return web.Response(body=item.body, content_type=item.content_type, charset="utf-8",
                        headers={"ETag": item.etag, "Cache-Control": "no-cache"})


def _closing(request: web.Request, answer: web.HTTPException) -> web.HTTPException:
    """``answer``, after which the connection closes, the rest of the request's body unread."""
    if isinstance(request.protocol, DeadlineHandler):
        request.protocol.abandon_body()
    answer.force_close()
    return answer


def visit_json(visit: Visit, online: OnlineRun, lab: bool = False) -> dict[str, Any]:
    """What the participant's page is told of where they stand. ``lab``: served to the lab machine
    (lab.py): the game is the lab's own window, and no idle time-out applies."""
    out: dict[str, Any] = {"stage": visit.stage, "game": min(visit.games_done + 1, visit.games_total),
                           "games": visit.games_total, "language": visit.language,
                           "languages": list(online.languages)}
    if lab:
        out["lab"] = True
    else:
        limits = online.idle_limits
        limit = limits.limit("game" if visit.stage == "play" else "page")
        if limit is not None and visit.stage in ("consent", "questionnaire", "play"):
            out["idle"] = {"limit_s": limit, "warn_s": limits.warn_s}
    if visit.stage == "questionnaire":
        out["page"] = visit.page
    if visit.stage == "screened_out":
        out["completion_code"] = visit.completion_code
        out["completion_url"] = visit.completion_url
    if visit.stage == "consent" and online.spec.consent is not None:
        out["consent"] = {"text": online.spec.consent, "agree": online.spec.consent_button,
                          "decline": online.spec.decline_button}
    if visit.stage == "done":
        out["completion_code"] = visit.completion_code
        out["completion_url"] = visit.completion_url
    return out


def make_app(online: OnlineRun, assets: Assets | None, sockets: GameSockets | None, limiter: RateLimiter,
             trusted_proxy: str | None) -> web.Application:
    """The participants' origin. Without ``assets`` and ``sockets`` it is the lab's (lab.py): the same
    pages and calls, no game in the page (the lab machine's own game window plays it, bound by
    link/study.py when the flow reaches it), and no open recruitment."""
    static = _static()
    lab = assets is None or sockets is None
    play_page = StaticFile(b"", '""', "text/html")
    asset_names: set[str] = set()
    if assets is not None:
        boot = html.escape(json.dumps(assets.boot(f"/g/{assets.key}")), quote=False)
        play_page = StaticFile(PLAY_PAGE.replace("{boot}", boot).encode(),
                               f'"{hashlib.sha256(boot.encode()).hexdigest()[:20]}"', "text/html")
        asset_names = set(assets.names())
    body_s = limiter.limits.body_s

    def view(visit: Visit) -> dict[str, Any]:
        return visit_json(visit, online, lab)

    def limited(kind: Kind) -> Callable[[Callable[[web.Request, Client], Awaitable[web.StreamResponse]]],
                                        Callable[[web.Request], Awaitable[web.StreamResponse]]]:
        def wrap(handler: Callable[[web.Request, Client], Awaitable[web.StreamResponse]]
                 ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
            async def run(request: web.Request) -> web.StreamResponse:
                client = client_of(request, trusted_proxy)
                if not limiter.allow(kind, client.address):
                    return web.Response(status=429, text="Too many requests; please wait a moment\n",
                                        headers={"Retry-After": "10"})
                return await handler(request, client)
            return run
        return wrap

    @web.middleware
    async def headers(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                      ) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as answer:  # 4xx and redirects get them too
            answer.headers.update(COMMON_HEADERS)
            answer.headers.setdefault("Cache-Control", "no-store")
            raise
        if not response.prepared:  # a WebSocket's headers are sent already, an engine file too
            response.headers.update(COMMON_HEADERS)
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    @web.middleware
    async def errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                     ) -> web.StreamResponse:
        """A handler's unexpected exception, a bug of ours: a plain 500, its traceback logged once
        (naming the route, never the path: it may hold a link's code)."""
        try:
            return await handler(request)
        except (web.HTTPException, ConnectionError):
            raise  # an answer; a client that hung up (aiohttp's to handle)
        except Exception:
            resource = request.match_info.route.resource
            log.exception("internal error answering %s %s", request.method,
                          "?" if resource is None else resource.canonical)
            return web.Response(status=500, text="internal error\n")

    async def body_of(request: web.Request, model: type[BaseModel] = Call, most: int = MAX_BODY) -> dict[str, Any]:
        """The call's validated fields (``model``, :class:`Call` by default, unset ones None): 413 over
        ``most`` bytes, 408 (and the connection closed) when it is slower than ``body_s``, 400 when it
        is no JSON object of the call's fields and types, 403 for a code no link can have."""
        if request.content_length is not None and request.content_length > most:
            raise _closing(request, web.HTTPRequestEntityTooLarge(max_size=most, actual_size=request.content_length))
        try:
            async with asyncio.timeout(body_s):
                raw = await request.read()
        except TimeoutError:
            raise _closing(request, web.HTTPRequestTimeout(
                text=f"the request's body did not arrive within {body_s:g} s\n")) from None
        except RequestPayloadError:
            raise _closing(request, web.HTTPBadRequest(
                text="the body could not be read (its encoding is broken)\n")) from None
        if len(raw) > most:
            raise web.HTTPRequestEntityTooLarge(max_size=most, actual_size=len(raw))
        call = parse_call(raw, model)
        if not well_formed(getattr(call, "code", None)):
            raise web.HTTPForbidden(text="this link is not part of the study\n")
        return call.model_dump()

    @limited("page")
    async def participant_page(request: web.Request, client: Client) -> web.StreamResponse:
        # Serving the page changes nothing: a link preview or a mail scanner takes no place.
        if not await online.known(request.match_info["code"]):
            return web.Response(status=404, text="This link is not part of the study. Check the address.\n")
        return _send(request, static["participant.html"])

    @limited("page")
    async def join(request: web.Request, client: Client) -> web.StreamResponse:
        try:
            ids = ProlificIds.parse(dict(request.query))
            code, _ = await online.enter_open(ids)
        except ValueError as exc:
            return web.Response(status=400, text=f"{exc}\n")
        except StoreError as exc:
            return web.Response(status=403, text=f"{exc}\n")
        raise web.HTTPSeeOther(f"/p/{code}")

    @limited("page")
    async def play(request: web.Request, client: Client) -> web.StreamResponse:
        return _send(request, play_page)

    @limited("asset")
    async def static_file(request: web.Request, client: Client) -> web.StreamResponse:
        item = static.get(request.match_info["name"])
        if item is None or item.content_type == "text/html":
            raise web.HTTPNotFound()
        return _send(request, item)

    @limited("asset")
    async def asset(request: web.Request, client: Client) -> web.StreamResponse:
        name = request.match_info["name"]
        if assets is None or request.match_info["key"] != assets.key or name not in asset_names:
            raise web.HTTPNotFound()
        if not limiter.begin_download(client.address):
            return web.Response(status=429, text="Too many downloads at once; please wait a moment\n",
                                headers={"Retry-After": "10"})
        try:
            response = _SentFile(assets.folder / name, headers={**COMMON_HEADERS, "Cache-Control": IMMUTABLE})
            response.content_type = TYPES.get(name[name.rindex("."):], "application/octet-stream")
            await response.prepare(request)  # sends the whole file: the download counts until it is sent
            return response
        finally:
            limiter.end_download(client.address)

    @limited("api")
    async def api_visit(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request)
        visit = await online.visit(data["code"], data["language"])
        if visit is None:
            raise web.HTTPForbidden(text="this link is not part of the study\n")
        if visit.stage == "play":
            await online.left(data["code"], gone=False)  # back (a reload after the page said it closed)
        return web.json_response(view(visit))

    @limited("api")
    async def api_consent(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request)
        try:
            visit = await online.answer_consent(data["code"], data.get("given") is True)
        except StoreError as exc:
            raise web.HTTPForbidden(text=f"{exc}\n") from None
        if visit is None:
            raise web.HTTPForbidden(text="this link is not part of the study\n")
        return web.json_response(view(visit))

    @limited("api")
    async def api_game(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request)
        if sockets is None:  # the lab: the lab's game window plays; the page waits for the game's end
            visit = await online.visit(data["code"])
            if visit is None:
                raise web.HTTPForbidden(text="this link is not part of the study\n")
            return web.json_response({"ticket": None, "visit": view(visit)})
        try:
            got = await online.ticket(data["code"])
        except StoreError as exc:
            raise web.HTTPForbidden(text=f"{exc}\n") from None
        if got is None:
            visit = await online.visit(data["code"])
            if visit is None:
                raise web.HTTPForbidden(text="this link is not part of the study\n")
            return web.json_response({"ticket": None, "visit": view(visit)})
        ticket, assignment = got
        # The participant's page that played so far (another tab) is told it was taken over.
        old = sockets.live.get(assignment.participant)
        if old is not None and not old[0].closed:
            await old[0].close(code=4001, message=b"taken over by a newer page")
        return web.json_response({"ticket": ticket, "game": assignment.position, "games": assignment.games_total})

    @limited("api")
    async def api_finished(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request)
        assert sockets is not None  # the lab has no /api/finished
        ticket, exit_code = data["ticket"], data["exit"]
        if ticket is None or exit_code is None:
            raise web.HTTPBadRequest(text="a game's end names its ticket and the engine's exit code\n")
        assignment = await online.admit(ticket)
        visit = await online.visit(data["code"])
        if visit is None:
            raise web.HTTPForbidden(text="this link is not part of the study\n")
        if assignment is not None and assignment.participant == visit.participant:
            # The page's word is a claim: the server judges it from the AI turns it saw end.
            claim = EndClaim(data["how"] or "exit", exit_code)
            await sockets.settle(assignment.participant)
            config: Config = assignment.config  # type: ignore[assignment]  # the study's conditions are tangram's
            judged = await online.finish(assignment, ticket, claim, config.study.completed_after_turns)
            log.info("participant %s: game %d of %d (%s) %s (%s)", assignment.participant, assignment.position,
                     assignment.games_total, assignment.condition,
                     "completed" if judged.completed else "not completed", judged.reason)
            if claim.exit == 0 and not judged.completed:
                return web.json_response(
                    {"error": "not played", "ai_turns": judged.ai_turns, "needed": judged.needed,
                     "message": "The game has not been played yet: play it with your partner, then press Finish."},
                    status=409)
            visit = await online.visit(data["code"]) or visit
        return web.json_response(view(visit))

    @limited("api")
    async def api_answers(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request, AnswersCall, MAX_ANSWERS_BODY)
        try:
            visit = await online.submit(data["code"], data["step"], data["language"], data["answers"], data["other"])
        except AnswerError as exc:
            return web.json_response({"error": "answers refused", "problems": exc.problems}, status=422)
        except StoreError as exc:
            return web.json_response({"error": "not the current page", "problems": [str(exc)]}, status=409)
        if visit is None:
            raise web.HTTPForbidden(text="this link is not part of the study\n")
        return web.json_response(view(visit))

    @limited("api")
    async def api_draft(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request, DraftCall, MAX_ANSWERS_BODY)
        if not await online.draft(data["code"], data["step"], data["answers"], data["other"]):
            return web.json_response({"error": "not the current page"}, status=409)
        return web.Response(status=204)

    @limited("api")
    async def api_withdraw(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request, WithdrawCall)
        visit = await online.visit(data["code"])
        if visit is None or visit.participant is None:
            # Not started: nothing of theirs is stored (an open visit keeps only its platform ids).
            return web.json_response({"stage": "withdrawn"})
        if sockets is not None:
            old = sockets.live.get(visit.participant)
            if old is not None and not old[0].closed:
                await old[0].close(code=4002, message=b"the participant withdrew")
            await sockets.settle(visit.participant)
        await online.withdraw(data["code"])
        log.info("participant %s withdrew: their data was deleted", visit.participant)
        return web.json_response({"stage": "withdrawn"})

    @limited("api")
    async def api_leave(request: web.Request, client: Client) -> web.StreamResponse:
        data = await body_of(request)
        await online.left(data["code"])
        return web.Response(status=204)

    @limited("socket")
    async def socket(request: web.Request, client: Client) -> web.StreamResponse:
        assert sockets is not None
        return await sockets.handle(request, client)

    async def no_icon(request: web.Request) -> web.StreamResponse:
        return web.Response(status=204, headers={"Cache-Control": "public, max-age=86400"})

    app = web.Application(middlewares=[headers, errors], client_max_size=MAX_ANSWERS_BODY)
    app.router.add_get("/p/{code}", participant_page)
    app.router.add_get("/s/{name}", static_file)
    app.router.add_post("/api/visit", api_visit)
    app.router.add_post("/api/consent", api_consent)
    app.router.add_post("/api/game", api_game)
    app.router.add_post("/api/answers", api_answers)
    app.router.add_post("/api/draft", api_draft)
    app.router.add_post("/api/withdraw", api_withdraw)
    if not lab:
        app.router.add_get("/join", join)
        app.router.add_get("/play", play)
        app.router.add_get("/g/{key}/{name}", asset)
        app.router.add_post("/api/finished", api_finished)
        app.router.add_post("/api/leave", api_leave)
        app.router.add_get("/ws", socket)
    app.router.add_get("/favicon.ico", no_icon)
    return app
