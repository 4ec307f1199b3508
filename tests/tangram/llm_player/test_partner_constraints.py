"""A constraint the offline planner agreed to in the model's place ("don't move my pieces", "leave
Red where it is") binds the model's later turns too: the prompt says it, and a move that breaks it
is refused by the validator, asked again, and then played by the fallback planner instead."""

from __future__ import annotations

from typing import Any

from agent.core.llm import LLMResult
from agent.games.tangram.config import Config
from agent.games.tangram.llm_player.player import LLMPlayer
from agent.games.tangram.offline.player import PlannerPlayer
from benchmarks.tangram.collect_chat_replies import FISH_STATE, Recorder
from tests.tangram.llm_player.test_real_chat_replies import PROMPTS, view_for
from tests.tangram.support import AnsweringClient

CONFIG = Config.model_validate({"player": "llm", "llm": {"base_url": "http://127.0.0.1:9/v1", "api_key_required": False,
                                                         "prime": False, "fallback_to_planner": True,
                                                         "candidates": False}})


class MovesClient(AnsweringClient):
    """A model whose chat reply is unusable ("...") and whose every move moves ``piece``."""

    def __init__(self, piece: str) -> None:
        super().__init__()
        self.piece = piece
        self.prompts: list[str] = []

    async def complete_json(self, messages: Any, *args: Any, **kwargs: Any) -> LLMResult:
        self.prompts.append(str(messages))
        data = {"reply": "...", "reasoning": "r", "candidate": None, "action": "place", "piece": self.piece,
                "rotation": 0.0, "x": 30.0, "y": 30.0, "relation": None, "anchor": None, "relation2": None,
                "anchor2": None, "chat": f"I moved {self.piece} to the left."}
        return LLMResult(text=str(data), data=data, model="stub")


async def played_after(line: str, piece: str) -> tuple[Any, MovesClient, Recorder]:
    client = MovesClient(piece)
    transcript = Recorder()
    assert PROMPTS is not None
    player = LLMPlayer(CONFIG, client, PROMPTS, transcript, PlannerPlayer(CONFIG))  # type: ignore[arg-type]
    await player.chat(view_for(line))
    client.prompts.clear()
    return await player.play(view_for("")), client, transcript


async def test_dont_move_my_pieces_said_by_the_planner_holds_for_the_model() -> None:
    decision, client, transcript = await played_after("please don't move the pieces I placed", "Purple")
    assert "never move the partner" in client.prompts[0] and "Never move or place Purple" in client.prompts[0]
    assert decision.pose is None or decision.pose.piece != "Purple", decision
    assert decision.source == "planner-fallback"
    asked_again = [r for r in transcript.records if r["kind"] == "reask"]
    assert asked_again and asked_again[0]["problem"] == "piece_kept"


async def test_leave_a_piece_where_it_is_holds_for_the_model() -> None:
    decision, client, _ = await played_after("leave Red where it is", "Red")
    assert "leave Red where it is" in client.prompts[0]
    assert decision.pose is None or decision.pose.piece != "Red", decision


async def test_without_a_constraint_the_models_move_is_played() -> None:
    decision, client, _ = await played_after("thanks", "Purple")
    assert "Never move" not in client.prompts[0]
    assert decision.pose is not None and decision.pose.piece == "Purple" and decision.source.startswith("llm")
    assert decision.pose.x != FISH_STATE["Purple"].position[0]


async def test_a_part_the_partner_took_is_never_placed_by_the_model() -> None:
    decision, client, transcript = await played_after("I'll do the tail", "Blue")  # Blue, the tail, is in the drawer
    assert "Never move or place Blue" in client.prompts[0]
    assert decision.pose is None or decision.pose.piece != "Blue", decision
    asked_again = [r for r in transcript.records if r["kind"] == "reask"]
    assert asked_again and asked_again[0]["problem"] == "piece_kept"


class ScriptedChatClient(MovesClient):
    """A model whose chat replies are given in order ("..." is unusable: the planner answers instead)."""

    def __init__(self, piece: str, replies: list[str]) -> None:
        super().__init__(piece)
        self.replies = replies

    async def complete_json(self, messages: Any, *args: Any, **kwargs: Any) -> LLMResult:
        result = await super().complete_json(messages, *args, **kwargs)
        if "chat_reply" in args:
            assert result.data is not None
            result.data["reply"] = self.replies.pop(0)
        return result


async def test_a_pass_for_the_rest_of_the_game_ends_when_the_model_answers_your_turn() -> None:
    client = ScriptedChatClient("Blue", ["...", "Sure, I'll play again now!"])
    assert PROMPTS is not None
    planner = PlannerPlayer(CONFIG)
    player = LLMPlayer(CONFIG, client, PROMPTS, Recorder(), planner)  # type: ignore[arg-type]
    assert "until you ask me to play again" in await player.chat(view_for("leave the rest to me"))
    passed = await player.play(view_for(""))
    assert passed.pose is None and passed.source == "planner-promise"
    assert await player.chat(view_for("ok your turn")) == "Sure, I'll play again now!"  # the model's own reply
    assert not planner.promised()
    played = await player.play(view_for(""))
    assert played.source.startswith("llm"), played
