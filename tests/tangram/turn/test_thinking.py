"""The "thinking" chat line (issue 30): once per AI turn, only before the first play, only when on."""

from __future__ import annotations

from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from agent.analyze.tables import TranscriptFile, session_rows
from agent.core.prompts import PromptError
from agent.core.studies.pricing import Price
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.turn import actions as act
from agent.games.tangram.turn.thinking import thinking_line
from tests.tangram.link.socket_support import play_one_turn, play_request, records
from tests.tangram.link.test_session import ScriptedPlayer, advance, frame, make_session
from tests.tangram.support import MOVE, llm_config
from tests.tangram.turn.support import LINES, Driver

GREEN = Pose("Green", 50.0, 50.0, 0.0)
LINE = "Still thinking, one moment."


def thinking_records(d: Driver) -> list[dict]:
    return d.records("thinking")


# ---------------------------------------------------------------------- the machine, on a fake clock


def test_a_slow_first_decision_gets_one_line_at_the_set_time_then_the_play() -> None:
    d = Driver(deadline=60.0, thinking_after_s=4.0, thinking_line=LINE)
    d.request()
    d.advance(3.99)
    assert d.said() == []
    d.advance(0.02)
    assert d.said() == [LINE] and d.at(act.Say) == [pytest.approx(4.0)]
    assert thinking_records(d) == [{"after_s": 4.0, "text": LINE}]
    d.advance(10.0)
    assert d.said() == [LINE]  # once per turn
    d.decide(Decision(GREEN, "Green."))
    assert d.kinds() == ["chat", "chat", "play"]


def test_no_line_when_the_play_came_first() -> None:
    d = Driver(thinking_after_s=4.0, thinking_line=LINE)
    d.request()
    d.advance(3.0)
    d.decide(Decision(GREEN, "Green."))
    d.advance(2.0)  # the play's feedback is slow, and the player is asked again: still no line
    d.feedback({"Green": (50, 50, 0, ["Purple"])})
    d.advance(10.0)
    assert LINE not in d.said() and thinking_records(d) == []


def test_no_line_when_it_is_switched_off() -> None:
    d = Driver(thinking_after_s=None, thinking_line=LINE)
    d.request()
    d.advance(60.0)
    assert LINE not in d.said() and "thinking" not in d.timers


def test_no_line_after_the_turn_ended_and_one_again_next_turn() -> None:
    d = Driver(deadline=30.0, thinking_after_s=4.0, thinking_line=LINE)
    d.request()
    d.decide(Decision(None, "pass"))
    d.advance(10.0)
    assert d.said() == ["pass"]
    d.request()
    d.advance(4.0)
    assert d.said() == ["pass", LINE] and len(thinking_records(d)) == 1


def test_no_line_planned_when_the_turn_is_too_short_for_it() -> None:
    d = Driver(deadline=5.0, thinking_after_s=4.0, thinking_line=LINE)  # the work ends at 3.2 s
    d.request()
    d.advance(10.0)
    assert LINE not in d.said()


# ---------------------------------------------------------------------- the template and the config


def test_the_shipped_template_gives_one_short_line_and_the_switch_turns_it_off() -> None:
    line = thinking_line(Config())
    assert line and len(line) <= 200 and "\n" not in line
    assert thinking_line(Config.model_validate({"turn": {"thinking_line": False}})) is None


def test_a_prompt_folder_without_the_template_uses_the_shipped_one_and_a_broken_one_fails(tmp_path: Path) -> None:
    (tmp_path / "system.j2").write_text("x")
    config = Config.model_validate({"prompts_dir": str(tmp_path)})
    assert thinking_line(config) == thinking_line(Config())
    (tmp_path / "thinking.j2").write_text("Thinking for {{ seconds }} s")  # not a variable we pass
    with pytest.raises(PromptError):
        thinking_line(config)
    (tmp_path / "thinking.j2").write_text("Hmm, {{ after_s }} seconds already.")
    assert thinking_line(config) == "Hmm, 4 seconds already."


# ---------------------------------------------------------------------- the session and the analysis


async def test_the_session_sends_the_line_before_a_slow_play_and_records_it() -> None:
    player = ScriptedPlayer(["wait-release", Decision(GREEN, "Green.")])
    session, conn = make_session(player, deadline=30.0)
    await session.handle_raw(frame("playRequest"))
    await advance(session, 4.0)
    line = await conn.until("chat")
    assert line["message"] == thinking_line(Config())
    player.release.set()
    await conn.until("play")
    assert [f["type"] for f in conn.sent] == ["chat", "chat", "play"]
    await session.close()


async def test_the_session_never_sends_it_when_switched_off() -> None:
    session, conn = make_session(ScriptedPlayer(["hang"]), deadline=30.0, thinking_line=False)
    await session.handle_raw(frame("playRequest"))
    await advance(session, 30.0)
    await conn.until("finish")
    assert [f["message"] for f in conn.sent if f["type"] == "chat"] == [LINES("ran_out")]
    await session.close()


def test_the_analysis_counts_thinking_lines_per_turn_and_session(tmp_path: Path) -> None:
    records = [{"kind": "session_start", "session": "s", "t": 1.0},
               {"kind": "turn_start", "turn": 1, "t": 1.0}, {"kind": "thinking", "turn": 1, "after_s": 4.0, "t": 5.0},
               {"kind": "turn_end", "turn": 1, "outcome": "played", "seconds": 9.0, "t": 10.0},
               {"kind": "turn_start", "turn": 2, "t": 11.0},
               {"kind": "turn_end", "turn": 2, "outcome": "played", "seconds": 1.0, "t": 12.0}]
    tables = session_rows(TranscriptFile(tmp_path / "s.jsonl", records), {"gpt-4o": Price(1.0, 1.0)})
    assert tables.sessions[0]["thinking_lines"] == 1
    assert [row.get("thinking_lines", 0) for row in tables.turns] == [1, 0]


@pytest.mark.parametrize("on", [True, False])
async def test_through_the_server_a_slow_model_gets_the_line_before_its_move_only_when_on(tmp_path: Path,
                                                                                            on: bool) -> None:
    async with FakeOpenAI(responder=lambda req: FakeReply.ok_json(MOVE, delay=1.0)) as fake:
        config = llm_config(fake.base_url, tmp_path, deadline=8,
                            turn={"deadline": 8, "thinking_after_s": 0.3, "thinking_line": on})
        async with serve_agent(config, host="127.0.0.1", port=0) as server, connect(server.url) as ws:
            frames = await play_one_turn(ws, play_request())
    chats = [f["message"] for f in frames if f["type"] == "chat"]
    kinds = [f["type"] for f in frames]
    line = thinking_line(Config())
    if on:
        assert chats[0] == line and kinds == ["chat", "chat", "play", "finish"]
        assert [(r["turn"], r["text"]) for r in records(server.transcript_paths(), "thinking")] == [(1, line)]
    else:
        assert line not in chats and kinds == ["chat", "play", "finish"]
        assert records(server.transcript_paths(), "thinking") == []
