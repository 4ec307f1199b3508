"""A streamed request the agent gave up is stopped at the real server (issue 69: a miss costs one deadline,
once): llama-cpp-python answers one request at a time, and before streaming, a request given up kept it
busy to its last token while the next call waited."""

from __future__ import annotations

import asyncio

import pytest

from agent.core.config import LLMConfig
from agent.core.llm import LLMClient
from agent.core.local_model import MODEL_ALIAS, LocalModelServer
from tests.llm_real.conftest import SERVER_KIND

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(900)]

LONG_ANSWER = 200
"""Tokens the long request generates: seconds of generation on two busy cores."""
LONG = [{"role": "system", "content": "You write long stories."},
        {"role": "user", "content": "Tell me a story about a dragon."}]
STORY = {"type": "object", "properties": {"story": {"type": "string", "minLength": 1200}},
         "required": ["story"], "additionalProperties": False}
"""The server's grammar holds the answer to a story longer than LONG_ANSWER tokens: it never ends early."""
SHORT = [{"role": "system", "content": "You answer in one word."}, {"role": "user", "content": "Say OK."}]
GIVE_UP_SHARE = 0.5
"""The long request is given up after this share of its own full time: in the middle of generating (the
grammar's set-up and the prompt read come first, and are shorter)."""


async def test_a_streamed_request_given_up_frees_the_real_server_for_the_next(local_llm: LocalModelServer) -> None:
    if SERVER_KIND != "llama-cpp-python":
        pytest.skip("llama-server drops a request whose client left, streamed or not")
    # As --local-model runs it: the server's status file set, so answers are streamed (and timed from its log).
    config = LLMConfig(base_url=local_llm.base_url, model=MODEL_ALIAS, api_key_required=False, temperature=0.0,
                       max_tokens=LONG_ANSWER, request_timeout=300, server_status=local_llm.status_path,
                       structured_output="json_object_schema", bound_answers=False)
    async with LLMClient(config, None) as client:
        await client.ensure_dialect()
        assert client.endpoint.finishes_abandoned and client.endpoint.streams
        loop = asyncio.get_running_loop()
        # The long answer once in full (greedy, so the same tokens again below): how long it generates.
        started = loop.time()
        full = await client.complete_json(LONG, STORY)
        full_s = loop.time() - started
        assert full.finish_reason == "length" and full.server is not None, (full.error, full.server)
        generated_s = full.server.generate_ms / 1000
        if full.server.generated_tokens < LONG_ANSWER // 2:
            pytest.fail(f"the model stopped after {full.server.generated_tokens} tokens: the test needs a long answer")
        # The same request, given up in the middle of its generation, then at once a short one.
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(full_s * GIVE_UP_SHARE):
                await client.complete_json(LONG, STORY)
        gave_up = loop.time()
        short = await client.complete_text(SHORT, max_tokens=2)
        waited = loop.time() - gave_up
    assert short.ok, short.error
    assert short.server is not None and short.server.generated_tokens <= 2, short.server
    # Not stopped, the server would have generated the rest of the long answer first (half of it, by the
    # server's own count); stopped, the short request waits at most a token of it.
    queued = waited - short.server.server_ms / 1000
    assert queued < generated_s / 4, f"the short request waited {queued:.2f} s for the server; the abandoned " \
                                     f"answer generates in {generated_s:.1f} s"
