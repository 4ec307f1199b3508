"""Issue 69: what the model server itself counted and timed for each answer reaches the result (and so
the transcript): llama-server's ``timings``, or the log of the llama-cpp-python server the agent started."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent.core.config import LLMConfig
from agent.core.llm import LLMClient
from agent.core.llm.server_times import ServerCall, ServerLog, from_timings, kind_of, parse_log
from agent.core.local_model import LocalModelServer, ServerStatus
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}
MESSAGES = [{"role": "system", "content": "You decide."}, {"role": "user", "content": "Your turn."}]

LOG = """\
Llama.generate: 12 prefix-match hit, remaining 988 prompt tokens to eval
llama_perf_context_print: load time = 310.00 ms
llama_perf_context_print: prompt eval time = 1520.50 ms / 988 tokens (1.54 ms per token,   649.80 tokens per second)
llama_perf_context_print: eval time = 2200.00 ms / 101 runs (21.78 ms per token,    45.91 tokens per second)
llama_perf_context_print: total time = 3800.00 ms / 1089 tokens
INFO:     127.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 200 OK
Llama.generate: 950 prefix-match hit, remaining 60 prompt tokens to eval
llama_perf_context_print: load time = 310.00 ms
llama_perf_context_print: prompt eval time = 95.00 ms / 60 tokens (1.58 ms per token,   631.58 tokens per second)
llama_perf_context_print: eval time = 1800.00 ms / 80 runs (22.50 ms per token,    44.44 tokens per second)
llama_perf_context_print: total time = 1900.00 ms / 140 tokens
"""


def test_the_llama_cpp_python_log_gives_each_answers_tokens_times_and_cache() -> None:
    first, second = parse_log(LOG)
    assert first == ServerCall(1000, 12, 1520.5, 101, 2200.0)
    assert second == ServerCall(1010, 950, 95.0, 80, 1800.0)
    assert parse_log("INFO: nothing timed\n") == []


def test_llama_servers_timings_give_the_same_fields() -> None:
    call = from_timings({"prompt_n": 60, "prompt_ms": 95.0, "predicted_n": 80, "predicted_ms": 1800.0, "cache_n": 950})
    assert call == ServerCall(1010, 950, 95.0, 80, 1800.0)
    assert from_timings(None) is None and from_timings("x") is None


async def test_llama_servers_own_numbers_come_back_with_the_answer() -> None:
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"a": 1}'}}],
            "usage": {"prompt_tokens": 1010, "completion_tokens": 80, "total_tokens": 1090},
            "timings": {"prompt_n": 60, "prompt_ms": 95.0, "predicted_n": 80, "predicted_ms": 1800.0, "cache_n": 950}}
    async with FakeOpenAI() as fake:
        fake.enqueue(FakeReply(raw_body=json.dumps(body)))
        config = LLMConfig(base_url=fake.base_url, model="m", api_key_required=False, probe_dialect=False, prime=False)
        async with LLMClient(config, None) as client:
            result = await client.complete_json(MESSAGES, SCHEMA)
    assert result.ok, result.error
    assert result.server == ServerCall(1010, 950, 95.0, 80, 1800.0)
    assert result.cached_tokens == 950


async def test_a_local_llama_cpp_python_answer_is_timed_from_the_log_its_status_file_names(tmp_path: Path) -> None:
    log, status = tmp_path / "server.log", tmp_path / "server.status.json"
    log.write_text(LOG, encoding="utf-8")
    status.write_text(ServerStatus("up", log=str(log)).to_json(), encoding="utf-8")
    async with FakeOpenAI(llama_cpp_python=True, default_content='{"a": 1}') as fake:
        config = LLMConfig(base_url=fake.base_url, model="m", api_key_required=False, server_status=status,
                           prime=False)
        async with LLMClient(config, None) as client:
            loop = asyncio.get_running_loop()
            first = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 10)
            again = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 10)
    assert first.ok and first.server == ServerCall(1010, 950, 95.0, 80, 1800.0), first.server
    assert first.cached_tokens == 950
    # Streamed (the server the agent started), so the answer carries no usage: the log's count stands in.
    assert (first.prompt_tokens, first.completion_tokens) == (1010, 80)
    assert again.ok and again.server is None, "nothing new in the log: no numbers of another answer"


async def test_the_server_log_follows_only_what_was_added(tmp_path: Path) -> None:
    log, status = tmp_path / "server.log", tmp_path / "s.json"
    log.write_text(LOG, encoding="utf-8")
    status.write_text(json.dumps({"state": "up", "log": str(log)}), encoding="utf-8")
    follow = ServerLog(status)
    await follow.skip_to_end()
    assert await follow.last_call() is None
    with log.open("a", encoding="utf-8") as handle:
        handle.write(LOG.split("INFO:")[0])
    assert await follow.last_call() == ServerCall(1000, 12, 1520.5, 101, 2200.0)
    assert await ServerLog(None).last_call() is None


@pytest.mark.parametrize(("declared", "serial"), [("llama-cpp-python", True), ("", False)])
async def test_a_server_the_agent_started_is_known_by_the_kind_its_status_file_declares(
        tmp_path: Path, declared: str, serial: bool) -> None:
    """A llama-cpp-python server busy with an abandoned answer does not answer the model list in
    time, so it cannot be told by its answers: the server the agent launched declares its kind. The
    fake here answers like no llama.cpp server at all, so only the declaration can make it serial."""
    status = tmp_path / "server.status.json"
    status.write_text(ServerStatus("up", kind=declared).to_json(), encoding="utf-8")
    async with FakeOpenAI(default_content='{"a": 1}') as fake:
        config = LLMConfig(base_url=fake.base_url, model="m", api_key_required=False, server_status=status,
                           prime=False)
        async with LLMClient(config, None) as client:
            loop = asyncio.get_running_loop()
            result = await client.complete_json(MESSAGES, SCHEMA, deadline=loop.time() + 10)
            assert result.ok, result.error
            assert client.endpoint.finishes_abandoned is serial
            assert not client.endpoint.llama_server


def test_the_kind_is_declared_only_for_a_server_the_agent_launched_itself(tmp_path: Path) -> None:
    ours = LocalModelServer(port=1, status_path=tmp_path / "ours.json", log_path=tmp_path / "ours.log")
    ours._set_status(ServerStatus("up"))
    assert kind_of(tmp_path / "ours.json") == "llama-cpp-python"
    given = LocalModelServer(port=1, status_path=tmp_path / "given.json", log_path=tmp_path / "given.log",
                             command=["some-server"])
    given._set_status(ServerStatus("up"))
    assert kind_of(tmp_path / "given.json") == ""
    assert kind_of(None) == "" and kind_of(tmp_path / "none.json") == ""
