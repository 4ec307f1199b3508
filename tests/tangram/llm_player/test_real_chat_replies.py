"""Real answers of the local model (Gemma 3 270M) to chat requests, kept in real_chat_replies.yaml by
benchmarks/tangram/collect_chat_replies.py, replayed through the LLM player: a degenerate one ("...",
punctuation, the answer's format, the prompt or the partner's line copied, another language) is
never shown, the offline planner answers instead and a ``chat_replaced`` record says so; a sound
one goes out as the model wrote it.

Each kept reply carries ``expect``, written by reading the reply (not by running the player):
"shown" or "replaced".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.core.llm import LLMResult
from agent.core.memory import Memory
from agent.games.tangram.config import Config
from agent.games.tangram.contract import TurnView
from agent.games.tangram.link.factory import PlayerFactory
from agent.games.tangram.llm_player.player import LLMPlayer
from agent.games.tangram.llm_player.replies import degenerate
from agent.games.tangram.offline.player import PlannerPlayer
from agent.games.tangram.protocol import GameState
from benchmarks.tangram.collect_chat_replies import FISH_STATE, MOVERS, Recorder
from tests.tangram.support import AnsweringClient

KEPT = yaml.safe_load((Path(__file__).parent / "real_chat_replies.yaml").read_text(encoding="utf-8"))


class KeptClient(AnsweringClient):
    """Answers every call with one kept reply, as the real client returned it."""

    def __init__(self, entry: dict[str, Any]) -> None:
        super().__init__()
        data = {"reply": entry["reply"]} if entry.get("reply") is not None else None
        self.result = LLMResult(text=entry.get("text") or "", data=data, error=entry.get("error"),
                                model=entry.get("model", ""))

    async def complete_json(self, *args: Any, **kwargs: Any) -> LLMResult:
        return self.result


CONFIG = Config.model_validate({"player": "llm", "llm": {"base_url": "http://127.0.0.1:9/v1", "api_key_required": False,
                                                         "prime": False}})
PROMPTS = PlayerFactory(CONFIG, with_client=False)._prompts


def view_for(line: str) -> TurnView:
    memory = Memory(12)
    memory.add("agent", "I placed Red as the body, next to the back.")
    memory.add("player", line)
    return TurnView(objective="A fish", state=GameState(on_board=dict(FISH_STATE)), memory=memory, message=line,
                    movers=dict(MOVERS))


@pytest.mark.parametrize("entry", KEPT, ids=[f"{i:02d}-{e['say'][:25]}" for i, e in enumerate(KEPT)])
async def test_each_kept_real_reply_is_shown_or_replaced_as_it_should(entry: dict[str, Any]) -> None:
    transcript = Recorder()
    assert PROMPTS is not None
    planner = PlannerPlayer(CONFIG)
    player = LLMPlayer(CONFIG, KeptClient(entry), PROMPTS, transcript, planner)  # type: ignore[arg-type]
    view = view_for(entry["say"])
    shown = await player.chat(view)
    replaced = [r for r in transcript.records if r["kind"] == "chat_replaced"]
    said = entry["reply"] if entry.get("reply") is not None else entry.get("text", "")
    if entry["expect"] == "shown":
        assert shown == said and not replaced
        return
    assert replaced, (said, shown)
    assert replaced[0]["model_reply"] == (None if said is None else said[:300]) or not said
    assert replaced[0]["reason"] and replaced[0]["reply"] == shown
    assert shown != said
    # What goes out instead is the offline planner's answer to the same line on the same board.
    assert shown == await PlannerPlayer(CONFIG).chat(view_for(entry["say"]))
    assert degenerate(shown, partner=[entry["say"]]) is None


def test_the_kept_replies_hold_degenerate_and_sound_ones() -> None:
    expects = [e["expect"] for e in KEPT]
    assert len(KEPT) >= 20 and expects.count("replaced") >= 1 and expects.count("shown") >= 1


async def test_a_promise_made_by_the_offline_answer_is_kept_on_the_next_turn() -> None:
    """The model answered "..." to "move Cream left"; the offline planner said it would move Cream
    left on its next turn; that turn the planner plays it, not the model (which might not)."""
    entry = next(e for e in KEPT if e.get("reply") == "...")
    transcript = Recorder()
    client = KeptClient(entry)
    assert PROMPTS is not None
    player = LLMPlayer(CONFIG, client, PROMPTS, transcript, PlannerPlayer(CONFIG))  # type: ignore[arg-type]
    said = await player.chat(view_for("move Cream left"))
    assert "Cream" in said and "left" in said, said
    decision = await player.play(view_for(""))
    assert decision.source == "planner-promise" and decision.pose is not None and decision.pose.piece == "Cream"
    assert "left" in decision.chat
    assert decision.pose.x < FISH_STATE["Cream"].position[0]
    assert [r for r in transcript.records if r["kind"] == "promise_kept"]


@pytest.mark.parametrize(("line", "shown"), [
    ("A human", False),  # the local model's whole line for its move on the real game (07:04, local-4)
    ("a human", False),
    ("Red is the chest of the human.", True),
])
def test_a_move_line_that_only_repeats_the_objective_is_replaced(line: str, shown: bool) -> None:
    transcript = Recorder()
    assert PROMPTS is not None
    player = LLMPlayer(CONFIG, KeptClient({"reply": ""}), PROMPTS, transcript, None)  # type: ignore[arg-type]
    said = player._move_line(line, "Red", "I'm placing Red.", "move", "A human")
    replaced = [r for r in transcript.records if r["kind"] == "chat_replaced"]
    assert (said == line and not replaced) if shown else (said == "I'm placing Red." and replaced)
