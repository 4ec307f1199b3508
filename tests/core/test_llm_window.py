"""The model's context window: read where the server tells it, learnt from refusals, and prompts fitted
to it (the game's compact form, or not sent at all), never cut."""

from __future__ import annotations

import pytest

from agent.core.config import LLMConfig
from agent.core.llm import LLMClient
from agent.core.llm.window import fits, is_context_refusal, window_from_models, window_from_props, window_from_refusal
from agent.core.testing.fake_openai import FakeOpenAI

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["a"], "properties": {"a": {"type": "integer"}}}


@pytest.mark.parametrize("said, window", [
    ("messages This model's maximum context length is 8192 tokens. However, you requested 9000 tokens", 8192),
    ("Requested tokens (9100) exceed context window of 4096", 4096),
    ('the request exceeds the available context size {"n_prompt_tokens": 5000, "n_ctx": 2048}', 2048),
])
def test_the_window_a_refusal_names(said: str, window: int) -> None:
    assert is_context_refusal(said)
    assert window_from_refusal(said) == window


@pytest.mark.parametrize("said", ["response_format json_schema not supported", "temperature must be <= 2",
                                  "Unsupported content part type: image_url"])
def test_other_refusals_are_not_about_the_window(said: str) -> None:
    assert not is_context_refusal(said)


def test_the_window_servers_tell() -> None:
    assert window_from_props({"default_generation_settings": {"n_ctx": 8192}}) == 8192
    assert window_from_props({"n_ctx": 4096}) == 4096
    assert window_from_props({"detail": "Not Found"}) is None
    vllm = {"data": [{"id": "other", "max_model_len": 1024}, {"id": "m", "max_model_len": 32768}]}
    assert window_from_models(vllm, "m") == 32768
    assert window_from_models({"data": [{"id": "x", "loaded_context_length": 4096}]}, "m") == 4096, "the only model"
    assert window_from_models({"data": [{"id": "m", "owned_by": "me"}]}, "m") is None  # llama-cpp-python
    assert window_from_models({"data": [{"id": "m", "max_model_len": 3}]}, "m") is None, "implausible"
    assert window_from_models([1, 2], "m") is None


def test_fits_leaves_room_for_the_estimate_running_low_and_the_answer() -> None:
    assert fits(1000, 200, None)
    assert fits(1000, 200, 1450)
    assert not fits(1000, 200, 1400)


def _messages(chars: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": "word " * (chars // 5)}]


def _config(fake: FakeOpenAI, **kw: object) -> LLMConfig:
    return LLMConfig(base_url=fake.base_url, model="m", prime=False, api_key_required=False, max_tokens=100,
                     bound_answers=False, **kw)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_a_refused_long_prompt_is_sent_again_in_its_compact_form() -> None:
    with FakeOpenAI(default_content='{"a": 1}', context_window=600) as fake:
        async with LLMClient(_config(fake, probe_dialect=False), None) as client:
            result = await client.complete_json(_messages(4000), SCHEMA, compact=lambda: _messages(800))
            assert result.ok and result.data == {"a": 1}
            assert result.prompt_form == "compact"
            assert client.context_window == 600
            sent = [len(str(r.json["messages"])) for r in fake.chat_requests]
            assert len(sent) == 2 and sent[0] > 3000 > 1000 > sent[1], "the full prompt once, then the compact one"
            fake.requests.clear()
            again = await client.complete_json(_messages(4000), SCHEMA, compact=lambda: _messages(800))
            assert again.ok and again.prompt_form == "compact"
            assert len(fake.chat_requests) == 1, "the window is known now: fitted before sending"


@pytest.mark.asyncio
async def test_a_prompt_that_fits_in_no_form_is_not_sent_and_says_why() -> None:
    with FakeOpenAI(default_content='{"a": 1}', context_window=600) as fake:
        async with LLMClient(_config(fake, probe_dialect=False), None) as client:
            result = await client.complete_json(_messages(4000), SCHEMA, compact=lambda: _messages(3600))
            assert not result.ok
            assert "does not fit the model's context window of 600 tokens" in (result.error or "")
            assert "--ctx-size" in (result.error or "") and "num_ctx" in (result.error or "")
            assert len(fake.chat_requests) == 1, "one refusal showed the window; the compact form was never sent"
            short = await client.complete_json(_messages(400), SCHEMA)
            assert short.ok, "a prompt that fits still goes"


@pytest.mark.asyncio
async def test_the_window_the_server_tells_fits_the_first_prompt() -> None:
    with FakeOpenAI(default_content='{"a": 1}', context_window=600, tells_window=True) as fake:
        async with LLMClient(_config(fake), None) as client:
            result = await client.complete_json(_messages(4000), SCHEMA, compact=lambda: _messages(800))
            assert result.ok and result.prompt_form == "compact"
            assert client.server_window == 600 and client.refused_requests == 0
            assert len(fake.chat_requests) == 1, "no request was refused: the compact form went first"
            assert [r for r in fake.requests if r.path.endswith("/models")], "read from the model list"
            assert result.endpoint is not None and result.endpoint["context_window"] == 600


@pytest.mark.asyncio
async def test_the_configured_window_wins_over_what_the_server_tells() -> None:
    with FakeOpenAI(default_content='{"a": 1}', tells_window=True, context_window=100_000) as fake:
        async with LLMClient(_config(fake, context_tokens=700), None) as client:
            result = await client.complete_json(_messages(4000), SCHEMA, compact=lambda: _messages(800))
            assert result.prompt_form == "compact" and client.server_window == 100_000
            assert client.context_window == 700


@pytest.mark.asyncio
async def test_prompt_form_compact_sends_the_compact_form_always() -> None:
    with FakeOpenAI(default_content='{"a": 1}') as fake:
        async with LLMClient(_config(fake, probe_dialect=False, prompt_form="compact"), None) as client:
            result = await client.complete_json(_messages(400), SCHEMA, compact=lambda: _messages(100))
            plain = await client.complete_json(_messages(400), SCHEMA)
    assert result.prompt_form == "compact" and plain.prompt_form == "full", "no compact form given: the full one"
    assert [len(r.json["messages"][0]["content"]) for r in fake.chat_requests] == [100, 400]
