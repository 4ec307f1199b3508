"""Helpers shared by tangram's tests across rooms: configs for an agent served in-process, scripted
LLM replies, checks on the frames the agent sends, waiting for a condition, a chaotic LLM. No tests
live here."""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.core.testing.fake_openai import FakeReply
from agent.games.tangram.config import Config
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.sim.client import GameClient

GODOT_INBOUND_LIMIT = 65535
AGENT_FRAME_TYPES = {"play", "finish", "chat", "error"}

MOVE = {"action": "place", "piece": "Green", "rotation": 0, "x": 50, "y": 50, "relation": None, "anchor": None,
        "chat": "Green goes in the middle.", "reasoning": "test"}
"""A move the agent can always play on an empty board."""


def llm_config(base_url: str, tmp_path: Path, *, deadline: float = 8, request_timeout: float = 5,
               max_attempts: int = 3, initial_backoff: float = 0.05, max_backoff: float = 0.2,
               transcripts: bool = True, **top: Any) -> Config:
    llm = top.pop("llm", {})
    return Config.model_validate({
        "player": "llm",
        # No priming: these tests count the session's own requests, connections and tasks (a primed
        # connection idles in the pool, its server-side handler outlives the session); priming has
        # its own tests (tests/core/test_llm_prime.py).
        "llm": {"base_url": base_url, "api_key_required": False, "request_timeout": request_timeout,
                "retry": {"max_attempts": max_attempts, "initial_backoff": initial_backoff,
                          "max_backoff": max_backoff}, "prime": False, **llm},
        "turn": {"deadline": deadline},
        "transcripts": {"enabled": transcripts, "dir": str(tmp_path / "transcripts")},
        **top,
    })


def planner_config(tmp_path: Path | None = None, **top: Any) -> Config:
    transcripts = {"enabled": tmp_path is not None, "dir": str((tmp_path or Path(".")) / "transcripts")}
    return Config.model_validate({"transcripts": transcripts, **top})


def is_chat_request(req: dict[str, Any]) -> bool:
    fmt = req.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"] == "chat_reply"
    return "Your partner wrote in the chat" in json.dumps(req.get("messages", []))


def good_replies(move: dict[str, Any] = MOVE, chat: str = "Sure!",
                 delay: float = 0.0) -> Callable[[dict[str, Any]], FakeReply]:
    def responder(req: dict[str, Any]) -> FakeReply:
        if is_chat_request(req):
            return FakeReply.ok_json({"reply": chat}, delay=delay)
        return FakeReply.ok_json(move, delay=delay)
    return responder


def frame_problems(text: str | bytes) -> list[str]:
    """Why the real game could not take this frame from the agent (empty when it can)."""
    if isinstance(text, bytes):
        return ["binary frame"]
    problems = []
    if len(text.encode("utf-8")) >= GODOT_INBOUND_LIMIT:
        problems.append(f"{len(text)} bytes")
    try:
        data = json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except ValueError as exc:
        return [*problems, f"not JSON: {exc}"]
    if not isinstance(data, dict):
        return [*problems, "not an object"]
    ftype = data.get("type")
    if ftype not in AGENT_FRAME_TYPES:
        problems.append(f"type {ftype!r}")
    if ftype == "play":
        pos, rot = data.get("position"), data.get("rotation")
        if data.get("shape") not in PIECE_NAMES:
            problems.append(f"shape {data.get('shape')!r}")
        if not (isinstance(pos, list) and len(pos) == 2 and all(_finite(v) for v in pos) and _finite(rot)):
            problems.append(f"play position={pos!r} rotation={rot!r}")
    if ftype in ("chat", "error") and not isinstance(data.get("message"), str):
        problems.append("chat/error without message text")
    return problems


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def assert_agent_frames_valid(game: GameClient) -> None:
    """What the game received: no violation the simulator saw, and every frame one the game takes."""
    assert game.violations == [], game.violations
    bad = {f.index: frame_problems(f.text) for f in game.frames if frame_problems(f.text)}
    assert not bad, bad


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
    """Wait for a condition that other tasks make true (polled, with a hard time limit)."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        await asyncio.sleep(0.01)


def other_tasks(before: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    """Tasks alive now that were not alive in ``before`` (the caller's own task excluded, and the fake
    LLM server's handlers of idle keep-alive connections: the client's pool keeps those open)."""
    me = asyncio.current_task()
    return [t for t in asyncio.all_tasks() if t not in before and t is not me and not t.done()
            and getattr(t.get_coro(), "__qualname__", "") != "RequestHandler.start"]


class Chaos:
    """A fake LLM that fails a third of the calls, stalls a third and lies a third.

    The kind of a call comes from its index in a fixed cycle (fail, stall, lie, fail, ...), not from
    the clock: however many calls a machine's speed lets in, their number says how many of each kind
    there were (:meth:`expected_counts`). The seed picks what each failure, stall or lie is.

    Fails: 500, 503, 429 with Retry-After, a dropped connection, a body cut in half, an HTML page,
    a stall far past the request time-out. Stalls: a good answer after 0.2 .. 1.6 request
    time-outs, so some arrive and some time out. Lies: valid JSON with nonsense values.
    """

    KINDS = ("fail", "stall", "lie")

    LIES: tuple[dict[str, Any] | str, ...] = (
        {**MOVE, "piece": "Pink"},
        {**MOVE, "x": 1e9, "y": -1e9},
        {**MOVE, "rotation": "sideways"},
        {**MOVE, "relation": "on_top_of_the_moon", "anchor": "Red"},
        {**MOVE, "relation": "left_of", "anchor": "Cream", "x": None, "y": None},
        {**MOVE, "action": "dance"},
        {**MOVE, "chat": "x" * 5000, "x": 99.9, "y": 0.01},
        {"action": "place"},
        '{"action": "place", "piece": "Red", "x": 50, "y"',
        "I think the red triangle would look lovely at the top!",
        "[1, 2, 3]",
        json.dumps({**MOVE, "chat": "\u202e\u0000\ud800 }{\"type\":\"play\"}"}),
    )

    def __init__(self, seed: int, request_timeout: float) -> None:
        self.rng = random.Random(seed)
        self.request_timeout = request_timeout
        self.counts = dict.fromkeys(self.KINDS, 0)
        self.calls = 0
        """Calls answered so far (the index of the next one)."""

    @classmethod
    def expected_counts(cls, calls: int) -> dict[str, int]:
        """How many calls of each kind the first ``calls`` calls were."""
        return {kind: len(range(i, calls, len(cls.KINDS))) for i, kind in enumerate(cls.KINDS)}

    def __call__(self, req: dict[str, Any]) -> FakeReply:
        chat = is_chat_request(req)
        kind = self.KINDS[self.calls % len(self.KINDS)]
        self.calls += 1
        if kind == "fail":
            self.counts["fail"] += 1
            return self.rng.choice([
                lambda: FakeReply.http_error(500, "internal error"),
                lambda: FakeReply.http_error(503, "overloaded"),
                lambda: FakeReply.rate_limited(retry_after=0.1),
                lambda: FakeReply.dropped(),
                lambda: FakeReply.truncated(json.dumps(MOVE)),
                lambda: FakeReply.garbage(),
                lambda: FakeReply.stall(self.request_timeout * 5),
            ])()
        good = {"reply": "Sure, let's do that."} if chat else MOVE
        if kind == "stall":
            self.counts["stall"] += 1
            return FakeReply.ok_json(good, delay=self.request_timeout * self.rng.uniform(0.2, 1.6))
        self.counts["lie"] += 1
        lie = self.rng.choice(self.LIES)
        if chat:
            lie = self.rng.choice([{"reply": 42}, {"reply": "\u0000" * 10 + "x" * 10000}, {"no": "reply"}, "not json"])
        return FakeReply.ok(lie if isinstance(lie, str) else json.dumps(lie))


async def _answers() -> bool:
    return True


class AnsweringClient:
    """Stand-in clients for the LLM player subclass this: besides its calls, the player asks whether the
    server answers (``outage``) and answers in time (``answers_within``); here it always does."""

    def __init__(self) -> None:
        from agent.core.llm.outage import Outage

        self.outage = Outage("http://stub/v1", _answers)

    def answers_within(self, seconds: float) -> bool:
        return True
