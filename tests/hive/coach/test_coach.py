"""The LLM coach through the real client and a fake OpenAI server: applied, ignored, never waited for."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent.core.config import PROJECT_DIR, LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.llm.records import MATCH_OVER
from agent.core.prompts import PromptError
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.transcript import Transcript
from agent.games.hive.arena import Arena, ArenaResult
from agent.games.hive.coach.coach import Coach, load_hive_prompts, summary_context
from agent.games.hive.config import CoachConfig, DirectConfig
from agent.games.hive.link.client import ClientOutcome, play
from agent.games.hive.link.session import HiveSession, parse_direct, render_view
from agent.games.hive.opponents.bots import make_bot
from agent.games.hive.protocol import parse_state
from agent.games.hive.rules import empty_arena, view
from agent.games.hive.strategy.plan import Plan, plan_json_schema
from agent.games.hive.strategy.strategy import new_strategy

PROMPTS = PROJECT_DIR / "prompts" / "hive"
PLAN = {"bees": [{"bee": 0, "role": "raid", "target": None}, {"bee": 1, "role": "explore", "target": [3, 4]}],
        "aggression": 0.7, "note": "wall them in"}


def llm_for(fake: FakeOpenAI, attempts: int = 1) -> LLMClient:
    config = LLMConfig(base_url=fake.base_url, model="fake-model", api_key_required=False, request_timeout=10,
                       retry=RetryConfig(max_attempts=attempts, initial_backoff=0.01, max_backoff=0.05))
    return LLMClient(config, None)


def make_coach(fake: FakeOpenAI, **config: float) -> Coach:
    strategy = new_strategy(0, 1)
    state = empty_arena()
    strategy.decide(parse_state(",".join(map(str, view(state)))))
    return Coach(llm_for(fake), load_hive_prompts(PROMPTS), CoachConfig(**config), strategy, "bees")  # type: ignore[arg-type]


async def finish(coach: Coach) -> None:
    assert coach._task is not None
    await asyncio.wait_for(coach._task, 10)
    await coach.client.aclose()


async def coached_match(session: HiveSession, arena_seed: int) -> tuple[ArenaResult, ClientOutcome]:
    """A whole match on the local arena (2 s forfeit): ``session`` playing as "coached" against the
    example bot (depth 4). Returns the arena's result and the coached side's."""
    arena = Arena(port=0, seed=arena_seed)
    task = asyncio.create_task(arena.serve())
    await arena.listening.wait()
    ours, _ = await asyncio.gather(play("127.0.0.1", arena.port, "coached", session),
                                   play("127.0.0.1", arena.port, "example", make_bot("example", 4)))
    return await task, ours


def test_templates_render_with_the_summary() -> None:
    prompts = load_hive_prompts(PROMPTS)
    strategy = new_strategy(1, 0)
    context = summary_context(strategy, "bees", 3, 10)
    text = prompts.render("plan", context)
    assert "player 1" in text and "Our score so far: 3" in text
    map_rows = [line for line in text.splitlines() if len(line) == 30 and set(line) <= set(".F#HhBbCc?")]
    assert len(map_rows) == 25
    assert map_rows[12][28] == "H" and map_rows[10][27] == "B"  # our bees are marked where they are


def test_a_template_naming_an_unknown_variable_fails_at_start(tmp_path: Path) -> None:
    for name in ("system", "plan", "direct_system", "move"):
        (tmp_path / f"{name}.j2").write_text((PROMPTS / f"{name}.j2").read_text())
    (tmp_path / "plan.j2").write_text("{{ scoer }}")
    with pytest.raises(PromptError, match="scoer"):
        load_hive_prompts(tmp_path)


def test_the_plan_schema_follows_strict_rules() -> None:
    schema = plan_json_schema()
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])
    Plan.model_validate(PLAN)


@pytest.mark.parametrize("bad", [
    {"bees": [{"bee": 7, "role": "forage", "target": None}], "aggression": 0.5},
    {"bees": [{"bee": 0, "role": "dance", "target": None}], "aggression": 0.5},
    {"bees": [{"bee": 0, "role": "raid", "target": [30, 2]}], "aggression": 0.5},
    {"bees": [], "aggression": 1.5},
    {"bees": [{"bee": 0, "role": "raid", "target": None}] * 2, "aggression": 0.5},
    {"bees": [], "aggression": 0.5, "extra": 1},
])
def test_invalid_plans_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Plan.model_validate(bad)


async def test_a_valid_plan_is_applied(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.ok_json(PLAN))
    coach = make_coach(fake_openai)
    assert coach.maybe_ask(0, 0)
    await finish(coach)
    assert coach.strategy.plan == Plan.model_validate(PLAN)
    assert coach.strategy.role_of(0) == "raid" and coach.strategy.role_of(1) == "explore"
    assert coach.strategy.role_of(2) == "forage" and coach.strategy.role_of(3) == "raid"  # defaults
    assert coach.stats.applied == 1
    sent = fake_openai.chat_requests[0].messages
    assert "Map (row 0 at the top" in sent[-1]["content"]


@pytest.mark.parametrize("reply, counter", [
    (FakeReply.ok_json({"bees": [{"bee": 9, "role": "raid", "target": None}], "aggression": 2}), "invalid"),
    (FakeReply.ok("not json at all"), "failed"),
    (FakeReply.http_error(500), "failed"),
    (FakeReply.garbage(), "failed"),
    (FakeReply.dropped(), "failed"),
])
async def test_bad_answers_are_ignored(fake_openai: FakeOpenAI, reply: FakeReply, counter: str) -> None:
    fake_openai.enqueue(reply)
    coach = make_coach(fake_openai)
    coach.maybe_ask(0, 0)
    await finish(coach)
    assert coach.strategy.plan is None
    assert getattr(coach.stats, counter) == 1


async def test_a_late_plan_is_ignored(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.stall(0.3, json.dumps(PLAN)))
    coach = make_coach(fake_openai, max_age_rounds=2)
    coach.maybe_ask(0, 0)
    coach.strategy.world.turn = 500  # the match moved on while the coach thought
    await finish(coach)
    assert coach.strategy.plan is None and coach.stats.late == 1


async def test_a_hanging_coach_is_abandoned(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.stall(5, json.dumps(PLAN)))
    coach = make_coach(fake_openai, timeout=0.2)
    coach.maybe_ask(0, 0)
    await finish(coach)
    assert coach.strategy.plan is None and coach.stats.failed == 1


async def test_a_plan_still_running_when_the_match_ends_is_recorded_as_such(fake_openai: FakeOpenAI,
                                                                          tmp_path: Path) -> None:
    """Not the endpoint's failure: the benchmark counts it apart by this cause."""
    fake_openai.enqueue(FakeReply.stall(5, json.dumps(PLAN)))
    transcript = Transcript(tmp_path, "ending")
    await transcript.open()
    coach = make_coach(fake_openai)
    coach.transcript = transcript
    coach.maybe_ask(0, 0)
    while not fake_openai.chat_requests:
        await asyncio.sleep(0.01)
    await coach.aclose()
    await coach.client.aclose()
    await transcript.close()
    calls = [r for line in transcript.path.read_text().splitlines()  # type: ignore[union-attr]
             if (r := json.loads(line))["kind"] == "llm"]
    assert coach.stats.abandoned == 1
    assert [(c["outcome"], c["cause"], c["error"]) for c in calls] == [
        ("cancelled", MATCH_OVER, "the match ended before the answer")]


async def test_one_call_at_a_time_and_only_when_due(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.stall(0.2, json.dumps(PLAN)), FakeReply.ok_json(PLAN))
    coach = make_coach(fake_openai, every_rounds=2)
    assert coach.maybe_ask(0, 0)
    assert not coach.maybe_ask(1, 0)  # still running
    await asyncio.wait_for(coach._task, 5)  # type: ignore[arg-type]
    assert not coach.maybe_ask(19, 0)  # not due before two rounds
    assert coach.maybe_ask(20, 0)
    await finish(coach)
    assert coach.stats.asked == 2


async def test_the_call_budget_is_respected(fake_openai: FakeOpenAI) -> None:
    coach = make_coach(fake_openai, max_calls=1, every_rounds=1)
    fake_openai.enqueue(FakeReply.ok_json(PLAN))
    assert coach.maybe_ask(0, 0)
    await asyncio.wait_for(coach._task, 5)  # type: ignore[arg-type]
    assert not coach.maybe_ask(1000, 0)
    await coach.client.aclose()


async def test_a_slow_failing_coach_never_delays_a_move(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """A whole match against the local arena (2 s forfeit) while every coach call takes 5 s or fails."""
    replies = [FakeReply.stall(5, json.dumps(PLAN)), FakeReply.http_error(503), FakeReply.dropped(delay=1),
               FakeReply.ok_json({"bees": "nope"}, delay=2)]
    fake_openai.responder = lambda body: replies[len(fake_openai.chat_requests) % len(replies)]
    llm = llm_for(fake_openai, attempts=2)
    transcript = Transcript(tmp_path, "coached")
    await transcript.open()
    session = HiveSession(team="coached", seed=3, transcript=transcript, llm=llm,
                          prompts=load_hive_prompts(PROMPTS), coach_config=CoachConfig(every_rounds=1, timeout=6))
    result, ours = await coached_match(session, arena_seed=21)
    await session.aclose()
    await llm.aclose()
    await transcript.close()
    assert result.forfeit is None and ours.ending == "gameover"
    assert result.winner == result.names.index("coached")
    assert session.coach is not None and session.coach.stats.asked >= 2
    assert session.coach.stats.applied == 0
    kinds = [json.loads(line)["kind"] for line in transcript.path.read_text().splitlines()]  # type: ignore[union-attr]
    assert "turn_end" in kinds and "coach_request" in kinds and "llm" in kinds and "seat" in kinds


async def test_direct_mode_uses_the_llm_move_or_falls_back_in_time(fake_openai: FakeOpenAI) -> None:
    state = empty_arena()
    v = parse_state(",".join(map(str, view(state))))
    session = HiveSession(team="d", seed=1, llm=llm_for(fake_openai), prompts=load_hive_prompts(PROMPTS),
                          direct=DirectConfig(enabled=True, budget_s=0.3))
    fake_openai.enqueue(FakeReply.ok_json({"action": "build", "direction": "E"}))
    answer = session.decide(v)
    assert not isinstance(answer, tuple)
    assert await answer == (2, 2)
    fake_openai.enqueue(FakeReply.stall(3, '{"action": "build", "direction": "E"}'))
    fallback = await session.decide(v)  # type: ignore[misc]
    assert fallback[0] in (0, 1) and session.direct_stats.late == 1
    assert session.llm is not None
    await session.llm.aclose()


def test_direct_answers_are_checked() -> None:
    assert parse_direct({"action": "guard", "direction": "sw"}) == (3, 5)
    assert parse_direct({"action": "fly", "direction": "N"}) is None
    assert parse_direct({"action": 1, "direction": "N"}) is None
    assert parse_direct(None) is None
    text = render_view(parse_state(",".join(map(str, view(empty_arena())))))
    assert text.splitlines()[3][3] == "B" and text.splitlines()[5][2] == "H"


async def test_the_coach_reasons_first_and_the_reasoning_reaches_the_record_only(fake_openai: FakeOpenAI) -> None:
    long = "The enemy walls our hive. " * 200
    fake_openai.enqueue(FakeReply.ok_json({"reasoning": long, **PLAN}))
    records: list[tuple[str, dict[str, object]]] = []
    coach = make_coach(fake_openai)
    coach.record = lambda kind, **data: records.append((kind, data))
    assert coach.maybe_ask(0, 0)
    await finish(coach)
    sent = fake_openai.chat_requests[0].json["response_format"]["json_schema"]["schema"]
    assert next(iter(sent["properties"])) == "reasoning"
    plan = coach.strategy.plan
    assert plan is not None and plan.reasoning == long[:2000]  # clipped, not refused
    assert [d["plan"]["reasoning"] for k, d in records if k == "coach_plan"] == [long[:2000]]  # type: ignore[index]
    # The next prompt shows the plan, not the reasoning behind it.
    assert "enemy walls" not in summary_context(coach.strategy, "bees", 0, 10)["current_plan"]
