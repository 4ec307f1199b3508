"""The console's games and the pages watching them.

:meth:`Console.wrap` turns the server's player source into one that gives each new session a
:class:`~.supervisor.GameSupervisor`; games share nothing but this registry. Pages get a snapshot
when they connect and then one message per changed game, coalesced over ``FLUSH_S``. A page that
falls behind is dropped (it reconnects and starts from a fresh snapshot) rather than buffered
without bound; no page, open or closed, is ever waited on by a game.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import itertools
import json
import logging
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agent.core.redact import Secrets
from agent.core.studies.run import StudyRun
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.console.editor import check_pose
from agent.games.tangram.console.messages import PAGE_MESSAGE, CheckPose, Say, SetMode, StudyAction, Verdict
from agent.games.tangram.console.study_panel import StudyPanel
from agent.games.tangram.console.supervisor import ConsolePlayer, GameSupervisor
from agent.games.tangram.contract import Player
from agent.games.tangram.link.factory import PlayerSource

log = logging.getLogger(__name__)

FLUSH_S = 0.05
"""Updates to one game within this window go out as one message."""
MAX_QUEUED = 200
"""Messages waiting for one page; past this the page is dropped and reconnects."""
MAX_ENDED_SHOWN = 8
"""Finished games stay on the page (final board, history) until this many newer ones ended."""
MAX_CHECKS = 4
"""Editor checks computed at once (each a few ms of shapely in a worker thread)."""
SAY_TIMEOUT_S = 5.0
IMAGE_CACHE = 32
"""Decoded pictures kept (two per game); the game sends new ones with every state."""
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"


@dataclass(eq=False)
class PageClient:
    """One connected page."""

    id: int
    queue: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(MAX_QUEUED + 1))
    dropped: bool = False

    def push(self, text: str) -> None:
        if self.dropped:
            return
        if self.queue.qsize() >= MAX_QUEUED:
            self.dropped = True
            log.warning("console page %d is not keeping up; dropping it (it will reconnect)", self.id)
            self.queue.put_nowait(None)
            return
        self.queue.put_nowait(text)


class Console:
    def __init__(self, config: Config, secrets: Secrets | None = None) -> None:
        self.config = config
        self.secrets = secrets or Secrets(config.secret_values())
        self.games: dict[str, GameSupervisor] = {}
        self._ended: deque[str] = deque()
        self.clients: set[PageClient] = set()
        self._client_ids = itertools.count(1)
        self._dirty: set[str] = set()
        self._flush: asyncio.Handle | None = None
        self._checks: asyncio.Semaphore | None = None
        self._images: OrderedDict[tuple[str, str, int], tuple[bytes, str]] = OrderedDict()
        self.study: StudyPanel | None = None
        """Serving a study: its participants and controls (console/study_panel.py)."""

    # ------------------------------------------------------------------ sessions

    def wrap(self, source: PlayerSource, config: Config | None = None) -> PlayerSource:
        """The same player source, with each session's player supervised by this console.
        ``config``: the sessions' own (a study's condition; its console mode), else the console's."""
        game_config = config or self.config

        def make(transcript: Transcript) -> Player:
            supervisor = GameSupervisor(game_config, transcript, self._changed, self._game_notice)
            # The player's records (LLM calls, tokens) reach the console too.
            player = source(transcript)
            self.games[supervisor.id] = supervisor
            self._changed(supervisor)
            return ConsolePlayer(player, supervisor)

        return make

    def _changed(self, game: GameSupervisor) -> None:
        if game.ended is not None and game.id not in self._ended and game.id in self.games:
            self._ended.append(game.id)
            while len(self._ended) > MAX_ENDED_SHOWN:
                old = self._ended.popleft()
                self.games.pop(old, None)
                self._dirty.discard(old)
                self._broadcast({"type": "gone", "game": old})
        self._dirty.add(game.id)
        if game.urgent:  # the experimenter's time is running: no coalescing delay
            game.urgent = False
            if self._flush is not None:
                self._flush.cancel()
            self._flush = asyncio.get_running_loop().call_soon(self._send_dirty)
        elif self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(FLUSH_S, self._send_dirty)

    def close(self) -> None:
        """Stop the pending page update: its timer would keep the console, and through it every
        game's session, alive after the event loop is gone."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        self._dirty.clear()

    def show_study(self, run: StudyRun, online: bool = False) -> StudyPanel:
        """Show ``run``'s participants and take the study's controls (``online``: participants come
        from their links, so there is no Next participant)."""
        self.study = StudyPanel(run, self._broadcast, online)
        return self.study

    def _send_dirty(self) -> None:
        self._flush = None
        dirty, self._dirty = self._dirty, set()
        for game in sorted((g for i in dirty if (g := self.games.get(i)) is not None), key=lambda g: g.started):
            self._broadcast({"type": "game", "game": game.view()})

    def _text(self, message: dict[str, Any]) -> str:
        # Nothing a page receives may carry a secret: the LLM could echo one into its reasoning.
        return self.secrets.mask(json.dumps(message, ensure_ascii=False, default=str))

    def _broadcast(self, message: dict[str, Any]) -> None:
        if not self.clients:
            return
        text = self._text(message)
        for client in list(self.clients):
            client.push(text)

    # ------------------------------------------------------------------ pages

    def connect(self) -> PageClient:
        client = PageClient(next(self._client_ids))
        self.clients.add(client)
        games = [g.view() for g in sorted(self.games.values(), key=lambda g: g.started)]
        client.push(self._text({"type": "snapshot", "games": games, "modes": ["autonomous", "supervised", "wizard"],
                                "study": self.study.last if self.study is not None else None}))
        return client

    def disconnect(self, client: PageClient) -> None:
        self.clients.discard(client)

    def announce(self, text: str) -> None:
        """A notice to every page (e.g. the LLM server stopped answering, or answers again)."""
        self._broadcast({"type": "notice", "game": None, "text": text[:600]})

    def _game_notice(self, game: GameSupervisor, text: str) -> None:
        """A notice about one game to every page."""
        self._broadcast({"type": "notice", "game": game.id, "text": text[:600]})

    def notice(self, client: PageClient, text: str, game: str | None = None) -> None:
        client.push(self._text({"type": "notice", "game": game, "text": text}))

    async def handle(self, client: PageClient, raw: str) -> None:
        """One message from a page. Never raises: a bad message gets a notice back."""
        try:
            message = PAGE_MESSAGE.validate_json(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            self.notice(client, f"refused: {where or 'message'}: {err['msg']}"[:300])
            return
        if isinstance(message, StudyAction):
            if self.study is None:
                self.notice(client, "refused: the agent serves no study (python -m agent --study FILE)")
                return
            try:
                self.notice(client, await self.study.act(message))
            except Exception:
                log.exception("console: failed on a study %s", message.action)
                self.notice(client, "the console failed on that request; see the agent's log")
            return
        game = self.games.get(message.game)
        if game is None:
            self.notice(client, "that game is no longer here", message.game)
            return
        try:
            await self._dispatch(client, game, message)
        except Exception:
            log.exception("console: failed on a %s message", message.type)
            self.notice(client, "the console failed on that request; see the agent's log", game.id)

    async def _dispatch(self, client: PageClient, game: GameSupervisor,
                        message: SetMode | CheckPose | Verdict | Say) -> None:
        if isinstance(message, SetMode):
            game.set_mode(message.mode, message.who)
        elif isinstance(message, Verdict):
            problem = game.resolve(message)
            if problem is not None:
                self.notice(client, problem, game.id)
        elif isinstance(message, Say):
            if game.ended is not None:
                self.notice(client, "that game has ended", game.id)
                return
            sent = False
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SAY_TIMEOUT_S):
                    sent = await game.say(message.text, message.who)
            if not sent:
                self.notice(client, "the chat line could not be sent (the game is gone or not reading)", game.id)
        else:
            if self._checks is None:
                self._checks = asyncio.Semaphore(MAX_CHECKS)
            async with self._checks:
                result = await asyncio.to_thread(check_pose, message.pose.pose(), game.board())
            client.push(self._text({"type": "checked", "game": game.id, "seq": message.seq,
                                    "result": result.to_json()}))

    async def image(self, game_id: str, which: str) -> tuple[bytes, str] | None:
        """The latest board or drawer picture of a game, decoded, and its content type."""
        game = self.games.get(game_id)
        if game is None or which not in ("board", "drawer", "model_board", "model_drawer"):
            return None
        if which in game.model_images:  # as the LLM saw them: bytes already
            data = game.model_images[which]
            if data is None:
                return None
            kind = _image_type(data)
            return (data, kind) if kind is not None else None
        b64 = game.board_img if which == "board" else game.drawer_img
        if not b64:
            return None
        key = (game_id, which, game.image_versions[which])
        cached = self._images.get(key)
        if cached is not None:
            self._images.move_to_end(key)
            return cached
        try:
            data = await asyncio.to_thread(base64.b64decode, b64, validate=False)
        except (binascii.Error, ValueError):
            return None
        kind = _image_type(data)
        if kind is None:
            return None  # not a picture: never served under a guessed type
        self._images[key] = (data, kind)
        while len(self._images) > IMAGE_CACHE:
            self._images.popitem(last=False)
        return data, kind


def _image_type(data: bytes) -> str | None:
    if data.startswith(PNG_MAGIC):
        return "image/png"
    if data.startswith(JPEG_MAGIC):
        return "image/jpeg"
    return None
