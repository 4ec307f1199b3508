"""Fake-LLM behaviours for the Forge player, as responders for the core's FakeOpenAI server.

:func:`sensible` answers in the right shape with numbers taken from the prompt's option lines (a
model that follows instructions); :func:`chaotic` mixes in everything a real model or provider
does wrong: numbers out of range, duplicates, wrong shapes, strings, prose, truncated JSON, empty
replies, HTTP errors and stalls past the decision deadline.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from agent.core.testing.fake_openai import FakeReply
from agent.core.testing.random_schema import random_instance, request_schema

_OPTION = re.compile(r"^(-?\d+): (.*)$", re.MULTILINE)


def _prompt(body: dict[str, Any]) -> tuple[str, str]:
    """(answer kind, user prompt text) from a chat request."""
    messages = body.get("messages") or []
    text = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    rf = body.get("response_format") or {}
    name = (rf.get("json_schema") or {}).get("name", "") if isinstance(rf, dict) else ""
    kind = name.removeprefix("forge_") if name.startswith("forge_") else ""
    if not kind:
        markers = (("attack", '"attacks"'), ("block", '"blocks"'), ("target", '"indices"'), ("action", '"index"'))
        for k, marker in markers:
            if marker in text:
                kind = k
                break
    return kind, text


def _numbers(text: str) -> tuple[list[int], list[int]]:
    """Option numbers before and after the second list heading (defenders / attacking creatures)."""
    heading = "\nDefenders:" if "\nDefenders:" in text else "\nAttacking creatures:"
    head, _, tail = text.partition(heading)
    first = [int(n) for n, _ in _OPTION.findall(head)]
    second = [int(n) for n, _ in _OPTION.findall(tail)]
    return first, second


def sensible_content(body: dict[str, Any], rng: random.Random) -> str:
    kind, text = _prompt(body)
    first, second = _numbers(text)
    m = re.search(r"between (\d+) and (\d+) different", text)
    if kind == "action":
        return json.dumps({"index": rng.choice(first) if first else -1, "reasoning": "fake: any offered option"})
    if kind == "target":
        low = int(m.group(1)) if m else 1
        high = int(m.group(2)) if m else 1
        n = min(len(first), max(low, min(high, 1)))
        return json.dumps({"indices": rng.sample(first, n), "reasoning": "fake: offered targets"})
    if kind == "attack":
        pairs = [{"attacker": a, "defender": second[0]} for a in first if second and rng.random() < 0.5]
        return json.dumps({"attacks": pairs, "reasoning": "fake: some attackers"})
    used = rng.sample(first, min(len(first), len(second)))
    pairs = [{"blocker": b, "attacker": rng.choice(second)} for b in used if rng.random() < 0.5]
    return json.dumps({"blocks": pairs, "reasoning": "fake: some blocks"})


def sensible(seed: int = 0, delay: float = 0.0) -> Any:
    rng = random.Random(seed)

    def respond(body: dict[str, Any]) -> FakeReply:
        return FakeReply(content=sensible_content(body, rng), delay=delay)

    return respond


CHAOS = ("sensible", "out_of_range", "duplicates", "wrong_shape", "strings", "prose", "truncated", "empty",
         "http_500", "http_400", "stall", "garbage", "negative", "too_many", "http_429", "random_json")
"""``http_429``: rate limited (with a Retry-After); ``random_json``: a random instance of the request's
schema (legal options only, chosen at random: a careless model under structured output)."""


def chaotic(seed: int = 0, stall_s: float = 5.0, delay: float = 0.0) -> Any:
    """A responder whose every reply is drawn from :data:`CHAOS`; ``stall_s`` should exceed the deadline."""
    rng = random.Random(seed)

    def respond(body: dict[str, Any]) -> FakeReply:
        kind, text = _prompt(body)
        first, second = _numbers(text)
        mode = rng.choice(CHAOS)
        big = max(first + second + [0]) + rng.randint(1, 50)
        if mode == "sensible":
            return FakeReply(content=sensible_content(body, rng), delay=delay)
        if mode == "out_of_range":
            content = {"action": {"index": big, "reasoning": "x"}, "target": {"indices": [big], "reasoning": "x"},
                       "attack": {"attacks": [{"attacker": big, "defender": big}], "reasoning": "x"},
                       "block": {"blocks": [{"blocker": big, "attacker": 0}], "reasoning": "x"},
                       }.get(kind, {"index": big})
            return FakeReply.ok_json(content, delay=delay)
        if mode == "duplicates":
            n = first[0] if first else 0
            content = {"action": {"index": n, "reasoning": "dup"}, "target": {"indices": [n, n, n], "reasoning": "dup"},
                       "attack": {"attacks": [{"attacker": n, "defender": 0}] * 3, "reasoning": "dup"},
                       "block": {"blocks": [{"blocker": n, "attacker": s} for s in second] * 2, "reasoning": "dup"}
                       }.get(kind, {})
            return FakeReply.ok_json(content, delay=delay)
        if mode == "wrong_shape":
            return FakeReply.ok_json({"choice": "attack everything", "moves": [1, 2], "index": {"a": 1}}, delay=delay)
        if mode == "strings":
            return FakeReply.ok_json({"index": "two", "indices": ["0", "x"], "attacks": [["a", "b"]],
                                      "blocks": "none", "reasoning": 5}, delay=delay)
        if mode == "prose":
            return FakeReply(content="I think the best play here is to attack with everything!", delay=delay)
        if mode == "truncated":
            return FakeReply(content='{"index": 1, "reas', finish_reason="length", delay=delay)
        if mode == "empty":
            return FakeReply(content="", delay=delay)
        if mode == "http_500":
            return FakeReply.http_error(500, "upstream overloaded", delay=delay)
        if mode == "http_400":
            return FakeReply.http_error(400, "bad request", delay=delay)
        if mode == "stall":
            return FakeReply.stall(stall_s, content=sensible_content(body, rng))
        if mode == "garbage":
            return FakeReply.garbage()
        if mode == "http_429":
            return FakeReply.rate_limited(retry_after=0.2)
        if mode == "random_json":
            schema = request_schema(body)
            if schema is not None:
                return FakeReply.ok_json(random_instance(schema, rng), delay=delay)
            return FakeReply.ok_json({"reasoning": "random", "index": rng.randint(-3, 30)}, delay=delay)
        if mode == "negative":
            return FakeReply.ok_json({"index": -7, "indices": [-1], "attacks": [{"attacker": -1, "defender": -1}],
                                      "blocks": [{"blocker": -2, "attacker": -3}], "reasoning": "neg"}, delay=delay)
        # too_many: every option at once, more targets than max, every blocker on every attacker
        content = {"action": {"index": first[-1] if first else 0, "reasoning": "last"},
                   "target": {"indices": first, "reasoning": "all"},
                   "attack": {"attacks": [{"attacker": a, "defender": d} for a in first for d in second],
                              "reasoning": "all"},
                   "block": {"blocks": [{"blocker": b, "attacker": a} for b in first for a in second],
                             "reasoning": "all"},
                   }.get(kind, {})
        return FakeReply.ok_json(content, delay=delay)

    return respond
