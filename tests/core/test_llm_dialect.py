"""The request dialect: pure rules, then the client finding it against fake servers that drop or refuse
what real ones do (the real servers are in tests/llm_real/)."""

from __future__ import annotations

import logging
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.llm.dialect import (
    Dialect,
    ProbeCounts,
    after_short_prompt,
    classify_refusal,
    estimate_tokens,
    judge_image_probe,
    judge_probes,
    prompt_arrived,
    shape_messages,
    shared_prefix_share,
)
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "auto"}}
SCHEMA = {"type": "object", "properties": {"move": {"type": "string"}}, "required": ["move"],
          "additionalProperties": False}
LONG_SYSTEM = "You are the partner in a tangram game. " * 40
LONG_USER = "The board holds these pieces, each with its position and rotation. " * 40


def play_messages(images: int = 1) -> list[dict]:
    return [{"role": "system", "content": LONG_SYSTEM},
            {"role": "user", "content": [{"type": "text", "text": LONG_USER}, *[IMAGE] * images]}]


# ---- pure rules --------------------------------------------------------------------------------------


def test_text_only_parts_go_as_one_string() -> None:
    sent = shape_messages([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
                          Dialect(), "NO PICTURES")
    assert sent == [{"role": "user", "content": "a\nb"}]


def test_images_stay_as_parts_where_they_are_seen() -> None:
    sent = shape_messages(play_messages(), Dialect(), "NO PICTURES")
    assert sent[1]["content"][1] == IMAGE and sent[0]["content"] == LONG_SYSTEM


@pytest.mark.parametrize("images", ["refused", "unseen", "off"])
def test_images_not_taken_are_left_out_and_the_prompt_says_so(images: str) -> None:
    sent = shape_messages(play_messages(2), Dialect(images=images), "NO PICTURES")  # type: ignore[arg-type]
    assert sent[1]["content"] == f"{LONG_USER}\nNO PICTURES"


def test_no_parts_means_no_images_even_when_images_were_seen_before() -> None:
    sent = shape_messages(play_messages(), Dialect(parts=False), "NO PICTURES")
    assert isinstance(sent[1]["content"], str) and "NO PICTURES" in sent[1]["content"]


def test_a_folded_system_message_opens_the_first_user_message() -> None:
    messages = [{"role": "system", "content": "RULES"}, {"role": "user", "content": "TURN"},
                {"role": "assistant", "content": "{}"}, {"role": "user", "content": "AGAIN"}]
    sent = shape_messages(messages, Dialect(system="folded"), "")
    assert sent == [{"role": "user", "content": "RULES\n\nTURN"}, {"role": "assistant", "content": "{}"},
                    {"role": "user", "content": "AGAIN"}]
    assert messages[0] == {"role": "system", "content": "RULES"}  # the caller's list is untouched


def test_a_folded_system_message_goes_before_the_parts_of_a_picture_message() -> None:
    sent = shape_messages(play_messages(), Dialect(system="folded"), "")
    assert [m["role"] for m in sent] == ["user"]
    assert sent[0]["content"][0] == {"type": "text", "text": LONG_SYSTEM.strip()}
    assert sent[0]["content"][2] == IMAGE


def test_the_ladder_goes_down_one_rung_at_a_time_and_stops() -> None:
    rungs = []
    dialect: Dialect | None = Dialect()
    while dialect is not None:
        rungs.append(dialect.structured)
        dialect = dialect.step_down()
    assert rungs == ["json_schema", "json_object_schema", "json_object", "text"]


@pytest.mark.parametrize("status, said, expected", [
    (400, "response_format json_schema not supported", "structured"),
    (500, "('body', 'response_format', 'type') Input should be 'text' or 'json_object'", "structured"),
    (500, "model is loading", None),
    (503, "overloaded", None),
    (500, "Unsupported content part type: image_url", "images"),
    (400, "image input is not supported by this model", "images"),
    (400, "Unsupported value: 'temperature' does not support 0.2", "temperature"),
    (400, "max_tokens is not supported with this model", "max_tokens"),
    (400, "Invalid request", "unexplained"),
    (401, "Incorrect API key", None),
    (404, "model not found", None),
])
def test_what_a_refusal_refuses(status: int, said: str, expected: str | None) -> None:
    assert classify_refusal(status, said, mode="json_schema", had_images=True, sent_temperature=True,
                            sent_max_tokens=True) == expected


def test_no_image_or_schema_refusal_is_read_into_a_request_without_them() -> None:
    assert classify_refusal(500, "image part missing", mode="text", had_images=False, sent_temperature=True,
                            sent_max_tokens=True) is None
    assert classify_refusal(500, "json_schema", mode="text", had_images=False, sent_temperature=True,
                            sent_max_tokens=True) is None


def test_estimate_counts_text_not_pictures() -> None:
    with_pictures, without = play_messages(2), [play_messages()[0], {"role": "user", "content": LONG_USER}]
    assert estimate_tokens(with_pictures) == estimate_tokens(without)
    assert estimate_tokens(without) == (len(LONG_SYSTEM) + len(LONG_USER)) // 4 + 8


@pytest.mark.parametrize("counted, estimate, arrived", [
    (7, 2000, False), (999, 2000, False), (1000, 2000, True), (2400, 2000, True),
    (0, 2000, True),  # no usage reported: cannot tell
    (3, 40, True),  # too short to judge
])
def test_prompt_arrived(counted: int, estimate: int, arrived: bool) -> None:
    assert prompt_arrived(counted, estimate) is arrived


def test_a_short_prompt_blames_parts_then_the_system_role_then_the_context() -> None:
    parts = shape_messages(play_messages(), Dialect(), "")
    first = after_short_prompt(Dialect(), parts, 7)
    assert (first.parts, first.images, first.system) == (False, "unseen", "kept")
    strings = shape_messages(play_messages(), first, "")
    second = after_short_prompt(first, strings, 300)
    assert second.system == "folded" and second.context_tokens is None
    folded = shape_messages(play_messages(), second, "")
    third = after_short_prompt(second, folded, 2048)
    assert third.context_tokens == 2048


def test_probe_counts_tell_dropped_parts_and_system() -> None:
    kept = judge_probes(Dialect(), ProbeCounts(base=10, with_system=70, as_parts=75, as_string=75, probe_tokens=60))
    assert (kept.parts, kept.system, kept.probed) == (True, "kept", "probed")
    dropped = judge_probes(Dialect(), ProbeCounts(base=10, with_system=10, as_parts=7, as_string=75,
                                                  probe_tokens=60))
    assert (dropped.parts, dropped.images, dropped.system) == (False, "unseen", "folded")


def test_image_probe() -> None:
    assert judge_image_probe(Dialect(), 20, 105, refused=False).images == "sent"
    assert judge_image_probe(Dialect(), 20, 21, refused=False).images == "unseen"
    assert judge_image_probe(Dialect(), 20, None, refused=True).images == "refused"


# ---- the client finds the dialect -----------------------------------------------------------------------


def client_for(fake: FakeOpenAI, **llm: object) -> LLMClient:
    config = LLMConfig(base_url=fake.base_url, model="local", api_key_required=False,
                       retry=RetryConfig(max_attempts=2, initial_backoff=0.0), **llm)
    return LLMClient(config, None)


async def test_a_server_like_openai_keeps_everything() -> None:
    async with FakeOpenAI() as fake, client_for(fake) as client:
        fake.enqueue(FakeReply.ok_json({"move": "A"}))
        result = await client.complete_json(play_messages(), SCHEMA, "move")
        assert result.ok and result.endpoint is not None
        assert (client.dialect.parts, client.dialect.images, client.dialect.system) == (True, "sent", "kept")
        assert len(fake.chat_requests) == 1 and fake.chat_requests[0].image_urls()
        assert 4 <= len(fake.probe_requests) <= 6  # four message probes and two for the picture
        assert result.prompt_tokens >= result.prompt_estimate > 0


async def test_a_server_that_drops_parts_and_system_gets_strings_and_a_fold(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    async with FakeOpenAI(drops_parts=True, drops_system=True) as fake, client_for(fake) as client:
        fake.enqueue(FakeReply.ok_json({"move": "A"}))
        await client.ensure_dialect(images=True)  # as the start-up priming does, before the first turn
        result = await client.complete_json(play_messages(), SCHEMA, "move")
        assert result.ok and not result.prompt_short
        (sent,) = fake.chat_requests
        assert [m["role"] for m in sent.messages] == ["user"]
        assert isinstance(sent.messages[0]["content"], str)
        assert sent.messages[0]["content"].startswith(LONG_SYSTEM.strip()) and not sent.image_urls()
        assert result.endpoint == {"structured_output": "json_schema", "content": "string", "images": "unseen",
                                   "system_role": "folded", "found_by": "probed", "context_tokens": None,
                                   "refused_requests": 0, "context_window": None,
                                   "grammar": "server's", "server": None, "stream": False}
        assert any("system role folded" in r.getMessage() for r in caplog.records)


async def test_a_server_that_refuses_pictures_gets_none_and_the_prompt_says_so() -> None:
    async with FakeOpenAI(refuses_images=True) as fake, client_for(fake) as client:
        fake.enqueue(FakeReply.ok_json({"move": "A"}))
        await client.ensure_dialect(images=True)
        result = await client.complete_json(play_messages(), SCHEMA, "move")
        assert result.ok and client.dialect.images == "refused"
        (sent,) = fake.chat_requests
        assert not sent.image_urls() and "No pictures are attached" in sent.messages[1]["content"]
        assert client.refused_requests == 0  # found by the probe, not by a refused play


async def test_without_probes_a_refused_picture_is_learnt_from_play() -> None:
    async with FakeOpenAI(refuses_images=True) as fake, client_for(fake, probe_dialect=False) as client:
        fake.enqueue(FakeReply.ok_json({"move": "A"}))
        result = await client.complete_json(play_messages(), SCHEMA, "move")
        assert result.ok and client.dialect.images == "refused" and client.refused_requests == 1
        assert [a.status for a in result.attempts] == [500, 200]  # a refusal, not three retries
        assert fake.probe_requests == []


async def test_without_probes_dropped_parts_are_seen_and_the_call_sent_again_as_strings(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    async with FakeOpenAI(drops_parts=True) as fake, client_for(fake, probe_dialect=False) as client:
        result = await client.complete_json(play_messages(), SCHEMA, "move")
        assert result.ok, result.error
        assert len(fake.chat_requests) == 2
        assert isinstance(fake.chat_requests[1].messages[1]["content"], str)
        assert (client.dialect.parts, client.dialect.images) == (False, "unseen")
        (warning,) = [r.getMessage() for r in caplog.records if "prompt tokens for about" in r.getMessage()]
        assert "list of parts" in warning


async def test_without_probes_a_dropped_system_message_that_was_most_of_the_prompt_is_folded() -> None:
    messages = [{"role": "system", "content": LONG_SYSTEM * 3}, {"role": "user", "content": "Your turn."}]
    async with FakeOpenAI(drops_system=True) as fake, client_for(fake, probe_dialect=False) as client:
        result = await client.complete_json(messages, SCHEMA, "move")
        assert result.ok, result.error
        assert len(fake.chat_requests) == 2
        assert [m["role"] for m in fake.chat_requests[1].messages] == ["user"]
        assert client.dialect.system == "folded"


async def test_a_prompt_cut_to_the_context_window_fails_the_call_with_the_fix() -> None:
    async with FakeOpenAI() as fake, client_for(fake) as client:
        fake.enqueue(FakeReply.ok_json({"move": "A"}, prompt_tokens=300))
        result = await client.complete_json([play_messages()[0], {"role": "user", "content": LONG_USER}], SCHEMA)
        assert not result.ok and result.prompt_short
        assert result.error is not None and "context window" in result.error and "num_ctx" in result.error
        assert client.dialect.context_tokens == 300 and client.dialect.system == "kept"  # the probe showed it kept
        assert len(fake.chat_requests) == 1  # no dialect carries a prompt past the window


async def test_unprobed_a_cut_prompt_is_blamed_on_the_system_role_first_then_on_the_window() -> None:
    async with FakeOpenAI() as fake, client_for(fake, probe_dialect=False) as client:
        fake.enqueue(*[FakeReply.ok_json({"move": "A"}, prompt_tokens=300)] * 2)
        result = await client.complete_json([play_messages()[0], {"role": "user", "content": LONG_USER}], SCHEMA)
        assert not result.ok and "context window" in (result.error or "")
        assert len(fake.chat_requests) == 2 and client.dialect.context_tokens == 300


async def test_one_probe_for_many_concurrent_first_calls() -> None:
    import asyncio

    async with FakeOpenAI() as fake, client_for(fake) as client:
        results = await asyncio.gather(*(client.complete_text([{"role": "user", "content": "hi"}])
                                         for _ in range(5)))
        assert all(r.ok for r in results)
        assert len(fake.probe_requests) == 4 and len(fake.chat_requests) == 5


async def test_an_unanswered_probe_is_tried_once_more_then_play_goes_on() -> None:
    async with FakeOpenAI(api_key="sk-right") as fake, client_for(fake) as client:
        assert (await client.ensure_dialect()).probed == "not yet"
        assert len(fake.probe_requests) == 4  # one round: the four message probes at once
        assert (await client.ensure_dialect()).probed.startswith("probe failed")
        result = await client.complete_text([{"role": "user", "content": "hi"}])
        assert not result.ok and "401" in (result.error or "")
        assert len(fake.probe_requests) == 8  # two rounds, then no more
        assert client.dialect.probed.startswith("probe failed")


def test_openai_itself_is_not_probed() -> None:
    client = LLMClient(LLMConfig(base_url="https://api.openai.com/v1"), "sk-x")
    assert client.dialect.probed == "known"


@given(st.text(alphabet="ab\u00e9\U0001f600", max_size=40), st.text(alphabet="ab\u00e9\U0001f600", max_size=40),
       st.text(alphabet="ab\u00e9", max_size=40))
def test_shared_prefix_share_is_the_common_prefix_over_the_new_prompt(a, b, stem):
    before, now = stem + a, stem + b
    expected = len(os.path.commonprefix([before, now])) / len(now) if now else 0.0  # noqa: RUF071
    assert shared_prefix_share(before, now) == expected


def test_shared_prefix_share_of_a_long_prompt():
    now = "system: rules\n" * 600
    assert shared_prefix_share(now, now) == 1.0
    assert shared_prefix_share(now[:-1] + "X", now) == (len(now) - 1) / len(now)
    assert shared_prefix_share("", now) == 0.0 and shared_prefix_share(now, "") == 0.0
