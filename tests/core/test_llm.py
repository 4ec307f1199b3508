"""LLMClient against the fake OpenAI-compatible server, through the real openai SDK and real HTTP."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
import urllib.request

import openai
import pytest

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient, LLMResult, extract_json
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply

SCHEMA = {
    "type": "object",
    "properties": {"piece": {"type": "string"}, "chat": {"type": "string"}},
    "required": ["piece", "chat"],
    "additionalProperties": False,
}
MESSAGES = [{"role": "system", "content": "You play tangram."}, {"role": "user", "content": "Your turn."}]
ANSWER = {"piece": "small triangle 1", "chat": "I'll put it on the left."}


def bounded(*, grammar: bool) -> dict:
    """SCHEMA as the client sends it with the default bounds: each free-text field says its length
    ('*': 200, chat: 120); a grammar server also gets it as maxLength."""
    out = json.loads(json.dumps(SCHEMA))
    for name, n in (("piece", 200), ("chat", 120)):
        out["properties"][name]["description"] = f"At most {n} characters."
        if grammar:
            out["properties"][name]["maxLength"] = n
    return out


def make_client(fake: FakeOpenAI, *, key: str | None = "sk-test", max_attempts: int = 3,
                initial_backoff: float = 0.0, max_backoff: float = 8.0, **llm: object) -> LLMClient:
    retry = RetryConfig(max_attempts=max_attempts, initial_backoff=initial_backoff, max_backoff=max_backoff)
    config = LLMConfig(base_url=fake.base_url, model="gpt-test", retry=retry, **llm)
    return LLMClient(config, key)


@pytest.fixture
async def client(fake_openai: FakeOpenAI):
    llm = make_client(fake_openai)
    yield llm
    await llm.aclose()


# ---- success paths --------------------------------------------------------------------------------


async def test_structured_reply(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.ok_json(ANSWER, prompt_tokens=123, completion_tokens=45))
    result = await client.complete_json(MESSAGES, SCHEMA, "tangram move")

    assert result.ok and result.error is None
    assert result.data == ANSWER
    assert json.loads(result.text) == ANSWER
    assert (result.prompt_tokens, result.completion_tokens) == (123, 45)
    assert result.model == "gpt-test"
    assert not result.fell_back_to_text
    assert [(a.mode, a.status, a.error) for a in result.attempts] == [("json_schema", 200, None)]
    assert result.latency_s > 0

    sent = fake_openai.chat_requests[0].json
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "tangram_move", "schema": bounded(grammar=False), "strict": True}}
    assert sent["model"] == "gpt-test"
    assert sent["messages"] == MESSAGES
    # max_tokens sized to the bounded schema (twice its need: OpenAI's strict mode cannot enforce the bounds)
    assert 100 < sent["max_tokens"] < 600 and sent["temperature"] == 0.2


async def test_complete_text(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.ok("Nice move!"))
    result = await client.complete_text(MESSAGES)
    assert result.ok and result.text == "Nice move!" and result.data is None
    assert "response_format" not in fake_openai.chat_requests[0].json


async def test_json_object_mode_describes_schema(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.ok_json(ANSWER))
    async with make_client(fake_openai, structured_output="json_object") as llm:
        result = await llm.complete_json(MESSAGES, SCHEMA, "move")
    assert result.data == ANSWER
    sent = fake_openai.chat_requests[0].json
    assert sent["response_format"] == {"type": "json_object"}
    system = sent["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You play tangram.")
    assert json.dumps(bounded(grammar=False), separators=(",", ":")) in system["content"]
    assert MESSAGES[0]["content"] == "You play tangram."  # the caller's list is not modified


async def test_images_reach_server_as_data_urls(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    url = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJ"
           "RU5ErkJggg==")
    messages = [MESSAGES[0], {"role": "user", "content": [
        {"type": "text", "text": "The board:"},
        {"type": "image_url", "image_url": {"url": url, "detail": "auto"}}]}]
    fake_openai.enqueue(FakeReply.ok_json(ANSWER))
    result = await client.complete_json(messages, SCHEMA, "move")
    assert result.ok
    request = fake_openai.chat_requests[0]
    assert request.image_urls() == [url]
    assert request.messages[1]["content"][1]["image_url"]["detail"] == "auto"


async def test_base_url_unset_uses_openai_base_url(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    async with LLMClient(LLMConfig(model="m"), "sk-env") as llm:
        result = await llm.complete_text(MESSAGES)
    assert result.ok and len(fake_openai.chat_requests) == 1


async def test_no_key_sends_placeholder_not_environment_key(fake_openai: FakeOpenAI,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment-should-not-be-sent")
    async with make_client(fake_openai, key=None, api_key_required=False) as llm:
        result = await llm.complete_text(MESSAGES)
    assert result.ok
    auth = fake_openai.chat_requests[0].authorization
    assert auth == "Bearer no-key-required"


# ---- structured output fallback -------------------------------------------------------------------


async def test_json_schema_refused_steps_to_the_llama_cpp_form_and_remembers(fake_openai: FakeOpenAI,
                                                                             client: LLMClient) -> None:
    fake_openai.reject_response_formats = {"json_schema"}
    fake_openai.enqueue(FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")

    assert result.ok, result.error
    assert result.data == ANSWER and not result.fell_back_to_text
    assert [(a.mode, a.status) for a in result.attempts] == [("json_schema", 400), ("json_object_schema", 200)]
    first, second = fake_openai.chat_requests
    assert first.response_format_type == "json_schema"
    assert second.json["response_format"] == {"type": "json_object", "schema": bounded(grammar=True)}
    assert '"additionalProperties":false' in second.messages[0]["content"]  # and told in words
    assert client.structured_output == "json_object_schema" and client.refused_requests == 1
    assert result.endpoint is not None and result.endpoint["structured_output"] == "json_object_schema"

    # The next call does not pay for the refused request again.
    fake_openai.enqueue(FakeReply.ok_json(ANSWER))
    again = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert again.data == ANSWER and len(fake_openai.chat_requests) == 3
    assert fake_openai.chat_requests[2].json["response_format"]["type"] == "json_object"


async def test_every_rung_refused_ends_in_plain_text(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.reject_response_formats = {"json_schema", "json_object"}
    fake_openai.enqueue(FakeReply.ok(
        'Sure! Here is my move:\n```json\n{"piece": "square", "chat": "Top {left},",}\n```\nGood luck!'))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")

    assert result.ok, result.error
    assert result.data == {"piece": "square", "chat": "Top {left},"}
    assert result.fell_back_to_text
    assert [(a.mode, a.status) for a in result.attempts] == [
        ("json_schema", 400), ("json_object_schema", 400), ("json_object", 400), ("text", 200)]
    assert "response_format" not in fake_openai.chat_requests[-1].json
    assert client.structured_output == "text"


async def test_a_5xx_naming_response_format_is_a_refusal_not_a_retry(fake_openai: FakeOpenAI,
                                                                    client: LLMClient) -> None:
    # What llama-cpp-python answers to json_schema: a 500 holding pydantic's validation error.
    said = ("[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]")
    fake_openai.enqueue(FakeReply.http_error(500, said), FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok and result.data == ANSWER
    assert [(a.mode, a.status) for a in result.attempts] == [("json_schema", 500), ("json_object_schema", 200)]


async def test_a_5xx_without_such_words_stays_a_server_error_to_retry(fake_openai: FakeOpenAI,
                                                                     client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.http_error(500, "model is loading"), FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok
    assert [(a.mode, a.status) for a in result.attempts] == [("json_schema", 500), ("json_schema", 200)]
    assert client.structured_output == "json_schema" and client.refused_requests == 0


async def test_unexplained_400_tries_text_once_without_remembering(fake_openai: FakeOpenAI,
                                                                  client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.http_error(400, "Invalid request"), FakeReply.http_error(400, "Invalid request"))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.error == "HTTP 400 from provider: bad request (1 attempt): Invalid request"
    assert [a.mode for a in result.attempts] == ["json_schema", "text"]
    assert client.structured_output == "json_schema"  # the text try failed too: nothing learnt


async def test_rejected_temperature_is_left_out_from_then_on(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.http_error(
        400, "Unsupported value: 'temperature' does not support 0.2 with this model.", param="temperature"))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok and not result.fell_back_to_text
    await client.complete_json(MESSAGES, SCHEMA, "move")
    first, second, third = fake_openai.chat_requests
    assert "temperature" in first.json and "temperature" not in second.json and "temperature" not in third.json
    assert second.response_format_type == "json_schema"


async def test_garbage_reply_gives_error_not_exception(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.ok("I think the triangle goes left."))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.data is None
    assert result.error == "reply is not a JSON object: 'I think the triangle goes left.'"
    assert result.text == "I think the triangle goes left."
    assert len(fake_openai.chat_requests) == 1


async def test_truncated_json_reply_reports_cut_off(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.ok('{"piece": "square", "chat": {"text": "I will', finish_reason="length"))
    async with make_client(fake_openai, bound_answers=False) as llm:
        result = await llm.complete_json(MESSAGES, SCHEMA, "move")
    assert result.data is None
    assert result.error == "reply cut off at max_tokens=600 before the JSON ended"
    assert len(fake_openai.chat_requests) == 1


async def test_an_answer_cut_in_its_free_text_is_salvaged(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.ok('{"piece": "square", "chat": "I will put it ne', finish_reason="length"))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok and result.salvaged and not result.reasked
    assert result.data == {"piece": "square", "chat": "I will put it ne"}
    assert len(fake_openai.chat_requests) == 1


# A decision field is one the model does not write freely (an enum here); a cut inside it is never played.
PICK = {**SCHEMA, "properties": {"piece": {"type": "string", "enum": ["square", "small triangle 1"]},
                                 "chat": {"type": "string"}}}


async def test_an_answer_cut_in_its_decision_is_asked_again_once_with_tighter_bounds(
        fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.ok('{"chat": "' + "x" * 60 + '", "piece": "squ', finish_reason="length"))
    fake_openai.enqueue(FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, PICK, "move")
    assert result.ok and result.reasked and not result.salvaged and result.data == ANSWER
    first, second = (r.json for r in fake_openai.chat_requests)
    assert second["max_tokens"] < first["max_tokens"]
    said = second["response_format"]["json_schema"]["schema"]["properties"]["chat"]["description"]
    assert said == "At most 60 characters."  # half the chat bound


async def test_a_second_cut_is_not_asked_again(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    for _ in range(2):
        fake_openai.enqueue(FakeReply.ok('{"chat": "hi", "piece": "squ', finish_reason="length"))
    result = await client.complete_json(MESSAGES, PICK, "move")
    assert not result.ok and result.reasked and len(fake_openai.chat_requests) == 2
    assert result.error is not None and "cut off at max_tokens" in result.error


async def test_non_json_http_body_is_an_error(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.garbage("<html>oops</html>"))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.data is None
    assert result.error is not None and result.error.startswith("malformed response from provider")


async def test_empty_reply_is_an_error(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.ok(""))
    result = await client.complete_text(MESSAGES)
    assert result.error == "empty reply from model"


# ---- retries ---------------------------------------------------------------------------------------


async def test_500_then_success(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.http_error(500, "boom"), FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok and result.data == ANSWER
    assert [(a.status, a.error) for a in result.attempts] == [(500, "InternalServerError"), (200, None)]
    assert len(fake_openai.chat_requests) == 2


async def test_5xx_gives_up_after_max_attempts(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(*[FakeReply.http_error(503, "overloaded")] * 5)
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.error == "HTTP 503 from provider: server error (3 attempts): overloaded"
    assert len(fake_openai.chat_requests) == 3


async def test_dropped_and_truncated_connections_are_retried(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.dropped(), FakeReply.truncated(), FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok and result.data == ANSWER
    assert [a.error for a in result.attempts] == ["APIConnectionError", "APIConnectionError", None]


async def test_connection_refused_is_bounded(fake_openai: FakeOpenAI) -> None:
    port = fake_openai.port
    await fake_openai.stop()
    config = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", retry=RetryConfig(max_attempts=2, initial_backoff=0))
    async with LLMClient(config, "sk-test") as llm:
        result = await llm.complete_text(MESSAGES)
    assert result.error is not None
    assert result.error.startswith(f"cannot reach http://127.0.0.1:{port}/v1/ (2 attempts)")


async def test_429_retry_after_is_honoured(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.rate_limited(retry_after=0.2), FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok
    first, second = fake_openai.chat_requests
    # initial_backoff is 0, so any wait comes from the header alone.
    assert second.received_at - first.received_at >= 0.2
    assert [a.status for a in result.attempts] == [429, 200]


async def test_retry_after_ms_is_honoured(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.rate_limited(retry_after_ms=150), FakeReply.ok_json(ANSWER))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok
    first, second = fake_openai.chat_requests
    assert second.received_at - first.received_at >= 0.15


async def test_retry_after_is_capped_by_max_backoff(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.rate_limited(retry_after=3600), FakeReply.ok_json(ANSWER))
    async with make_client(fake_openai, max_backoff=0.05) as llm:
        result = await asyncio.wait_for(llm.complete_json(MESSAGES, SCHEMA, "move"), timeout=30)
    assert result.ok and len(result.attempts) == 2


async def test_insufficient_quota_is_not_retried(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.enqueue(FakeReply.http_error(429, "You exceeded your current quota", code="insufficient_quota"))
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.error == "HTTP 429 from provider: rate limited (1 attempt): You exceeded your current quota"
    assert len(fake_openai.chat_requests) == 1


@pytest.mark.parametrize("status", [401, 403, 404, 422])
async def test_client_errors_are_not_retried(fake_openai: FakeOpenAI, client: LLMClient, status: int) -> None:
    fake_openai.enqueue(*[FakeReply.http_error(status, "nope")] * 3)
    result = await client.complete_text(MESSAGES)
    assert len(fake_openai.chat_requests) == 1
    assert result.error is not None and result.error.startswith(f"HTTP {status} from provider")
    assert [a.status for a in result.attempts] == [status]


async def test_401_message(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.api_key = "sk-the-right-one"
    result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.error == "HTTP 401 from provider: invalid API key (1 attempt): Incorrect API key provided."
    assert len(fake_openai.chat_requests) == 1


async def test_timeout_is_bounded_by_max_attempts(fake_openai: FakeOpenAI) -> None:
    fake_openai.default_delay = 10.0
    async with make_client(fake_openai, request_timeout=0.2, max_attempts=2) as llm:
        result = await llm.complete_json(MESSAGES, SCHEMA, "move")
    assert result.error == "timed out after 0.2s (2 attempts)"
    # At most two: on a busy machine the second request may not have reached the fake within its 0.2 s.
    assert 1 <= len(fake_openai.chat_requests) <= 2
    assert [a.status for a in result.attempts] == [None, None]
    assert 0.4 <= result.latency_s < 5.0


# ---- cancellation, concurrency, secrets ------------------------------------------------------------


async def test_cancellation_propagates_during_request(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.default_delay = 30.0
    task = asyncio.create_task(client.complete_json(MESSAGES, SCHEMA, "move"))
    await fake_openai.wait_for_requests(1)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2.0
    assert len(fake_openai.chat_requests) == 1  # no retry after a cancel


async def test_cancellation_propagates_during_backoff(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(FakeReply.http_error(500, "boom"))
    async with make_client(fake_openai, initial_backoff=30.0, max_backoff=60.0) as llm:
        started = time.monotonic()
        with pytest.raises(TimeoutError):  # wait_for cancels the call, which must not swallow it
            await asyncio.wait_for(llm.complete_json(MESSAGES, SCHEMA, "move"), timeout=0.5)
        assert time.monotonic() - started < 5.0
    assert len(fake_openai.chat_requests) == 1


async def test_concurrent_calls_overlap(fake_openai: FakeOpenAI, client: LLMClient) -> None:
    fake_openai.default_delay = 0.3
    n = 8
    await client.ensure_dialect()  # the probes out of the way: only the calls are in flight below
    results = await asyncio.gather(*(client.complete_text(MESSAGES) for _ in range(n)))
    assert all(r.ok for r in results)
    assert fake_openai.max_in_flight == n


@pytest.mark.parametrize("key", ["sk-LEAKCHECK-7f3a9c2e5b1d4e6f", "local-LEAKCHECK-7f3a9c2e5b1d4e6f"])
async def test_key_never_leaks(fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture, key: str) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("openai", "httpx", "httpx2", "httpcore", "httpcore2", "agent"):
        caplog.set_level(logging.DEBUG, logger=name)
    # Some providers echo the key back in their error text.
    fake_openai.enqueue(
        FakeReply.http_error(500, f"internal error for key {key}"),
        FakeReply.ok_json(ANSWER),
        FakeReply.http_error(401, f"Incorrect API key provided: {key}."),
        FakeReply.http_error(400, f"response_format rejected for Bearer {key}"),
        FakeReply.ok("not json"),
    )
    results: list[LLMResult] = []
    async with make_client(fake_openai, key=key) as llm:
        results.append(await llm.complete_json(MESSAGES, SCHEMA, "move"))
        results.append(await llm.complete_json(MESSAGES, SCHEMA, "move"))
        results.append(await llm.complete_json(MESSAGES, SCHEMA, "move"))
        assert key not in repr(llm)

    assert [r.ok for r in results] == [True, False, False]
    assert results[1].error is not None and results[1].error.startswith("HTTP 401 from provider: invalid API key")
    assert all(r.authorization == f"Bearer {key}" for r in fake_openai.chat_requests)  # the key is sent
    for result in results:
        assert key not in repr(result)
        assert "7f3a9c2e5b1d" not in repr(result)
    assert caplog.records, "expected the failures to be logged"
    for record in caplog.records:
        assert key not in record.getMessage()
        assert key not in repr(record.args)


# ---- extract_json -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('  \n{"a": {"b": [1, 2]}}\n', {"a": {"b": [1, 2]}}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('```\n{"a": 1}\n```', {"a": 1}),
    ('Here you go:\n```json\n{"a": "x"}\n``` hope that helps {not json}', {"a": "x"}),
    ('Sure, my answer is {"chat": "use {braces} and \\"quotes\\" }", "n": 2} and that is it.',
     {"chat": 'use {braces} and "quotes" }', "n": 2}),
    ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
    ('{"s": "a, }"}', {"s": "a, }"}),
    ('I considered {this idea} first. {"a": 1}', {"a": 1}),
    ('{"a": 1} {"b": 2}', {"a": 1}),
    # A raw line break inside a string (small models write them): the whole object, not the inner one.
    ('{"reasoning": "two\nlines", "bees": [{"bee": 0}]}', {"reasoning": "two\nlines", "bees": [{"bee": 0}]}),
])
def test_extract_json_finds_the_object(text: str, expected: dict) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", [
    "", "no json here", "[1, 2, 3]", '{"a": 1, "b": {"c": 2}, "d": "cut off',
    "{not: json}", '```json\n{"a": \n```',
])
def test_extract_json_gives_none(text: str) -> None:
    assert extract_json(text) is None


# ---- the fake server outside the test's loop ------------------------------------------------------


def test_fake_server_in_thread_with_sync_sdk() -> None:
    with FakeOpenAI(default_content='{"x": 1}', api_key="sk-thread") as fake:
        sdk = openai.OpenAI(api_key="sk-thread", base_url=fake.base_url, max_retries=0)
        reply = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        models = sdk.models.list()
        sdk.close()
    assert reply.choices[0].message.content == '{"x": 1}'
    assert [m.id for m in models.data] == ["fake-model"]
    assert fake.stats()["chat_requests"] == 1


def test_fake_server_cli() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.core.testing.fake_openai", "--port", "0", "--reply", '{"move": "pass"}'],
        stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        base_url = line.rsplit(" ", 1)[-1].strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        sdk = openai.OpenAI(api_key="k", base_url=base_url, max_retries=0)
        reply = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        sdk.close()
        assert reply.choices[0].message.content == '{"move": "pass"}'
        root = base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/_fake/stats", timeout=5) as response:
            stats = json.load(response)
        assert stats["chat_requests"] == 1 and stats["max_in_flight"] == 1
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert json.loads(out.strip().splitlines()[-1])["chat_requests"] == 1
