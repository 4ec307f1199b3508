"""The core's bounds from issue 10, piece by piece: JSON extraction, the LLM gate, the reply cap,
memory clipping, lazy transcripts, the image pixel cap and pool, throttled logging."""

from __future__ import annotations

import asyncio
import base64
import io
import time

import pytest
from PIL import Image

from agent.core.config import ImageConfig, LLMConfig
from agent.core.images import ImageError, ImagePool, prepare_image
from agent.core.limits import Throttle
from agent.core.llm import MAX_JSON_CANDIDATES, LLMClient, LLMGate, extract_json
from agent.core.memory import MAX_ENTRY_CHARS, Memory
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.transcript import Transcript

# ---- JSON extraction -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "{" * 10_000 + "}" * 10_000,                       # 29.5 s before (quadratic)
    '{"a":' * 5_000 + "1" + "}" * 5_000,              # nested too deep for json: no object, quickly
    "[" * 50_000,                                     # never closed
    '{"": ' * 20_000,                                 # every brace a candidate, none closed
    "{x} " * 20_000 + '{"a": 1}',                     # prose in braces before the object
])
def test_extraction_is_linear_on_hostile_replies(text):
    started = time.monotonic()
    extract_json(text)
    assert time.monotonic() - started < 1.0


def test_nested_braces_give_the_innermost_object():
    assert extract_json("{" * 10_000 + "}" * 10_000) == {}


def test_an_unbalanced_quote_in_the_prose_does_not_hide_the_object():
    assert extract_json('The Red piece is 5" wide: {"action": "pass"}') == {"action": "pass"}


def test_a_cut_off_object_still_gives_nothing():
    assert extract_json('say "hi" {"a": 1, "b": {"c": 2}, "d": "cut') is None


def test_at_most_a_bounded_number_of_spans_are_tried():
    prose = '{"not": json} ' * (MAX_JSON_CANDIDATES + 5)
    assert extract_json(prose + '{"a": 1}') is None  # gave up before: bounded work, not a hunt
    assert extract_json('{"not": json} ' * 3 + '{"a": 1}') == {"a": 1}


# ---- the LLM gate ----------------------------------------------------------------------------------


async def test_gate_serves_waiting_plays_before_waiting_chats():
    gate = LLMGate(1)
    order: list[str] = []
    release = asyncio.Event()

    async def call(name: str, priority: str) -> None:
        async with gate.slot(priority):  # type: ignore[arg-type]
            order.append(name)
            if name == "first":
                await release.wait()

    first = asyncio.create_task(call("first", "chat"))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(call(f"chat{i}", "chat")) for i in range(3)]
    await asyncio.sleep(0)
    waiting.append(asyncio.create_task(call("play", "play")))
    await asyncio.sleep(0)
    assert gate.in_flight == 1 and gate.waiting == 4
    release.set()
    await asyncio.gather(first, *waiting)
    assert order == ["first", "play", "chat0", "chat1", "chat2"]
    assert gate.in_flight == 0 and gate.max_seen == 1


async def test_a_caller_that_gives_up_waiting_leaves_the_gate_whole():
    gate = LLMGate(1)
    async with gate.slot():
        gone = asyncio.create_task(gate._acquire("chat"))
        await asyncio.sleep(0)
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
    assert gate.in_flight == 0 and gate.waiting == 0
    async with gate.slot():  # still usable
        assert gate.in_flight == 1


async def test_a_slot_handed_to_a_cancelled_waiter_is_passed_on():
    gate = LLMGate(1)
    await gate._acquire("play")
    late = asyncio.create_task(gate._acquire("play"))
    next_one = asyncio.create_task(gate._acquire("chat"))
    await asyncio.sleep(0)
    gate._release()          # the slot goes to `late`...
    late.cancel()            # ...which gives up before it runs
    with pytest.raises(asyncio.CancelledError):
        await late
    await asyncio.wait_for(next_one, 1)  # ...so the next waiter gets it
    assert gate.in_flight == 1


async def test_client_requests_never_exceed_the_gate():
    async with FakeOpenAI(responder=lambda req: FakeReply.ok('{"ok": true}', delay=0.2)) as fake:
        client = LLMClient(LLMConfig(base_url=fake.base_url, api_key_required=False, max_in_flight=3), None)
        try:
            ask = [{"role": "user", "content": "x"}]
            results = await asyncio.gather(*(client.complete_json(ask, {"type": "object"}, priority="chat")
                                             for _ in range(10)))
        finally:
            await client.aclose()
    assert all(r.ok for r in results)
    assert fake.max_in_flight == 3 and client.gate.max_seen == 3


async def test_a_reply_far_over_max_tokens_is_an_error_with_a_clipped_text():
    async with FakeOpenAI() as fake:
        fake.enqueue(FakeReply.ok('{"a": "' + "x" * 100_000 + '"}'))
        client = LLMClient(LLMConfig(base_url=fake.base_url, api_key_required=False, max_tokens=100), None)
        try:
            result = await client.complete_json([{"role": "user", "content": "x"}], {"type": "object"})
        finally:
            await client.aclose()
    # The message names the max_tokens the request carried (sized to this schema, at most the config's).
    sent = fake.requests[-1].json["max_tokens"]
    assert sent <= 100 and result.error and f"far over max_tokens={sent};" in result.error
    assert result.data is None and len(result.text) == client.max_reply_chars


# ---- memory, transcripts, images, logs --------------------------------------------------------------


def test_memory_clips_every_entry():
    memory = Memory(4)
    memory.add("agent", "x" * 20_000_000)
    memory.add("player", "short")
    assert [len(e.text) for e in memory.entries] == [MAX_ENTRY_CHARS, 5]
    assert memory.entries[0].text.endswith("…")


async def test_transcript_opened_late_keeps_what_came_before(tmp_path):
    t = Transcript(tmp_path)
    t.record("session_start", peer="x")
    assert t.path is not None and not t.path.exists()  # no file until opened
    await t.open()
    t.record("frame_in", n=1)
    await t.close()
    assert [line.count('"kind"') for line in t.path.read_text().splitlines()] == [1, 1]
    assert '"session_start"' in t.path.read_text()


async def test_transcript_never_opened_makes_no_file(tmp_path):
    t = Transcript(tmp_path)
    for i in range(5000):
        t.record("frame_in", n=i)
    assert t._queue.qsize() <= 1000  # bounded while waiting to be opened
    await t.close()
    assert list(tmp_path.iterdir()) == []


async def test_transcript_that_cannot_be_created_records_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    t = Transcript(blocker / "sub")
    t.record("session_start")
    with pytest.raises(OSError):
        await t.open()
    t.record("frame_in")
    assert t.path is None and t._queue.qsize() == 0
    await t.close()


def _png(width: int, height: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (1, 2, 3)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_images_over_the_pixel_cap_are_refused_from_the_header():
    bomb = _png(6000, 6000)
    started = time.monotonic()
    with pytest.raises(ImageError, match="over 2,500,000 pixels"):
        prepare_image(bomb, ImageConfig())
    assert time.monotonic() - started < 0.5  # no pixel decoded
    assert prepare_image(_png(1124, 1080), ImageConfig()).width == 512  # a 4K board crop is fine


async def test_image_pool_decodes_on_its_own_threads():
    pool = ImagePool(2)
    try:
        images = await asyncio.gather(*(pool.prepare(_png(600, 600), ImageConfig()) for _ in range(4)))
    finally:
        pool.close()
    assert all(i.width == 512 for i in images)


def test_throttle_lets_one_through_per_interval_and_counts_the_rest():
    throttle = Throttle(10)
    assert throttle.ready(0) == (True, 0)
    assert [throttle.ready(t)[0] for t in (1, 2, 3)] == [False, False, False]
    assert throttle.ready(11) == (True, 3)


async def test_a_huge_record_keeps_its_head_and_length_only(tmp_path):
    t = Transcript(tmp_path)
    await t.open()
    t.record("llm", text="q" * 5_000_000)
    await t.close()
    assert t.path is not None
    text = t.path.read_text()
    assert len(text) < 20_000 and '"clipped_chars"' in text


async def test_a_body_far_over_max_tokens_is_refused_from_its_length_and_not_retried():
    async with FakeOpenAI() as fake:
        fake.enqueue(FakeReply.ok('{"reply": "' + "z" * 3_000_000 + '"}'))
        client = LLMClient(LLMConfig(base_url=fake.base_url, api_key_required=False), None)
        try:
            result = await client.complete_json([{"role": "user", "content": "x"}], {"type": "object"})
        finally:
            await client.aclose()
    assert result.error is not None and "far over max_tokens=600; not read" in result.error, result.error
    assert len(fake.chat_requests) == 1  # not retried
