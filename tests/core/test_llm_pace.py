"""The endpoint's pace: a call that would end after its deadline is not sent, the fallback answers early."""

from __future__ import annotations

import asyncio

import pytest

from agent.core.config import LLMConfig
from agent.core.llm import LLMClient
from agent.core.llm.pace import MIN_SAMPLES, REMEASURE_AFTER, UNFINISHED_FACTOR, Pace
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply


def test_no_verdict_without_measurements() -> None:
    pace = Pace()
    assert pace.verdict(0.5).send
    pace.answered(10.0)
    assert pace.verdict(0.5).send, "one slow (cold-cache) call alone never skips the next"


def test_a_slow_endpoint_is_skipped_then_measured_again() -> None:
    pace = Pace()
    for _ in range(MIN_SAMPLES):
        pace.answered(10.0)
    skipped = [pace.verdict(5.0) for _ in range(REMEASURE_AFTER)]
    assert not any(v.send for v in skipped)
    assert skipped[0].expected_s == 10.0 and skipped[0].left_s == 5.0
    assert pace.verdict(5.0).send, "after a few skips one call goes out to see whether the endpoint got faster"
    assert not pace.verdict(5.0).send


def test_enough_time_or_no_deadline_sends() -> None:
    pace = Pace()
    for _ in range(4):
        pace.answered(3.0)
    assert pace.verdict(3.0).send
    assert pace.verdict(None).send


def test_the_median_follows_a_server_that_warmed_up() -> None:
    pace = Pace()
    for seconds in (30.0, 4.0, 5.0):
        pace.answered(seconds)
    assert pace.expected() == 5.0
    assert pace.verdict(8.0).send


def test_an_unfinished_call_counts_only_as_longer() -> None:
    pace = Pace()
    pace.answered(2.0)
    pace.answered(2.0)
    pace.unfinished(0.1)  # a cancel soon after sending: no sign of an endpoint faster than measured
    assert list(pace.samples) == [2.0, 2.0, 2.0]
    pace.unfinished(8.0)  # given up at the deadline: it would have taken longer
    assert list(pace.samples)[-1] == 8.0 * UNFINISHED_FACTOR


def test_calls_cut_at_a_deadline_a_little_earlier_each_time_still_add_up() -> None:
    pace = Pace()  # each call reached the client a little later, so was cut a little sooner
    pace.unfinished(0.6)
    pace.unfinished(0.55)
    assert len(pace.samples) == MIN_SAMPLES and pace.expected() == 0.6 * UNFINISHED_FACTOR
    assert not pace.verdict(0.55).send


def _config(fake: FakeOpenAI, timeout: float = 5.0) -> LLMConfig:
    return LLMConfig(base_url=fake.base_url, model="m", request_timeout=timeout, prime=False,
                     probe_dialect=False, api_key_required=False)


@pytest.mark.asyncio
async def test_the_client_skips_a_call_that_cannot_end_in_time() -> None:
    with FakeOpenAI(default_content='{"a": 1}', default_delay=0.3) as fake:
        async with LLMClient(_config(fake), None) as client:
            loop = asyncio.get_running_loop()
            for _ in range(MIN_SAMPLES):
                assert (await client.complete_json([{"role": "user", "content": "x"}], {"type": "object"},
                                                   deadline=loop.time() + 5)).ok
            sent = len(fake.chat_requests)
            result = await client.complete_json([{"role": "user", "content": "x"}], {"type": "object"},
                                                deadline=loop.time() + 0.05)
            assert result.skipped and not result.ok and "not asked" in (result.error or "")
            assert result.expected_s is not None and result.expected_s >= 0.3
            assert len(fake.chat_requests) == sent, "nothing was sent"
            chat = await client.complete_json([{"role": "user", "content": "x"}], {"type": "object"},
                                              priority="chat", deadline=loop.time() + 0.05)
            assert not chat.skipped, "chats are not paced: nobody's turn waits on them"


@pytest.mark.asyncio
async def test_calls_without_a_deadline_do_not_make_the_decisions_look_slow() -> None:
    """One client, a bee coach's long plans (no deadline) and its quick direct moves (a deadline)."""
    slow, quick = FakeReply.ok_json({"a": 1}, delay=0.6), FakeReply.ok_json({"a": 1}, delay=0.01)
    with FakeOpenAI() as fake:
        async with LLMClient(_config(fake), None) as client:
            loop = asyncio.get_running_loop()
            for reply in (quick, quick, slow, slow, slow):
                fake.enqueue(reply)
            for _ in range(MIN_SAMPLES):
                assert (await client.complete_json([{"role": "user", "content": "move"}], {"type": "object"},
                                                   deadline=loop.time() + 5)).ok
            for _ in range(3):
                assert (await client.complete_json([{"role": "user", "content": "plan"}], {"type": "object"})).ok
            assert client.endpoint.pace.expected() is not None and client.endpoint.pace.expected() < 0.3
            fake.enqueue(quick)
            move = await client.complete_json([{"role": "user", "content": "move"}], {"type": "object"},
                                              deadline=loop.time() + 0.4)
            assert move.ok and not move.skipped


@pytest.mark.asyncio
async def test_a_call_cancelled_at_its_deadline_slows_the_pace() -> None:
    with FakeOpenAI(default_content='{"a": 1}', default_delay=1.0) as fake:
        async with LLMClient(_config(fake), None) as client:
            loop = asyncio.get_running_loop()
            for _ in range(MIN_SAMPLES):
                deadline = loop.time() + 0.2
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout_at(deadline):
                        await client.complete_json([{"role": "user", "content": "x"}], {"type": "object"},
                                                   deadline=deadline)
            result = await client.complete_json([{"role": "user", "content": "x"}], {"type": "object"},
                                                deadline=loop.time() + 0.2)
            assert result.skipped
