"""The chat desk's own lines (busy, slow, failed) are said in the language of the request they answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent.core.transcript import Transcript
from agent.games.tangram.dialogue import partner_line
from agent.games.tangram.link.chat_desk import MAX_OPEN_CHATS, ChatDesk
from agent.games.tangram.protocol import GameFrame
from tests.tangram.support import planner_config

PT = "podes rodar o quadrado roxo, por favor?"
EN = "can you turn the purple square please?"


class _Player:
    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.release = asyncio.Event()

    async def chat(self, view: Any) -> str:
        if self.behaviour == "fail":
            raise RuntimeError("boom")
        await self.release.wait()
        return "ok"


def _desk(player: _Player, said: list[str], deadline: float = 5.0) -> ChatDesk:
    config = planner_config()
    config = config.model_copy(update={"turn": config.turn.model_copy(update={"deadline": deadline})})

    async def view(frame: GameFrame, drawer: bool) -> Any:
        return None

    async def say(text: str) -> None:
        said.append(text)

    return ChatDesk(config, player, Transcript(None), "test", view, say, lambda who, text: None)  # type: ignore[arg-type]


def _frame(message: str) -> GameFrame:
    return GameFrame(type="chatRequest", message=message)


@pytest.mark.parametrize(("message", "lang"), [(PT, "pt"), (EN, "en")])
async def test_a_failed_answer_is_said_in_the_requests_language(message: str, lang: str) -> None:
    said: list[str] = []
    desk = _desk(_Player("fail"), said)
    await desk.request(_frame(message), 1)
    await asyncio.gather(*desk.pending())
    assert said == [partner_line("failed", lang)]


@pytest.mark.parametrize(("message", "lang"), [(PT, "pt"), (EN, "en")])
async def test_a_slow_answer_is_said_in_the_requests_language(message: str, lang: str) -> None:
    said: list[str] = []
    desk = _desk(_Player("wait"), said, deadline=0.2)
    await desk.request(_frame(message), 1)
    await asyncio.gather(*desk.pending())
    assert said == [partner_line("slow", lang)]


async def test_a_flood_gets_the_busy_line_in_its_language() -> None:
    said: list[str] = []
    player = _Player("wait")
    desk = _desk(player, said)
    for i in range(MAX_OPEN_CHATS):
        await desk.request(_frame(EN), i)
    await desk.request(_frame(PT), 99)
    assert said == [partner_line("busy", "pt")]
    player.release.set()
    await asyncio.gather(*desk.pending())
    assert said[1:] == ["ok"] * MAX_OPEN_CHATS
