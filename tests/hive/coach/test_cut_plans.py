"""The bee coach's plans and the direct moves against a forfeit, on every path an LLM answer takes
(issue 51): a reply salvaged from a cut at max_tokens is checked exactly as a whole one (the Plan
model, the direct move's parser and its never-feed-the-enemy check); a cut inside a deciding
value is never used; and whatever the coach's plans say, every command the client writes is one
the arena accepts, so the match is played out without a forfeit."""

from __future__ import annotations

import json
import random
from typing import Any

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.testing.random_schema import random_instance, request_schema
from agent.games.hive.coach.coach import load_hive_prompts
from agent.games.hive.config import CoachConfig, DirectConfig
from agent.games.hive.link.session import HiveSession
from agent.games.hive.protocol import parse_state
from agent.games.hive.rules import empty_arena, view
from agent.games.hive.strategy.plan import Plan
from tests.hive.coach.test_coach import PLAN, PROMPTS, coached_match, finish, llm_for, make_coach


def cut_in_the_note(plan: dict[str, Any]) -> str:
    """The reply of a model that ran out of tokens in its last free-text field."""
    whole = json.dumps({"reasoning": "they wall us in", **plan})
    return whole[: whole.rindex('"note"')] + '"note": "wall them in before they'


async def test_a_plan_salvaged_from_a_cut_reply_is_validated_then_applied(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply(content=cut_in_the_note(PLAN), finish_reason="length"))
    coach = make_coach(fake_openai)
    assert coach.maybe_ask(0, 0)
    await finish(coach)
    assert coach.stats.applied == 1 and len(fake_openai.chat_requests) == 1
    assert coach.strategy.plan is not None and coach.strategy.plan.note == "wall them in before they"
    assert coach.strategy.plan.bees == Plan.model_validate(PLAN).bees


async def test_a_salvaged_plan_that_is_not_a_plan_is_refused(fake_openai: FakeOpenAI) -> None:
    bad = {**PLAN, "bees": [{"bee": 9, "role": "raid", "target": [99, 99]}]}
    fake_openai.enqueue(FakeReply(content=cut_in_the_note(bad), finish_reason="length"))
    coach = make_coach(fake_openai)
    coach.maybe_ask(0, 0)
    await finish(coach)
    assert coach.strategy.plan is None and coach.stats.invalid == 1 and coach.stats.applied == 0


async def test_a_plan_cut_inside_its_orders_is_never_used(fake_openai: FakeOpenAI) -> None:
    whole = json.dumps({"reasoning": "x", **PLAN})
    cut = whole[: whole.index('"explore"') + 4]  # inside bee 1's role
    fake_openai.enqueue(FakeReply(content=cut, finish_reason="length"), FakeReply(content=cut, finish_reason="length"))
    coach = make_coach(fake_openai)
    coach.maybe_ask(0, 0)
    await finish(coach)
    assert coach.strategy.plan is None and coach.stats.applied == 0


async def test_a_direct_move_cut_inside_its_command_falls_back_to_the_strategy(fake_openai: FakeOpenAI) -> None:
    v = parse_state(",".join(map(str, view(empty_arena()))))
    session = HiveSession(team="d", seed=1, llm=llm_for(fake_openai), prompts=load_hive_prompts(PROMPTS),
                          direct=DirectConfig(enabled=True, budget_s=1.0))
    cut = '{"action": "build", "direction": "E'
    fake_openai.enqueue(FakeReply(content=cut, finish_reason="length"), FakeReply(content=cut, finish_reason="length"))
    command = await session.decide(v)  # type: ignore[misc]
    assert command != (2, 2) and session.direct_stats.used == 0 and session.direct_stats.invalid == 1
    assert session.llm is not None
    await session.llm.aclose()


async def test_a_match_coached_by_random_and_cut_plans_is_played_out_without_a_forfeit(fake_openai: FakeOpenAI) -> None:
    """Every coach call answers a random instance of the plan schema (any bee, role, target and
    aggression it allows), whole or cut at max_tokens: the plans that validate are applied, and the
    arena (which forfeits a bad command or a 2 s silence) sees a legal command every turn."""
    rng = random.Random(7)

    def respond(body: dict[str, Any]) -> FakeReply:
        schema = request_schema(body)
        plan = random_instance(schema, rng) if schema is not None else PLAN
        text = json.dumps(plan)
        if rng.random() < 0.5:
            return FakeReply(content=text[: max(1, len(text) - rng.randint(1, 12))], finish_reason="length")
        return FakeReply(content=text)

    fake_openai.responder = respond
    llm = llm_for(fake_openai)
    session = HiveSession(team="coached", seed=5, llm=llm, prompts=load_hive_prompts(PROMPTS),
                          coach_config=CoachConfig(every_rounds=1, timeout=5))
    result, ours = await coached_match(session, arena_seed=9)
    await session.aclose()
    await llm.aclose()
    assert result.forfeit is None and ours.ending == "gameover" and ours.bad_lines == 0
    assert session.coach is not None and session.coach.stats.asked >= 3
    stats = session.coach.stats
    assert stats.applied >= 1 and stats.asked == stats.applied + stats.invalid + stats.failed + stats.late \
        + stats.abandoned + (1 if session.coach.busy else 0)
