"""A server that answers one request at a time and finishes every request it began (llama-cpp-python's):
known by its model list, a decision's request there runs to the decision's deadline and is never sent
twice, and a decision that comes while the start-up priming is still read there is not sent behind it."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.llm.sample import LLMSample
from agent.core.llm.window import ServerFacts, is_llama_cpp_python, read_server
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}
MESSAGES = [{"role": "system", "content": "You decide. " * 40}, {"role": "user", "content": "Your turn."}]


def _config(fake: FakeOpenAI, **llm: Any) -> LLMConfig:
    defaults: dict[str, Any] = {"base_url": fake.base_url, "model": "m", "api_key_required": False,
                                "request_timeout": 0.3, "retry": RetryConfig(max_attempts=3, initial_backoff=0.01)}
    return LLMConfig(**{**defaults, **llm})


@pytest.mark.parametrize(("body", "expected"), [
    ({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "me", "permissions": []}]}, True),
    ({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm", "max_model_len": 8192}]}, False),
    ({"object": "list", "data": [{"id": "m", "owned_by": "me"}]}, False),  # no permissions list
    ({"object": "list", "data": []}, False),
    ({"data": "me"}, False),
    ([], False),
    (None, False),
])
def test_llama_cpp_python_is_known_by_its_model_list(body: Any, expected: bool) -> None:
    assert is_llama_cpp_python(body) is expected


async def test_the_server_read_tells_llama_cpp_python_from_the_others() -> None:
    for kind, expected in (({"llama_cpp_python": True}, ServerFacts(finishes_abandoned=True)),
                           ({"llama_props": True}, ServerFacts(4096, llama_server=True)),
                           ({}, ServerFacts())):
        async with FakeOpenAI(**kind) as fake:  # type: ignore[arg-type]
            assert await read_server(fake.base_url, "m", {}) == expected, kind


async def test_a_decision_there_runs_to_its_deadline_not_to_request_timeout() -> None:
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=0.8))
        async with LLMClient(_config(fake), None) as client:
            loop = asyncio.get_running_loop()
            result = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 5)
            assert client.endpoint.finishes_abandoned
    assert result.ok and result.data == {"a": 1}, result.error
    assert [a.status for a in result.attempts] == [200]
    assert len(fake.chat_requests) == 1


async def test_elsewhere_request_timeout_still_bounds_each_request_and_a_timeout_is_retried() -> None:
    async with FakeOpenAI() as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=0.8), FakeReply.ok_json({"a": 2}))
        async with LLMClient(_config(fake), None) as client:
            loop = asyncio.get_running_loop()
            result = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 5)
            assert not client.endpoint.finishes_abandoned
    assert result.ok and result.data == {"a": 2}, result.error
    assert [a.status for a in result.attempts] == [None, 200]  # cut at 0.3 s, then asked again


async def test_a_request_given_up_there_is_not_sent_again_behind_itself() -> None:
    """Without a deadline request_timeout holds there too; after a timeout the server is still busy
    with the request, so the call ends instead of queueing a copy behind it."""
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=0.8), FakeReply.ok_json({"a": 2}))
        async with LLMClient(_config(fake), None) as client:
            result = await client.complete_json(MESSAGES, SCHEMA)
            assert not result.ok and "timed out" in (result.error or "").lower(), result.error
            assert [a.status for a in result.attempts] == [None]
            # The faithful part of the fake: the next request waits for the one given up.
            started = asyncio.get_running_loop().time()
            after = await client.complete_json(MESSAGES, SCHEMA, deadline=started + 5)
            assert after.ok and after.data == {"a": 2}
            assert asyncio.get_running_loop().time() - started >= 0.4
    assert len(fake.chat_requests) == 2


async def test_a_decision_during_the_priming_there_is_not_sent_behind_it() -> None:
    async with FakeOpenAI(llama_cpp_python=True, prime_delay=1.0, default_content='{"a": 3}') as fake:
        async with LLMClient(_config(fake, request_timeout=5), None) as client:
            loop = asyncio.get_running_loop()
            client.prime_soon(LLMSample(MESSAGES, SCHEMA, "decide"))
            while not client.endpoint.server_slot.in_flight:  # the priming is at the server
                await asyncio.sleep(0.01)
            early = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.3)
            assert early.skipped and not early.ok and "start-up prompt" in (early.error or "")
            assert fake.chat_requests == []
            later = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 5)
            assert later.ok and later.data == {"a": 3}, later.error
            assert client._prime_task is not None and client._prime_task.done()
    assert len(fake.chat_requests) == 1


async def test_a_decision_during_the_priming_elsewhere_goes_at_once() -> None:
    async with FakeOpenAI(prime_delay=1.0, default_content='{"a": 3}') as fake:
        async with LLMClient(_config(fake, request_timeout=5), None) as client:
            loop = asyncio.get_running_loop()
            client.prime_soon(LLMSample(MESSAGES, SCHEMA, "decide"))
            result = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.5)
            assert result.ok and result.data == {"a": 3}, result.error
            assert client._prime_task is not None and not client._prime_task.done()


async def test_the_priming_there_is_not_cut_at_request_timeout() -> None:
    async with FakeOpenAI(llama_cpp_python=True, prime_delay=0.8) as fake:
        async with LLMClient(_config(fake), None) as client:
            result = await client.prime(LLMSample(MESSAGES, SCHEMA, "decide"))
    assert result.ok and result.error is None
    assert [a.status for a in result.attempts] == [200]


async def test_a_request_given_up_there_keeps_the_server_and_the_next_decision_is_not_sent_behind_it() -> None:
    """The first decision gives up at its deadline; the server still answers it, so a second decision
    whose deadline comes before that is not sent at all, and nothing ever queues on the server."""
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=1.0), FakeReply.ok_json({"a": 2}))
        async with LLMClient(_config(fake, request_timeout=5), None) as client:
            loop = asyncio.get_running_loop()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.3):  # the game's own deadline ends the first decision
                    await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.3)
            second = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.2)
            assert second.skipped and "an earlier request" in (second.error or ""), second.error
            assert len(fake.chat_requests) == 1
            third = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 5)
            assert third.ok and third.data == {"a": 2}, third.error
            first, after = fake.chat_requests
            assert after.received_at - first.received_at >= 0.9, "sent once the server had answered the first"
    assert fake.max_in_flight == 1


async def test_there_plays_go_before_chats_and_wait_here_not_in_the_servers_queue() -> None:
    async with FakeOpenAI(llama_cpp_python=True, default_content='{"a": 0}') as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=0.5))
        async with LLMClient(_config(fake, request_timeout=5), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()
            busy = asyncio.create_task(client.complete_json(MESSAGES, SCHEMA))
            await fake.wait_for_requests(1)
            chat = asyncio.create_task(client.complete_json([{"role": "user", "content": "chat"}], SCHEMA,
                                                            priority="chat"))
            while not client.endpoint.server_slot.waiting:  # the chat waits for the server before the play asks
                await asyncio.sleep(0.01)
            play = asyncio.create_task(client.complete_json([{"role": "user", "content": "play"}], SCHEMA,
                                                            deadline=loop.time() + 5))
            results = await asyncio.gather(busy, chat, play)
    assert all(r.ok for r in results), [r.error for r in results]
    assert [r.messages[-1]["content"] for r in fake.chat_requests[1:]] == ["play", "chat"]
    assert fake.max_in_flight == 1


async def test_closing_the_client_ends_a_request_the_server_still_answers() -> None:
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=30))
        client = LLMClient(_config(fake, request_timeout=0.2), None)
        result = await client.complete_json(MESSAGES, SCHEMA)
        assert not result.ok and client.endpoint.server_slot.in_flight == 1  # still held: the server works on
        await asyncio.wait_for(client.aclose(), 5)
        assert client.endpoint.server_slot.in_flight == 0


async def test_the_message_names_the_time_limit_the_request_really_had() -> None:
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=3))
        async with LLMClient(_config(fake, request_timeout=0.2), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()
            result = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 1.0)
    assert not result.ok and result.error is not None
    said = re.search(r"timed out after ([\d.]+)s \(1 attempt\)", result.error)
    assert said is not None, result.error
    assert 0.5 < float(said.group(1)) <= 1.0, "the time to the deadline, not request_timeout's 0.2 s"


async def test_a_miss_costs_one_deadline_once_the_next_decisions_do_not_wait_for_the_busy_server() -> None:
    """Issue 69: a decision given up at its deadline leaves llama-cpp-python's server busy with it; the
    next decisions are not sent behind it and do not wait out their own deadlines for the server either."""
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=5.0))
        async with LLMClient(_config(fake, request_timeout=30), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(1.0):
                    await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 1.0)
            for _ in range(2):  # turns with the same time as the one missed: no call can end in it
                started = loop.time()
                later = await client.complete_json(MESSAGES, SCHEMA, deadline=started + 1.0)
                assert later.skipped, later.error
                assert loop.time() - started < 0.3, "the turn did not wait out its deadline for the busy server"
            assert len(fake.chat_requests) == 1


async def test_a_benched_model_costs_the_turn_no_wait_for_the_servers_slot() -> None:
    """Benched after two misses: the next decision is skipped at once although the server's slot is
    still held by a request given up (the order that made issue 69's third turn wait 84 s)."""
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok_json({"a": 1}, delay=5.0))
        async with LLMClient(_config(fake, request_timeout=30), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()
            client.endpoint.pace.unfinished(0.5, missed=True)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.5)
            assert client.endpoint.pace.benched
            started = loop.time()
            benched = await client.complete_json(MESSAGES, SCHEMA, deadline=started + 3.0)
            assert benched.skipped and "missed its time" in (benched.error or ""), benched.error
            assert loop.time() - started < 0.2


async def test_a_first_decision_waits_for_a_long_priming_only_half_its_time() -> None:
    """Nothing measured yet: the first turn waits for the start-up priming at most until half its time
    is left for its own call, then its fallback plays (issue 69: the simulator's first turn waited 81
    of its 90 s for a priming read at 20 tokens a second)."""
    async with FakeOpenAI(llama_cpp_python=True, prime_delay=5.0, default_content='{"a": 3}') as fake:
        async with LLMClient(_config(fake, request_timeout=5), None) as client:
            loop = asyncio.get_running_loop()
            client.prime_soon(LLMSample(MESSAGES, SCHEMA, "decide"))
            while not client.endpoint.server_slot.in_flight:
                await asyncio.sleep(0.01)
            started = loop.time()
            first = await client.complete_json(MESSAGES, SCHEMA, deadline=started + 2.0)
            waited = loop.time() - started
    assert first.skipped and "start-up prompt" in (first.error or ""), first.error
    assert 0.8 <= waited <= 1.3, f"waited {waited:.2f} s of its 2 s for the priming"
