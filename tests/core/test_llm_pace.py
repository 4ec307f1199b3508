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


def test_two_missed_deadlines_in_a_row_bench_the_endpoint_until_a_background_measure_fits() -> None:
    from agent.core.llm.pace import MISSES_TO_BENCH

    pace = Pace()
    pace.unfinished(5.0, missed=True)
    assert not pace.benched and pace.verdict(5.0).send
    pace.answered(1.0)  # an answer in between: the misses were not in a row
    for _ in range(MISSES_TO_BENCH):
        pace.unfinished(5.0, missed=True)
    assert pace.benched
    assert all(not pace.verdict(5.0).send for _ in range(10)), "benched: no decision is sent, however many skipped"
    assert not pace.answers_within(60.0)
    assert not pace.remeasured(7.0) and pace.benched
    assert pace.remeasured(3.0) and not pace.benched
    assert pace.verdict(5.0).send and list(pace.samples) == [3.0]


def test_a_cancel_well_before_the_deadline_is_no_miss() -> None:
    pace = Pace()
    for _ in range(5):
        pace.unfinished(0.2, missed=False)
    assert not pace.benched


async def test_a_model_too_slow_for_its_turns_costs_no_more_waits_and_is_asked_again_once_it_is_fast(
        fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent.core.llm.client as client_module

    monkeypatch.setattr(client_module, "REMEASURE_FIRST_S", 0.05)
    fake_openai.default_delay = 3.0
    client = LLMClient(LLMConfig(base_url=fake_openai.base_url, model="m", probe_dialect=False, prime=False), "k")
    loop = asyncio.get_running_loop()
    messages = [{"role": "user", "content": "Your turn."}]
    try:
        async def decide(seconds: float):  # type: ignore[no-untyped-def]
            deadline = loop.time() + seconds
            async with asyncio.timeout_at(deadline):
                return await client.complete_text(messages, deadline=deadline)

        for _ in range(2):  # two turns given up at their deadline
            with pytest.raises(TimeoutError):
                await decide(0.4)
        assert client.endpoint.pace.benched
        assert not client.answers_within(10.0), "a chat is not sent to a benched model"
        started = loop.time()
        skipped = await decide(0.4)
        assert skipped.skipped and "missed its time" in (skipped.error or "")
        assert loop.time() - started < 0.2, "a benched model costs the turn no wait"
        fake_openai.default_delay = 0.0  # the model got fast again (a freed CPU)
        async with asyncio.timeout(20):
            while client.endpoint.pace.benched:
                await decide(0.4)  # each skipped decision may start a background measurement
                await asyncio.sleep(0.05)
        answered = await decide(2.0)
        assert answered.ok and not answered.skipped
        assert client.answers_within(10.0)
    finally:
        await client.aclose()


def test_one_decision_longer_than_a_chat_can_wait_sends_the_chat_elsewhere() -> None:
    pace = Pace()
    assert pace.answers_within(20.0), "nothing measured: the model is asked"
    pace.unfinished(80.0, missed=True)  # a single decision given up after 80 s
    assert not pace.benched and pace.verdict(80.0).send, "one miss does not bench decisions"
    assert not pace.answers_within(20.0), "but a chat does not wait 20 s for a model that took 100"
    pace.answered(5.0)
    pace.answered(5.0)
    assert pace.answers_within(20.0)


def test_a_chat_goes_to_a_model_whose_chats_are_answered_in_time_though_a_decision_took_longer() -> None:
    """Issue 69's chat goal: chats are measured apart from decisions; the model is asked when either shows
    it answers in time, never while benched."""
    pace = Pace()
    pace.answered(0.5)
    pace.unfinished(40.0, missed=True)  # one turn given up: the decisions' median is now far over 3 s
    assert not pace.answers_within(3.0), "no chat measured: the decisions speak"
    pace.chat_answered(0.8)
    assert pace.answers_within(3.0), "its chats are answered in time"
    for _ in range(3):
        pace.chat_unfinished(3.0)
    assert not pace.answers_within(3.0), "its chats got slow, and so are its decisions"
    for _ in range(4):
        pace.answered(0.5)
    assert pace.answers_within(3.0), "its decisions show it is fast again: a chat is asked again"
    assert pace.verdict(1.0).send, "chat times never skip a decision"
    pace.unfinished(40.0, missed=True)
    pace.unfinished(40.0, missed=True)
    assert pace.benched and not pace.answers_within(3.0)
