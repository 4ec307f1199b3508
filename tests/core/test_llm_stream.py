"""Answers asked for as streams (issue 69: a miss costs one deadline, once): the same answer as a request
not streamed, bounded the same way, and a stream the agent gave up is closed, so that a server answering
one request at a time (llama-cpp-python's) stops it and serves the next call at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletionChunk

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.llm.body import BoundedBody
from agent.core.llm.errors import ReplyTooLarge
from agent.core.llm.stream import Collected, streamed, wire_body
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.testing.fake_stream import PIECE_CHARS, stream_events

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "why": {"type": "string"}},
          "required": ["a", "why"], "additionalProperties": False}
MESSAGES = [{"role": "system", "content": "You decide. " * 40}, {"role": "user", "content": "Your turn."}]
LONG = json.dumps({"a": 1, "why": "x" * 400})
"""An answer of about 100 pieces: at 0.05 s a piece, 5 s of generation."""
PIECE_S = 0.05


def _config(fake: FakeOpenAI, **llm: Any) -> LLMConfig:
    defaults: dict[str, Any] = {"base_url": fake.base_url, "model": "m", "api_key_required": False,
                                "request_timeout": 30, "retry": RetryConfig(max_attempts=2, initial_backoff=0.01)}
    return LLMConfig(**{**defaults, **llm})


def _completion(content: str) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 90, "completion_tokens": 7, "total_tokens": 97}}


def test_the_chunks_make_the_answer_a_request_not_streamed_gets() -> None:
    collected = Collected(max_chars=1000)
    for event in stream_events(_completion('{"a": 12, "why": "roof"}'), usage=True):
        collected.add(ChatCompletionChunk.construct(**event))
    answer = collected.completion()
    assert answer.choices[0].message.content == '{"a": 12, "why": "roof"}'
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage is not None and (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (90, 7)
    assert answer.model == "m" and not collected.full


def test_the_servers_timings_in_the_last_event_are_kept() -> None:
    collected = Collected(max_chars=1000)
    events = stream_events(_completion("ok"), usage=False)
    events[-1]["timings"] = {"prompt_n": 10, "prompt_ms": 5.0, "predicted_n": 2, "predicted_ms": 40.0, "cache_n": 80}
    for event in events:
        collected.add(ChatCompletionChunk.construct(**event))
    answer = collected.completion()
    assert answer.usage is None  # llama-cpp-python sends none in a stream
    assert getattr(answer, "timings", None) == events[-1]["timings"]


def test_collecting_stops_past_the_longest_answer() -> None:
    collected = Collected(max_chars=10)
    events = stream_events(_completion("y" * 40), usage=False)
    read = 0
    for event in events:
        collected.add(ChatCompletionChunk.construct(**event))
        read += 1
        if collected.full:
            break
    assert collected.full and read < len(events)


def test_the_request_asks_for_a_stream_with_its_usage() -> None:
    request = {"model": "m", "messages": [], "max_tokens": 5, "extra_headers": {"X-A": "1"},
               "extra_body": {"grammar": "root ::= \"a\""}}
    body, headers = wire_body(streamed(request))
    sent = json.loads(body)
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["grammar"] == "root ::= \"a\"" and "extra_body" not in sent and headers["X-A"] == "1"


async def test_a_body_is_read_no_further_than_its_bound() -> None:
    async def chunks():  # type: ignore[no-untyped-def]
        for _ in range(10):
            yield b"x" * 100

    class Inner:
        def __aiter__(self):  # type: ignore[no-untyped-def]
            return chunks()

        async def aclose(self) -> None:
            pass

    body = BoundedBody(Inner(), 450)
    read: list[bytes] = []

    async def drain() -> None:
        async for chunk in body:
            read.append(chunk)

    with pytest.raises(ReplyTooLarge):
        await drain()
    assert sum(map(len, read)) <= 450 < body.read


async def test_a_streamed_answer_is_the_answer_not_streamed() -> None:
    answer = {"a": 7, "why": "the roof goes on top"}
    results = []
    async with FakeOpenAI() as fake:
        for stream in (False, True):
            fake.enqueue(FakeReply.ok_json(answer, prompt_tokens=120, completion_tokens=11))
            async with LLMClient(_config(fake, stream=stream), None) as client:
                results.append(await client.complete_json(MESSAGES, SCHEMA))
        plain, streamed_request = fake.chat_requests
    assert "stream" not in (plain.json or {}) and (streamed_request.json or {}).get("stream") is True
    assert streamed_request.streamed_events > 2 and not streamed_request.disconnected
    one, other = results
    assert one.ok and other.ok, (one.error, other.error)
    fields = ("data", "text", "prompt_tokens", "completion_tokens", "finish_reason")
    assert [getattr(one, f) for f in fields] == [getattr(other, f) for f in fields]
    assert other.endpoint is not None and other.endpoint["stream"] is True


async def test_by_default_only_the_server_the_agent_started_gets_streams(tmp_path: Path) -> None:
    """``--local-model`` sets ``server_status``: that server is known (llama-cpp-python), so its contract
    is declared; any other server gets requests not streamed unless the config says ``stream: true``."""
    status = tmp_path / "server.status.json"
    for llm, expected in (({"server_status": status}, True), ({}, False), ({"server_status": status, "stream": False},
                                                                             False)):
        async with FakeOpenAI(default_content='{"a": 1, "why": "w"}', llama_cpp_python=True) as fake:
            async with LLMClient(_config(fake, **llm), None) as client:
                loop = asyncio.get_running_loop()
                result = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 5)
            assert result.ok and result.data == {"a": 1, "why": "w"}, result.error
            assert [bool((r.json or {}).get("stream")) for r in fake.chat_requests] == [expected], llm


async def test_a_streamed_reply_far_over_max_tokens_is_refused_and_its_stream_closed() -> None:
    async with FakeOpenAI() as fake:
        fake.enqueue(FakeReply.ok("z" * 40_000, piece_delay=0.001))
        async with LLMClient(_config(fake, stream=True, max_tokens=100), None) as client:
            result = await client.complete_text(MESSAGES)
            assert not result.ok and "far over max_tokens" in (result.error or ""), result.error
            (request,) = fake.chat_requests
            async with asyncio.timeout(5):
                while request.ended_at is None:
                    await asyncio.sleep(0.01)
    assert request.disconnected, "closing the stream stopped the server's answer"
    assert request.streamed_events * PIECE_CHARS < 40_000


async def test_a_decision_given_up_is_stopped_at_the_one_at_a_time_server_and_the_next_is_served_at_once() -> None:
    """The first decision gives up at its deadline in the middle of a long answer: the agent closes the
    stream, the server stops within a piece, and the next decision is sent and answered at once instead
    of waiting for the rest of the abandoned answer (before issue 69: skipped, or queued behind it)."""
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok(LONG, delay=0.05, piece_delay=PIECE_S),
                     FakeReply.ok_json({"a": 2, "why": "next"}))
        async with LLMClient(_config(fake, stream=True), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.6):  # the game's own deadline ends the first decision
                    await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.6)
            gave_up = loop.time()
            second = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 1.0)
            answered = loop.time()
        first, after = fake.chat_requests
    assert second.ok and second.data == {"a": 2, "why": "next"}, second.error
    assert first.disconnected, "the server saw the stream closed"
    total = len(stream_events(_completion(LONG), usage=False))
    assert first.streamed_events < total / 2, "it stopped generating long before the end of its answer"
    assert first.ended_at is not None and after.received_at >= first.received_at
    left = (total - first.streamed_events) * PIECE_S  # what the abandoned answer still had to generate
    assert answered - gave_up < left / 3, (answered - gave_up, left)
    assert fake.max_in_flight <= 2


async def test_a_stream_given_up_while_the_server_reads_the_prompt_keeps_the_slot_until_it_is_read() -> None:
    """The server does not stop reading a prompt (llama-cpp-python evaluates it before its first event):
    the slot is held until the first event shows the read is over, then the stream is closed, so no
    decision is sent to wait unseen in the server's queue."""
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(FakeReply.ok(LONG, delay=1.0, piece_delay=PIECE_S), FakeReply.ok_json({"a": 3, "why": "w"}))
        async with LLMClient(_config(fake, stream=True), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.3):
                    await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.3)
            assert client.endpoint.server_slot.in_flight == 1, "the prompt is still being read"
            skipped = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.2)
            assert skipped.skipped and "an earlier request" in (skipped.error or ""), skipped.error
            later = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 5)
            assert later.ok and later.data == {"a": 3, "why": "w"}, later.error
        first, after = fake.chat_requests
    assert first.disconnected and first.streamed_events <= 3
    assert first.ended_at is not None and after.received_at >= first.received_at + 0.9


async def test_a_chat_after_a_decision_given_up_is_answered_by_the_model_at_once() -> None:
    """Issue 69's chat goal on the one-at-a-time server: the model idle again after a decision it gave
    up (the stream closed), a chat line it can answer in time goes to it and is answered at once."""
    async with FakeOpenAI(llama_cpp_python=True) as fake:
        fake.enqueue(*[FakeReply.ok_json({"a": n, "why": "w"}) for n in range(3)],
                     FakeReply.ok(LONG, piece_delay=PIECE_S), FakeReply.ok_json({"a": 9, "why": "hello!"}))
        async with LLMClient(_config(fake, stream=True), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()
            for _ in range(3):  # decisions answered at once: the pace says a chat can be
                assert (await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 5)).ok
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 0.5)
            assert client.answers_within(2.0), "one miss among quick answers: a chat can still be answered"
            started = loop.time()
            async with asyncio.timeout(2.0):  # the game's chat_wait
                chat = await client.complete_json([{"role": "user", "content": "hi"}], SCHEMA, priority="chat")
            took = loop.time() - started
    assert chat.ok and chat.data == {"a": 9, "why": "hello!"}, chat.error
    assert took < 1.0, took
    assert fake.chat_requests[3].disconnected


async def test_a_stream_declared_elsewhere_is_closed_when_its_caller_gives_up() -> None:
    async with FakeOpenAI() as fake:
        fake.enqueue(FakeReply.ok(LONG, piece_delay=PIECE_S))
        async with LLMClient(_config(fake, stream=True), None) as client:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await client.complete_json(MESSAGES, SCHEMA)
            (request,) = fake.chat_requests
            async with asyncio.timeout(5):
                while request.ended_at is None:
                    await asyncio.sleep(0.01)
    assert request.disconnected and request.streamed_events < 30


async def test_once_benched_a_decision_is_skipped_at_once_while_the_model_is_measured_again_in_the_background(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 69: after two misses the fallback decides at once, a request in the background measures the
    model with the skipped decision's prompt (stopped at the server when too slow, like the misses), and
    once the model answers in time it decides again."""
    import agent.core.llm.client as client_module

    monkeypatch.setattr(client_module, "REMEASURE_FIRST_S", 0.05)
    slow = True

    def model(body: dict[str, Any]) -> FakeReply:
        return FakeReply.ok(LONG, piece_delay=PIECE_S) if slow else FakeReply.ok_json({"a": 5, "why": "fast"})

    async with FakeOpenAI(llama_cpp_python=True, responder=model) as fake:
        async with LLMClient(_config(fake, stream=True), None) as client:
            await client.ensure_dialect()
            loop = asyncio.get_running_loop()

            async def decide(seconds: float, turn: str) -> Any:
                deadline = loop.time() + seconds
                async with asyncio.timeout_at(deadline):
                    return await client.complete_json([*MESSAGES, {"role": "user", "content": turn}], SCHEMA,
                                                      deadline=deadline)

            for turn, seconds in (("turn 1", 0.4), ("turn 2", 0.7)):  # the second has time for the first's pace
                with pytest.raises(TimeoutError):
                    await decide(seconds, turn)
            assert client.endpoint.pace.benched
            started = loop.time()
            skipped = await decide(3.0, "turn 3")
            assert skipped.skipped and "missed its time" in (skipped.error or ""), skipped.error
            assert loop.time() - started < 0.2, "the fallback decides at once"
            await fake.wait_for_requests(3)
            measured = fake.chat_requests[2]
            assert measured.messages[-1]["content"] == "turn 3", "measured with the skipped decision's prompt"
            slow = False  # the model got fast (a freed CPU)
            async with asyncio.timeout(20):
                while client.endpoint.pace.benched:
                    await decide(0.4, "turn n")  # each skipped decision may start a measurement
                    await asyncio.sleep(0.05)
            answered = await decide(2.0, "turn last")
    assert answered.ok and answered.data == {"a": 5, "why": "fast"}, answered.error
    assert all(r.disconnected for r in fake.chat_requests[:3]), "every request given up was stopped at the server"


async def test_a_stream_cut_before_its_finish_reason_is_an_error_that_says_so() -> None:
    """llama-cpp-python ends a stream with [DONE] when another request arrives (interrupt_requests): the
    half answer is not taken for a whole one."""
    events = stream_events(_completion('{"a": 1, "why": "cut here"}'), usage=False)[:-1]  # no finish reason
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    async with FakeOpenAI() as fake:
        fake.enqueue(FakeReply(raw_body=body))
        async with LLMClient(_config(fake, stream=True), None) as client:
            result = await client.complete_json(MESSAGES, SCHEMA)
    assert not result.ok and "without a finish reason" in (result.error or ""), result.error


async def test_a_refused_request_form_is_found_as_when_not_streamed() -> None:
    """A refusal comes before any event (an HTTP status): the client steps down its ladder as usual."""
    async with FakeOpenAI(reject_response_formats={"json_schema"}, default_content='{"a": 4, "why": "w"}') as fake:
        async with LLMClient(_config(fake, stream=True), None) as client:
            result = await client.complete_json(MESSAGES, SCHEMA)
    assert result.ok and result.data == {"a": 4, "why": "w"}, result.error
    assert [(a.mode, a.status) for a in result.attempts] == [("json_schema", 400), ("json_object_schema", 200)]
