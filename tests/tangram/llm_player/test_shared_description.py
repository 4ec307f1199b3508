"""A chat during the AI's turn carries the board the playRequest carried: the LLM player describes
that board once for both (the description is shapely work held under the interpreter lock, which
four games at once made everyone wait for), and a new board gets a description of its own."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from agent.core.llm import LLMResult
from agent.core.memory import Memory
from agent.games.tangram.config import Config
from agent.games.tangram.contract import TurnView
from agent.games.tangram.link.factory import PlayerFactory
from agent.games.tangram.llm_player import context as prompt_context
from agent.games.tangram.llm_player.player import LLMPlayer
from agent.games.tangram.protocol import GameState, OnBoardPiece
from benchmarks.tangram.collect_chat_replies import Recorder
from tests.tangram.support import AnsweringClient

CONFIG = Config.model_validate({"player": "llm", "llm": {"base_url": "http://127.0.0.1:9/v1", "api_key_required": False,
                                                         "prime": False}})
PROMPTS = PlayerFactory(CONFIG, with_client=False)._prompts
MOVE = {"action": "place", "piece": "Green", "rotation": 0, "x": 50, "y": 50, "relation": None, "anchor": None,
        "chat": "Green goes in the middle.", "reasoning": "test"}


class Client(AnsweringClient):
    """Answers a move to a play prompt and a short line to a chat; keeps each prompt's text."""

    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[str] = []

    async def complete_json(self, messages: list[dict[str, Any]], schema: dict[str, Any], name: str,
                            **_: Any) -> LLMResult:
        self.prompts.append(str(messages[-1]["content"]))
        await asyncio.sleep(0)
        data = {"reply": "Sounds good, Red could go next."} if name == "chat_reply" else MOVE
        return LLMResult(text="", data=data)


def view(state: GameState, message: str = "") -> TurnView:
    return TurnView(objective="A house", state=state, memory=Memory(8), message=message)


RED = GameState(on_board={"Red": OnBoardPiece(position=(50.0, 60.0), vertices=[], rotation=180.0)})
BLUE = GameState(on_board={**RED.on_board, "Blue": OnBoardPiece(position=(20.0, 20.0), vertices=[], rotation=0.0)})


class Described:
    """The boards described (by their piece count), each time the description really ran; the
    first is held until ``release`` is set, so that a second caller overlaps it, as in a game."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[int] = []
        self.release = threading.Event()
        real = prompt_context.describe_board

        def counted(board: Any) -> Any:
            self.calls.append(len(board))
            self.release.wait(5)
            return real(board)

        monkeypatch.setattr(prompt_context, "describe_board", counted)


@pytest.fixture
def described(monkeypatch: pytest.MonkeyPatch) -> Described:
    return Described(monkeypatch)


async def test_a_chat_during_the_turn_shares_the_turns_description(described: Described) -> None:
    client = Client()
    player = LLMPlayer(CONFIG, client, PROMPTS, Recorder(), None)  # type: ignore[arg-type]
    turn = asyncio.create_task(player.play(view(RED)))
    chat = asyncio.create_task(player.chat(view(RED.model_copy(deep=True), "Shall we start with the roof?")))
    await asyncio.sleep(0.05)  # both have asked for the description; the first is still being made
    described.release.set()
    decision, reply = await asyncio.gather(turn, chat)
    assert decision.pose is not None and reply.startswith("Sounds good")
    assert described.calls == [1], "one description for the turn and the chat about the same board"
    assert len(client.prompts) == 2 and all("Red" in prompt for prompt in client.prompts)
    await player.chat(view(BLUE, "and now?"))
    assert described.calls == [1, 2], "a new board is described anew"


async def test_a_chat_given_up_leaves_the_turns_description_running(described: Described) -> None:
    player = LLMPlayer(CONFIG, Client(), PROMPTS, Recorder(), None)  # type: ignore[arg-type]
    chat = asyncio.create_task(player.chat(view(RED, "hi")))
    await asyncio.sleep(0.05)
    chat.cancel()  # the session bounds a chat: it may be given up while the description is made
    turn = asyncio.create_task(player.play(view(RED)))
    await asyncio.sleep(0.05)
    described.release.set()
    assert (await turn).pose is not None and described.calls == [1]
    with pytest.raises(asyncio.CancelledError):
        await chat
