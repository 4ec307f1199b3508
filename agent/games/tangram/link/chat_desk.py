"""The session's chat requests, answered beside the turn. Its rules, stated once:

- a chat request is answered in its own task, also while a turn runs (the game allows a chat at any
  moment), and never touches the turn machine;
- at most ``MAX_OPEN_CHATS`` are answered at once: one more (a flood) gets the ``busy`` line at once,
  without the player;
- each answer comes within the turn's deadline (``turn.deadline``): past it, the ``slow`` line; a player
  that fails gets the ``failed`` line (logged, and an ``error`` record); an empty line gets no answer;
- those three lines are the conversation's (``dialogue/words/partner_lines.yaml``), said in the
  language of the request they answer (English or Portuguese); that language is told to the session
  (``on_language``) before the answer, so the turn's own lines follow the partner's last language;
- every request ends with one ``chat_reply`` record (reply, outcome, seconds), under the request's id;
- the partner's line and the reply go into the conversation memory, as the partner's and the agent's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agent.core.memory import Speaker
from agent.core.transcript import Transcript, record_scope
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Player, TurnView
from agent.games.tangram.dialogue import line_language, partner_line
from agent.games.tangram.protocol import GameFrame

log = logging.getLogger(__name__)

MAX_OPEN_CHATS = 4
"""Chat requests answered at once; more (a flood) get a short fixed reply without the LLM."""
BUSY = partner_line("busy")
SLOW = partner_line("slow")
FAILED = partner_line("failed")
"""The three lines in English (the game's language); each request gets them in its own language."""


class ChatDesk:
    """One session's chat requests (the module's rules)."""

    def __init__(self, config: Config, player: Player, transcript: Transcript, peer: str,
                 view: Callable[[GameFrame, bool], Awaitable[TurnView]], say: Callable[[str], Awaitable[None]],
                 remember: Callable[[Speaker, str], None],
                 on_language: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.config = config
        self.player = player
        self.transcript = transcript
        self.peer = peer
        self._view = view
        self._say = say
        self._remember = remember
        self._on_language = on_language
        """Told the language of each request answered (the turn machine's partner language)."""
        self.tasks: set[asyncio.Task[None]] = set()
        """The answers being made."""
        self.answered = 0
        """Chat requests taken (the busy ones aside)."""

    async def request(self, frame: GameFrame, request_id: int) -> None:
        """A chat request arrived: its answer starts now, in its own task (or the busy line goes out)."""
        if len(self.tasks) >= MAX_OPEN_CHATS:
            log.warning("%s: %d chat requests still being answered; this one gets a short reply",
                        self.peer, len(self.tasks))
            busy = partner_line("busy", await asyncio.to_thread(line_language, frame.message))
            with record_scope(request=request_id):
                await self._say(busy)
                self.transcript.record("chat_reply", reply=busy, outcome="busy", seconds=0.0)
            return
        task = asyncio.create_task(self._answer(frame, request_id), name="chat")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _answer(self, frame: GameFrame, request_id: int) -> None:
        # The LLM call and the chat line sent carry the request's id too.
        with record_scope(request=request_id):
            await self._answer_scoped(frame)

    async def _answer_scoped(self, frame: GameFrame) -> None:
        started = time.monotonic()
        self.answered += 1
        message = frame.message.strip()
        if not message:
            self.transcript.record("chat_reply", reply=None, outcome="empty", seconds=0.0)
            return
        self._remember("player", message)
        lang = await asyncio.to_thread(line_language, message)
        if self._on_language is not None:
            await self._on_language(lang)
        outcome = "answered"
        try:
            async with asyncio.timeout(self.config.turn.deadline):
                # Chat prompts show the board, and the drawer too when the config asks for it.
                view = await self._view(frame, self.config.llm.chat_drawer_image)
                reply = await self.player.chat(view)
        except TimeoutError:
            reply, outcome = partner_line("slow", lang), "timeout"
        except asyncio.CancelledError:
            self.transcript.record("chat_reply", reply=None, outcome="cancelled",
                                   seconds=round(time.monotonic() - started, 3))
            raise
        except Exception as exc:
            log.exception("%s: chat failed", self.peer)
            self.transcript.record("error", where="chat", error=f"{type(exc).__name__}: {exc}"[:500])
            reply, outcome = partner_line("failed", lang), "error"
        self._remember("agent", reply)
        await self._say(reply)
        self.transcript.record("chat_reply", reply=reply, outcome=outcome, seconds=round(time.monotonic() - started, 3))

    def busy(self) -> bool:
        return bool(self.tasks)

    def pending(self) -> set[asyncio.Task[Any]]:
        return {t for t in self.tasks if not t.done()}
