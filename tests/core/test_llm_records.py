"""The ``llm`` record every game writes, for calls that answered and calls that never did."""

from __future__ import annotations

import json
import time
from pathlib import Path

from agent.core.llm import LLMResult
from agent.core.llm.records import message_texts, record_llm_result, record_llm_unfinished
from agent.core.transcript import Transcript

MESSAGES = [
    {"role": "system", "content": "Rules of the game."},
    {"role": "user", "content": [{"type": "text", "text": "Your move."},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
]


def test_message_texts_keep_text_parts_and_replace_images() -> None:
    assert message_texts(MESSAGES) == [{"role": "system", "text": "Rules of the game."},
                                       {"role": "user", "text": "Your move.\n[image]"}]


async def test_results_and_unfinished_calls_share_one_shape(tmp_path: Path) -> None:
    t = Transcript(tmp_path)
    await t.open()
    started = time.monotonic()
    record_llm_result(t, "play", MESSAGES, started, LLMResult(text='{"a": 1}', model="m", prompt_tokens=7),
                      image_bytes=4)
    record_llm_result(t, "play", MESSAGES, started, LLMResult(error="HTTP 500", model="m"))
    record_llm_unfinished(t, "chat", MESSAGES, started, "timeout", "m")
    record_llm_unfinished(t, "chat", MESSAGES, started, "cancelled", "m")
    record_llm_unfinished(None, "chat", MESSAGES, started, "cancelled", "m")  # no transcript: nothing, no error
    await t.close()
    assert t.path is not None
    records = [json.loads(line) for line in t.path.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["system_prompt", "llm", "llm", "llm", "llm"]
    calls = records[1:]
    assert [c["outcome"] for c in calls] == ["ok", "error", "timeout", "cancelled"]
    assert [c["error"] for c in calls] == [None, "HTTP 500", "no answer in time", "cancelled before an answer"]
    # The system prompt is written once, then named by its hash; no image bytes reach the file.
    assert {c["system_sha256"] for c in calls} == {records[0]["sha256"]}
    assert all(c["messages"] == [{"role": "user", "text": "Your move.\n[image]"}] for c in calls)
    assert calls[0]["prompt_tokens"] == 7 and calls[0]["image_bytes"] == 4 and calls[2]["text"] is None
    assert all(c["elapsed_s"] >= 0 for c in calls)
