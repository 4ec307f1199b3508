"""The corrective re-ask: one more call in the same conversation when nothing can be salvaged, only
when this session's measured latency says it fits before the turn's decide_by; never a later
turn end or a play during the game's animation because of it. The real SDK talks to the fake
OpenAI server; whole turns run through the simulator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent.core.memory import Memory
from agent.core.prompts import PromptError
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.transcript import Transcript
from agent.games.tangram.config import PROJECT_DIR
from agent.games.tangram.contract import Decision, TurnView
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.link.factory import make_player_factory
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.llm_player.player import LLMPlayer
from agent.games.tangram.protocol import GameState, OnBoardPiece
from agent.games.tangram.sim.client import GameClient
from tests.tangram.support import llm_config

NONE: dict[str, Any] = {"reasoning": "r", "piece": None, "rotation": None, "x": None, "y": None, "relation": None,
                        "anchor": None, "relation2": None, "anchor2": None}
BAD = {**NONE, "action": "place", "piece": "Green", "relation": "right_of", "anchor": "Cream",
       "chat": "Green next to Cream."}
"""Cream is in the drawer and there are no coordinates: nothing to salvage."""
GOOD = {**NONE, "action": "place", "piece": "Green", "x": 50, "y": 50, "rotation": 0, "chat": "Green in the middle."}


class Recorder(Transcript):
    def __init__(self) -> None:
        super().__init__(None)
        self.records: list[dict[str, Any]] = []

    def record(self, kind: str, **data: Any) -> None:
        self.records.append({"kind": kind, **data})

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["kind"] == kind]


def board_view(decide_in: float | None = 20.0, **extra: Any) -> TurnView:
    state = GameState(on_board={"Red": OnBoardPiece(position=(50.0, 80.0), vertices=[], rotation=180.0),
                                "Blue": OnBoardPiece(position=(20.0, 20.0), vertices=[], rotation=0.0)})
    decide_by = None if decide_in is None else asyncio.get_running_loop().time() + decide_in
    return TurnView(objective="A house", state=state, memory=Memory(4), decide_by=decide_by, **extra)


def make_player(base_url: str, tmp_path: Path, **llm: Any) -> tuple[LLMPlayer, Recorder]:
    config = llm_config(base_url, tmp_path, llm=llm)
    factory = make_player_factory(config)
    recorder = Recorder()
    player = factory(recorder)
    assert isinstance(player, LLMPlayer)
    return player, recorder


def last_user_text(request_messages: list[dict[str, Any]]) -> str:
    content = request_messages[-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


async def test_the_reask_continues_the_conversation_with_the_problem_and_the_facts(tmp_path):
    async with FakeOpenAI(replies=[FakeReply.ok_json(BAD), FakeReply.ok_json(GOOD)]) as fake:
        player, recorder = make_player(fake.base_url, tmp_path)
        decision = await player.play(board_view())
        await player.client.aclose()
    assert decision.source == "llm+reask" and decision.pose is not None and decision.pose.piece == "Green"
    first, second = fake.chat_requests
    # Same conversation: the first request, then the model's answer, then the correction.
    assert second.messages[:2] == first.messages
    assert second.messages[2] == {"role": "assistant", "content": json.dumps(BAD)}
    text = last_user_text(second.messages)
    assert second.messages[3]["role"] == "user"
    assert "Cream is not on the board." in text
    assert "On the board: Blue, Red; in the drawer: Cream, Green, Yellow, Purple, Brown." in text
    assert "places Green next to a piece that is not on the board" in text
    assert second.json["response_format"] == first.json["response_format"]
    # Both calls are llm records of the decision: the play and its re-ask.
    assert [(r["purpose"], r.get("reask_of")) for r in recorder.of("llm")] == [("play", None), ("reask", "play")]
    (reask,) = recorder.of("reask")
    assert reask["problem"] == "anchor_off_board" and reask["sent"] is True and reask["purpose"] == "play"


async def test_a_salvageable_answer_is_not_reasked(tmp_path):
    salvageable = {**BAD, "x": 130, "y": 40}  # falls back to its own coordinates, clamped onto the board
    async with FakeOpenAI(replies=[FakeReply.ok_json(salvageable)]) as fake:
        player, recorder = make_player(fake.base_url, tmp_path)
        decision = await player.play(board_view())
        await player.client.aclose()
    assert len(fake.chat_requests) == 1 and decision.source == "llm+salvage"
    assert [r["salvage"] for r in recorder.of("salvage")] == ["anchor_off_board", "clamped"]
    assert recorder.of("reask") == []


async def test_a_pass_is_not_reasked(tmp_path):
    async with FakeOpenAI(replies=[FakeReply.ok_json({**NONE, "action": "pass", "chat": "Looks done!"})]) as fake:
        player, _ = make_player(fake.base_url, tmp_path)
        decision = await player.play(board_view())
        await player.client.aclose()
    assert len(fake.chat_requests) == 1 and decision.pose is None and decision.chat == "Looks done!"


async def test_a_reply_that_is_not_json_is_reasked(tmp_path):
    replies = [FakeReply.ok("I think Green should go in the middle."), FakeReply.ok_json(GOOD)]
    async with FakeOpenAI(replies=replies) as fake:
        player, recorder = make_player(fake.base_url, tmp_path)
        decision = await player.play(board_view())
        await player.client.aclose()
    assert decision.pose is not None and decision.source == "llm+reask"
    assert "it was not one JSON object" in last_user_text(fake.chat_requests[1].messages)
    assert recorder.of("reask")[0]["problem"] == "not_json"


async def test_a_provider_error_is_not_reasked(tmp_path):
    async with FakeOpenAI(replies=[FakeReply.http_error(401, "bad key")]) as fake:
        player, recorder = make_player(fake.base_url, tmp_path)
        decision = await player.play(board_view())
        await player.client.aclose()
    assert len(fake.chat_requests) == 1 and decision.source == "fallback" and recorder.of("reask") == []


async def test_max_reasks_0_falls_back_at_once(tmp_path):
    async with FakeOpenAI(replies=[FakeReply.ok_json(BAD), FakeReply.ok_json(GOOD)]) as fake:
        player, recorder = make_player(fake.base_url, tmp_path, max_reasks=0)
        decision = await player.play(board_view())
        await player.client.aclose()
    assert len(fake.chat_requests) == 1
    assert decision.pose is None and decision.source == "fallback" and "Cream not on the board" in decision.reasoning
    assert recorder.of("reask") == []


def test_max_reasks_0_needs_no_reask_template(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for template in (PROJECT_DIR / "prompts" / "tangram").glob("*.j2"):
        if template.name != "reask.j2":
            (prompts / template.name).write_text(template.read_text())
    config = llm_config("http://127.0.0.1:9/v1", tmp_path, llm={"max_reasks": 0}, prompts_dir=str(prompts))
    make_player_factory(config, with_client=False)  # no reask.j2, and none needed
    config = llm_config("http://127.0.0.1:9/v1", tmp_path, prompts_dir=str(prompts))
    with pytest.raises(PromptError, match=r"has no reask\.j2"):
        make_player_factory(config, with_client=False)


async def test_max_reasks_2_asks_twice_more(tmp_path):
    replies = [FakeReply.ok_json(BAD), FakeReply.ok_json({**BAD, "piece": None}), FakeReply.ok_json(GOOD)]
    async with FakeOpenAI(replies=replies) as fake:
        player, recorder = make_player(fake.base_url, tmp_path, max_reasks=2)
        decision = await player.play(board_view())
        await player.client.aclose()
    assert len(fake.chat_requests) == 3 and decision.pose is not None
    assert [r["problem"] for r in recorder.of("reask")] == ["anchor_off_board", "no_piece"]
    assert len(fake.chat_requests[2].messages) == 6  # system, user, then two answer-correction pairs


async def test_no_reask_when_the_measured_latency_does_not_fit_before_decide_by(tmp_path):
    # The first call takes 1.5 s; with at most 1.5 s left after it, another (1.25 x 1.5 s expected) would
    # end past decide_by. A busy machine only makes the first call slower, so less is left.
    async with FakeOpenAI(replies=[FakeReply.ok_json(BAD, delay=1.5), FakeReply.ok_json(GOOD)]) as fake:
        player, recorder = make_player(fake.base_url, tmp_path)
        decision = await player.play(board_view(decide_in=3.0))
        await player.client.aclose()
    assert len(fake.chat_requests) == 1 and decision.source == "fallback"
    (reask,) = recorder.of("reask")
    assert reask["sent"] is False and reask["expected_s"] >= 1.25 * 1.5 and reask["left_s"] <= 1.5
    assert reask["left_s"] < reask["expected_s"]


async def test_the_reask_is_cut_at_decide_by_when_the_model_is_slower_than_measured(tmp_path):
    async with FakeOpenAI(replies=[FakeReply.ok_json(BAD), FakeReply.ok_json(GOOD, delay=5)]) as fake:
        player, recorder = make_player(fake.base_url, tmp_path)
        loop = asyncio.get_running_loop()
        view = board_view(decide_in=1.0)
        decision = await player.play(view)
        ended = loop.time()
        await player.client.aclose()
    # The re-ask's answer would take 5 s: ending within a second of decide_by proves the cut.
    assert view.decide_by is not None and ended <= view.decide_by + 1.0
    assert decision.source == "fallback" and decision.pose is None
    assert [(r["purpose"], r["outcome"]) for r in recorder.of("llm")] == [("play", "ok"), ("reask", "timeout")]


async def test_a_feedback_decision_is_salvaged_and_reasked_the_same_way(tmp_path):
    previous = Decision(Pose("Green", 50.0, 50.0, 0.0), "Green in the middle.")
    replies = [FakeReply.ok_json({**BAD, "x": 500, "y": 50}),  # salvaged: own coordinates, clamped
               FakeReply.ok_json({**BAD, "piece": None}), FakeReply.ok_json(GOOD)]  # re-asked
    async with FakeOpenAI(replies=replies) as fake:
        player, recorder = make_player(fake.base_url, tmp_path)
        first = await player.adjust(board_view(collisions=["Red"], previous=previous, attempt=1))
        second = await player.adjust(board_view(collisions=["Red"], previous=previous, attempt=2))
        await player.client.aclose()
    assert first.source == "llm+salvage" and first.pose is not None
    assert [r["salvage"] for r in recorder.of("salvage")] == ["anchor_off_board", "clamped"]
    assert all(r["purpose"] == "feedback" for r in recorder.of("salvage"))
    assert second.source == "llm+reask" and second.pose is not None
    assert [(r["purpose"], r.get("reask_of")) for r in recorder.of("llm")] == \
        [("feedback", None), ("feedback", None), ("reask", "feedback")]
    assert "it names no piece to move" in last_user_text(fake.chat_requests[2].messages)


def _records(server: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for path in server.transcript_paths() for line in path.read_text().splitlines()]


async def test_a_reask_never_makes_the_turn_end_late_or_play_during_the_animation(tmp_path):
    """Whole turns through the simulator, three games: a re-ask that answers just in time, one the
    turn's decide_by cuts off, then in that same game a re-ask the measured latency no longer
    allows. Every turn ends with finish within its deadline and the game sees no play or finish
    while it animates."""
    deadline = 8.0  # decide_by: 3.72 s after the request (1.8 s send margin, then a 40 % reserve), so the
    # 1.2 s re-ask of game 1 is back in time on a busy machine too, and the 9 s one of game 2 is cut
    replies = [FakeReply.ok_json(BAD), FakeReply.ok_json(GOOD, delay=1.2),  # game 1: back before decide_by
               FakeReply.ok_json(BAD), FakeReply.ok_json(GOOD, delay=9),  # game 2: cut off at decide_by
               FakeReply.ok_json(BAD), FakeReply.ok_json(GOOD)]  # game 2 again: no re-ask sent
    turns = []
    async with FakeOpenAI(replies=replies) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=deadline, request_timeout=10),
                        host="127.0.0.1", port=0) as server:
        for rounds in (1, 2):
            async with GameClient(server.url) as game:
                for _ in range(rounds):
                    turns.append(await game.ai_turn(deadline=deadline + 3))
                    await game.human_turn()
                assert game.violations == []
        assert len(fake.chat_requests) == 5
    for turn in turns:
        assert turn.finished and turn.latency is not None and turn.latency <= deadline
    assert [len(t.plays) for t in turns] == [1, 0, 0]
    assert not any(p.during_animation for t in turns for p in t.plays)
    records = _records(server)
    calls = [(r["session"], r["turn"], r["purpose"], r["outcome"]) for r in records if r["kind"] == "llm"]
    sessions = list(dict.fromkeys(c[0] for c in calls))
    assert [(sessions.index(c[0]), *c[1:]) for c in calls] == [
        (0, 1, "play", "ok"), (0, 1, "reask", "ok"),
        (1, 1, "play", "ok"), (1, 1, "reask", "timeout"),
        (1, 2, "play", "ok")]
    skipped = [r for r in records if r["kind"] == "reask" and not r["sent"]]
    assert len(skipped) == 1 and skipped[0]["expected_s"] > skipped[0]["left_s"]
