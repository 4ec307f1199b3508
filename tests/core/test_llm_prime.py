"""Priming: the dialect found and one decision prompt sent with max_tokens 1 before play, so a local
server has the prompt's unchanging start cached and a refused request form is paid for at start."""

from __future__ import annotations

import asyncio

from agent.core.config import LLMConfig
from agent.core.llm import LLMClient
from agent.core.llm.probe import PROBE_HEADER
from agent.core.llm.sample import LLMSample
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply

SCHEMA = {"type": "object", "properties": {"move": {"type": "string", "enum": ["a", "b"]}}, "required": ["move"],
          "additionalProperties": False}
SYSTEM = "You are the partner in a tangram game. " * 30
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Your turn. " * 20}]


def primes(fake: FakeOpenAI) -> list:
    return [r for r in fake.probe_requests if r.headers.get(PROBE_HEADER.lower()) == "prime"]


async def test_the_prime_sends_the_prompt_once_with_one_token_apart_from_play() -> None:
    async with FakeOpenAI() as fake:
        async with LLMClient(LLMConfig(base_url=fake.base_url, api_key_required=False), None) as client:
            result = await client.prime(LLMSample(MESSAGES, SCHEMA, "move"))
        assert result.ok and result.error is None and fake.chat_requests == []  # not a play
        (prime,) = primes(fake)
        assert prime.json["max_tokens"] == 1 and prime.messages[0]["content"].startswith(SYSTEM)
        assert prime.json["response_format"]["type"] == "json_schema"


async def test_a_refused_form_is_found_by_the_prime_not_by_the_first_decision() -> None:
    async with FakeOpenAI(reject_response_formats={"json_schema"}) as fake:
        async with LLMClient(LLMConfig(base_url=fake.base_url, api_key_required=False), None) as client:
            client.prime_soon(LLMSample(MESSAGES, SCHEMA, "move"))
            assert client._prime_task is not None
            await client._prime_task
            fake.enqueue(FakeReply.ok_json({"move": "a"}))
            result = await client.complete_json(MESSAGES, SCHEMA, "move")
        assert result.data == {"move": "a"}
        assert [(a.mode, a.status) for a in result.attempts] == [("json_object_schema", 200)]
        assert client.refused_requests == 1 and len(primes(fake)) == 2  # refused, then the llama.cpp form


async def test_no_prime_for_openai_itself_or_when_switched_off() -> None:
    async with LLMClient(LLMConfig(base_url="https://api.openai.com/v1"), "sk-test") as client:
        client.prime_soon(LLMSample(MESSAGES, SCHEMA, "move"))
        assert client._prime_task is None
    async with FakeOpenAI() as fake:
        async with LLMClient(LLMConfig(base_url=fake.base_url, api_key_required=False, prime=False), None) as client:
            client.prime_soon(LLMSample(MESSAGES, SCHEMA, "move"))
            assert client._prime_task is None
        assert fake.probe_requests == []


async def test_closing_the_client_cancels_a_prime_still_waiting() -> None:
    async with FakeOpenAI() as fake:
        config = LLMConfig(base_url=fake.base_url, api_key_required=False, request_timeout=30, max_in_flight=1)
        client = LLMClient(config, None)
        async with client.gate.slot("play"):  # the only slot is taken: the prime waits for it
            client.prime_soon(LLMSample(MESSAGES, SCHEMA, "move"))
            task = client._prime_task
            assert task is not None
            await asyncio.sleep(0.05)
            assert not task.done() and fake.probe_requests == []
            await asyncio.wait_for(client.aclose(), 5)
            assert task.cancelled()


async def test_where_the_full_prompt_does_not_fit_the_compact_one_is_primed() -> None:
    short = [{"role": "system", "content": "You are the partner."}, {"role": "user", "content": "Your turn."}]
    async with FakeOpenAI(context_window=400, tells_window=True) as fake:
        async with LLMClient(LLMConfig(base_url=fake.base_url, api_key_required=False, max_tokens=64), None) as client:
            result = await client.prime(LLMSample(MESSAGES, SCHEMA, "move", compact=short))
        assert result.ok and result.prompt_form == "compact"
        (prime,) = primes(fake)
        assert prime.messages[0]["content"] == "You are the partner."


async def test_a_chat_is_not_sent_while_a_one_at_a_time_server_reads_the_start_up_prompt() -> None:
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.prime_delay = 30.0  # a CPU reading the whole play prompt
        client = LLMClient(LLMConfig(base_url=fake.base_url, model="m", api_key_required=False), None)
        try:
            await client.ensure_dialect()
            assert client.answers_within(20.0)
            client.prime_soon(LLMSample(messages=[{"role": "user", "content": "a long play prompt"}],
                                        schema={"type": "object"}, schema_name="move"))
            assert not client.answers_within(20.0), "a chat would queue behind the priming"
        finally:
            await client.aclose()
        assert client.answers_within(20.0)
