"""Every move the Boardgame agent sends for its LLM player meets the guard, whatever path made it
(issue 51): the model's listed move, a free-form reply, a reply salvaged from a cut, the move of a
re-ask after an unusable answer, the offline fallback's move after the model failed, and the last
resort when the fallback failed too. ``GuardedPlayer.settle`` is the one place; the client hands it
the fallback's moves (``MatchClient._settle``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.core.llm import LLMClient
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.boardgame import runner
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.players.base import MovePlayer, PlayerUnavailable, Turn
from agent.games.boardgame.players.guarded import GuardedPlayer
from agent.games.boardgame.players.llm import LLMPlayer
from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.rules.tictactoe import TicTacToe
from agent.games.boardgame.templates import load_templates
from agent.games.boardgame.testing import legal_moves_in
from tests.boardgame.support import running_engine

TTT = TicTacToe()
PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts" / "boardgame"
WIN_IN_ONE = (0, 3, 1, 4)
"""X: row 1 columns 1 and 2; O: row 2 columns 1 and 2; X to move: row 1 column 3 wins (move 2)."""


def after(*moves: int) -> Any:
    position = TTT.initial()
    for move in moves:
        position = TTT.play(position, move)
    return position


def _config(fake: FakeOpenAI, tmp_path: Path, **play: Any) -> BoardgameConfig:
    return BoardgameConfig.model_validate({
        "game": "boardgame", "player": "llm", "prompts_dir": str(PROMPTS_DIR),
        "llm": {"base_url": fake.base_url, "model": "fake-model", "api_key_required": False,
                "request_timeout": 5, "retry": {"max_attempts": 1}},
        "play": {"search_seconds": 0.05, **play},
        "transcripts": {"dir": str(tmp_path / "transcripts")}})


async def _guarded(fake: FakeOpenAI, tmp_path: Path) -> tuple[GuardedPlayer, LLMClient]:
    config = _config(fake, tmp_path)
    client = LLMClient(config.llm, None)
    model = LLMPlayer(client, load_templates(config))
    return GuardedPlayer(model, TTT, 0.05), client


@pytest.mark.parametrize("form", ["listed", "free-form", "salvaged"])
async def test_the_models_answer_in_every_form_meets_the_guard(fake_openai: FakeOpenAI, tmp_path: Path,
                                                              form: str) -> None:
    weak = TTT.move_to_action(8)  # row 3 column 3: legal, misses the win
    if form == "listed":
        reply = FakeReply.ok_json({"reasoning": "corner", "move": "row 3 column 3"})
    elif form == "free-form":  # a model that ignored the move list and wrote the action itself
        reply = FakeReply.ok_json({"reasoning": "corner", "type": weak.type, "data": weak.data})
    else:  # cut at max_tokens in its reasoning, after the move: salvaged
        reply = FakeReply(content='{"move": "row 3 column 3", "reasoning": "the corner is the saf',
                          finish_reason="length")
    fake_openai.enqueue(reply)
    player, client = await _guarded(fake_openai, tmp_path)
    try:
        action = await player.choose(Turn(TTT, after(*WIN_IN_ONE), 0, 5))
    finally:
        await client.aclose()
    assert len(fake_openai.chat_requests) == 1
    assert action == TTT.move_to_action(2)
    assert [(m.source, m.override.rule if m.override else None) for m in player.moves] == [("model", "win-in-one")]


async def test_a_fallback_move_handed_to_the_guarded_player_is_reviewed(fake_openai: FakeOpenAI,
                                                                        tmp_path: Path) -> None:
    player, client = await _guarded(fake_openai, tmp_path)
    await client.aclose()
    turn = Turn(TTT, after(0), 1, 2)  # X in a corner: O must take the centre; an edge loses
    action = await player.settle(turn, TTT.move_to_action(1), "fallback")
    assert action == TTT.move_to_action(4)
    assert player.fallback_overrides == 1 and player.moves[0].source == "fallback"
    assert not fake_openai.chat_requests  # the guard asks no model


# ---- through the client against the engine's strong bot ----------------------------------------


class FirstLegal(MovePlayer):
    """A weak offline player: the first legal move, always."""

    inline = True

    def __init__(self) -> None:
        super().__init__("first-legal", None)  # type: ignore[arg-type]

    def decide(self, rules: GameRules[Any], position: Any) -> int:
        return int(next(iter(rules.legal_moves(position))))


class Broken(MovePlayer):
    inline = True

    def __init__(self) -> None:
        super().__init__("broken", None)  # type: ignore[arg-type]

    def decide(self, rules: GameRules[Any], position: Any) -> int:
        raise PlayerUnavailable("the offline player is broken too")


async def _play(config: BoardgameConfig, url: str, tmp_path: Path) -> list[dict[str, Any]]:
    config = config.model_copy(update={"engine": config.engine.model_copy(update={"url": url, "agent_id": "A"})})
    await runner.run(config)
    records = []
    for path in sorted((tmp_path / "transcripts").glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines()]
    return records


@pytest.mark.parametrize("fallback", ["fallback", "last-resort"])
async def test_the_fallbacks_move_after_the_model_failed_meets_the_guard(
        fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fallback: str) -> None:
    """The model always fails (HTTP 500); the offline player is weak (the first legal move) or
    broken (the client's last resort is the first legal move): against the perfect bot either
    loses unless the guard reviews what is sent. Four matches, each side first twice."""
    fake_openai.responder = lambda request: FakeReply.http_error(500, "overloaded")
    weak = FirstLegal if fallback == "fallback" else Broken
    monkeypatch.setattr(runner, "make_offline", lambda *args, **kwargs: weak())
    async with running_engine(games=("tictactoe",), bot="strong", seed=3) as (_engine, url):
        records = await _play(_config(fake_openai, tmp_path, matches=4), url, tmp_path)
    results = [r["outcome"] for r in records if r["kind"] == "result"]
    guards = [r for r in records if r["kind"] == "guard"]
    assert len(results) == 4 and "loss" not in results, results
    assert guards and {g["replaced_source"] for g in guards} == {fallback}
    assert all(r["outcome"] == "fallback" for r in records if r["kind"] == "turn_end")


async def test_the_move_of_a_re_ask_meets_the_guard(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """Each turn's first answer names no legal move (the client feeds the reason back and asks
    again); the second names the first legal move listed, which against the perfect bot loses
    unless the guard sees the re-asked answer."""
    asked: dict[str, int] = {}

    def respond(request: dict[str, Any]) -> FakeReply:
        text = json.dumps(request.get("messages"))
        first = "could not be used" not in text
        asked["first" if first else "again"] = asked.get("first" if first else "again", 0) + 1
        if first:
            return FakeReply.ok_json({"reasoning": "off the board", "move": "row 9 column 9"})
        return FakeReply.ok_json({"reasoning": "the first one", "move": legal_moves_in(request)[0]})

    fake_openai.responder = respond
    async with running_engine(games=("tictactoe",), bot="strong", seed=5) as (_engine, url):
        records = await _play(_config(fake_openai, tmp_path, matches=2), url, tmp_path)
    results = [r["outcome"] for r in records if r["kind"] == "result"]
    guards = [r for r in records if r["kind"] == "guard"]
    assert len(results) == 2 and "loss" not in results, results
    assert asked["again"] == asked["first"] > 0  # every move came from a re-ask
    assert guards and {g["replaced_source"] for g in guards} == {"model"}
