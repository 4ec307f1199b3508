"""The start-up costs a first turn little: the dialect probes go out together, the first calls go out
with them (sent again only when the probes show the assumed dialect was wrong), and no turn or chat
waits behind the start-up priming. Order and overlap are read from the fake server's own arrival
times, against delays long enough that a sequential client could not meet them."""

from __future__ import annotations

import asyncio

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.llm.gate import LLMGate
from agent.core.llm.probe import PROBE_HEADER
from agent.core.llm.sample import LLMSample
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply, RecordedRequest

SCHEMA = {"type": "object", "properties": {"move": {"type": "string"}}, "required": ["move"],
          "additionalProperties": False}
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "auto"}}
SYSTEM = "You are the partner in a tangram game. " * 40
USER = "The board holds these pieces, each with its position and rotation. " * 40
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": [{"type": "text", "text": USER}, IMAGE]}]


def client_for(fake: FakeOpenAI, **llm: object) -> LLMClient:
    config = LLMConfig(base_url=fake.base_url, model="local", api_key_required=False, request_timeout=10,
                       retry=RetryConfig(max_attempts=2, initial_backoff=0.0), **llm)
    return LLMClient(config, None)


def probes(fake: FakeOpenAI, kind: str = "dialect") -> list[RecordedRequest]:
    return [r for r in fake.probe_requests if r.headers.get(PROBE_HEADER.lower()) == kind]


async def test_the_probes_go_out_together() -> None:
    async with FakeOpenAI(probe_delay=0.5) as fake, client_for(fake) as client:
        dialect = await client.ensure_dialect(images=True)
    sent = probes(fake)
    assert dialect.probed == "probed" and dialect.sends_images
    assert len(sent) == 6  # four message probes and two for the picture
    arrivals = [r.received_at for r in sent]
    assert max(arrivals) - min(arrivals) < 0.5, "every probe arrived before the first could be answered"
    # One round trip, not six: the server was answering all six at once (counted, not timed: the time
    # the client takes around that round trip is a loaded machine's to stretch).
    assert fake.max_in_flight == len(sent), fake.max_in_flight


async def test_a_first_call_goes_out_with_the_probes_not_after_them() -> None:
    async with FakeOpenAI(probe_delay=1.0) as fake, client_for(fake) as client:
        fake.enqueue(FakeReply.ok_json({"move": "A"}))
        result = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok and result.data == {"move": "A"}, result.error
    (call,) = fake.chat_requests  # the dialect assumed was right: sent once
    assert call.received_at < min(r.received_at for r in probes(fake)) + 1.0, "not held back by the probes"
    assert call.image_urls() and call.messages[0]["role"] == "system"


async def test_a_first_call_in_a_dialect_the_probes_disprove_is_sent_again_in_the_one_found() -> None:
    async with FakeOpenAI(drops_system=True, drops_parts=True, probe_delay=0.3) as fake, client_for(fake) as client:
        fake.enqueue(FakeReply.ok_json({"move": "wrong"}), FakeReply.ok_json({"move": "B"}))
        result = await client.complete_json(MESSAGES, SCHEMA, "move")
        again = await client.complete_json(MESSAGES, SCHEMA, "move")
    assert result.ok and result.data == {"move": "B"}, "the answer to the prompt the server cut is not used"
    assert again.ok and not again.prompt_short
    first, second, third = fake.chat_requests
    assert first.messages[0]["role"] == "system" and first.image_urls()
    assert [m["role"] for m in second.messages] == ["user"] and isinstance(second.messages[0]["content"], str)
    assert second.received_at >= max(r.received_at for r in probes(fake)) + 0.3, "sent once the probes answered"
    assert [m["role"] for m in third.messages] == ["user"] and len(probes(fake)) == 6  # found once for all


async def test_no_turn_or_chat_waits_behind_the_priming() -> None:
    async with FakeOpenAI(prime_delay=3.0, probe_delay=0.5, default_delay=0.2, default_content='{"move": "C"}') as fake:
        async with client_for(fake) as client:
            loop = asyncio.get_running_loop()
            client.prime_soon(LLMSample(MESSAGES, SCHEMA, "move"))
            await asyncio.sleep(0.05)  # the priming is on its way
            play, chat = await asyncio.gather(
                client.complete_json(MESSAGES, SCHEMA, "move", deadline=loop.time() + 5),
                client.complete_text([{"role": "user", "content": "hello"}], priority="chat"))
            assert client._prime_task is not None and not client._prime_task.done(), "the priming still runs"
    assert play.ok and play.data == {"move": "C"}, play.error
    assert chat.ok, chat.error
    (prime,) = probes(fake, "prime")
    for call in fake.chat_requests:
        assert call.received_at < prime.received_at + 3.0, "sent while the server still read the priming"
        assert call.received_at < min(r.received_at for r in probes(fake)) + 0.5, "nor after the probes"


async def test_the_priming_waits_for_a_slot_behind_plays_and_chats() -> None:
    gate = LLMGate(1)
    order: list[str] = []
    await gate.acquire("play")

    async def take(priority: str) -> None:
        async with gate.slot(priority):  # type: ignore[arg-type]
            order.append(priority)

    waiting = [asyncio.create_task(take(p)) for p in ("background", "chat", "play")]
    while gate.waiting < 3:
        await asyncio.sleep(0)
    gate.release()
    await asyncio.gather(*waiting)
    assert order == ["play", "chat", "background"]
