"""Hostile LLM replies and floods of LLM calls, over real sockets (issue 10, findings 1, 2 and 7).

The agent runs in-process (``serve_agent`` on port 0); the fake OpenAI-compatible server runs on a
thread of its own, so the only work on the agent's event loop is the agent's; a bystander game on
another thread pings the agent to measure how long the loop froze.
"""

from __future__ import annotations

import asyncio
import json
import re

from websockets.asyncio.client import connect

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim.client import GameClient
from tests.tangram.link.socket_support import bystander, play_one_turn, play_request, records
from tests.tangram.support import good_replies, is_chat_request, llm_config

BRACES = 10_000
"""n '{' then n '}': 29.5 s of frozen event loop before the fix (quadratic extraction)."""
FREEZE_LIMIT_S = 0.5
"""What a bystander may see at worst on this shared 2-core machine; the goal is ~0.1 s."""


async def test_a_reply_of_nested_braces_freezes_no_other_game(tmp_path):
    # max_tokens high enough that the 20,000-character reply is within the reply cap and parsed.
    config = llm_config("", tmp_path, deadline=8, llm={"structured_output": "text", "max_tokens": 16384})
    reply = "{" * BRACES + "}" * BRACES
    with FakeOpenAI(responder=lambda req: FakeReply.ok(reply)) as fake:
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": fake.base_url})})
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            async with bystander(server.url) as watcher, connect(server.url) as ws:
                frames = await play_one_turn(ws, play_request(), timeout=20)
            assert frames[-1]["type"] == "finish"
            assert watcher.worst < FREEZE_LIMIT_S, f"a bystander waited {watcher.worst:.2f} s for a pong"
    llm = records(server.transcript_paths(), "llm")
    assert llm and "unusable" not in json.dumps(llm)  # the reply held only "{}": found, then refused as a move


async def test_a_reply_far_over_max_tokens_is_refused_unread(tmp_path):
    reply = "{" * BRACES + "}" * BRACES  # 20,000 characters: no 600-token reply is that long
    with FakeOpenAI(responder=lambda req: FakeReply.ok(reply)) as fake:
        async with serve_agent(llm_config(fake.base_url, tmp_path, deadline=8, llm={"structured_output": "text"}),
                               host="127.0.0.1", port=0) as server:
            async with bystander(server.url) as watcher, connect(server.url) as ws:
                frames = await play_one_turn(ws, play_request(), timeout=20)
            assert frames[-1]["type"] == "finish" and watcher.worst < FREEZE_LIMIT_S
    errors = [r["error"] for r in records(server.transcript_paths(), "llm")]
    # The message names the max_tokens each request carried (sized to the schema, at most the config's 600).
    assert errors and all(re.search(r"far over max_tokens=\d+;", e) for e in errors), errors


async def test_one_huge_chat_reply_does_not_poison_later_prompts(tmp_path):
    """400,000 characters in one reply (within the cap of a 16,384-token model): later prompts stay small."""
    huge = "y" * 400_000
    sent = {"huge": False}

    def responder(req):
        if is_chat_request(req) and not sent["huge"]:
            sent["huge"] = True
            return FakeReply.ok_json({"reply": huge})
        return good_replies()(req)

    config = llm_config("", tmp_path, deadline=8, llm={"max_tokens": 16384})
    with FakeOpenAI(responder=responder) as fake:
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": fake.base_url})})
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            async with GameClient(server.url, chat_timeout=10) as game:
                first = await game.chat("tell me everything")
                assert first.reply is not None and len(first.reply) <= 600  # the chat box got one line
                assert (await game.chat("and now?")).reply == "Sure!"
                assert (await game.ai_turn(deadline=10)).finished
                memory = [e.text for s in server.sessions for e in s.memory.entries]
        # The text of each request (the pictures are the game's textured ones, about 150 KB each).
        bodies = [len(r.body) - sum(len(u) for u in r.image_urls()) for r in fake.chat_requests]
    assert memory and max(map(len, memory)) <= 1000, [len(t) for t in memory]
    assert len(bodies) == 3 and max(bodies[1:]) < 64_000, bodies  # 400 kB+ each before the fix


async def test_a_20_mb_reply_is_refused_and_bounds_transcript_and_prompts(tmp_path):
    big = json.dumps({"reply": "z" * 20_000_000})
    sent = {"big": False}

    def responder(req):
        if is_chat_request(req) and not sent["big"]:
            sent["big"] = True
            return FakeReply.ok(big)
        return good_replies()(req)

    with FakeOpenAI(responder=responder) as fake:
        async with serve_agent(llm_config(fake.base_url, tmp_path, deadline=8, request_timeout=20),
                               host="127.0.0.1", port=0) as server:
            async with bystander(server.url) as watcher, GameClient(server.url, chat_timeout=20) as game:
                assert (await game.chat("hello")).reply is not None
                assert (await game.chat("again")).reply == "Sure!"
                assert (await game.ai_turn(deadline=10)).finished
        bodies = [len(r.body) - sum(len(u) for u in r.image_urls()) for r in fake.chat_requests]  # text only
    # Before: 7.2 s of frozen loop, a 44 MB transcript, and every later request over the fake's 1 MB limit (413).
    assert max(bodies) < 64_000, bodies
    assert sum(p.stat().st_size for p in server.transcript_paths()) < 1_000_000
    assert watcher.worst < FREEZE_LIMIT_S, watcher.worst  # refused from its Content-Length, never read


async def test_llm_calls_are_capped_for_the_process_and_plays_go_first(tmp_path):
    """3 games flood the chat (4 answers each in flight at most), then one turn: the turn's call
    overtakes the queued chat calls instead of waiting for all of them."""
    limit, delay = 2, 0.5
    config = llm_config("", tmp_path, deadline=10, request_timeout=5, llm={"max_in_flight": limit},
                        images={"send_board": False, "send_drawer": False})
    with FakeOpenAI(responder=good_replies(delay=delay)) as fake:
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": fake.base_url})})
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            games = [GameClient(server.url, seed=i, chat_timeout=20) for i in range(4)]
            for game in games:
                await game.connect()
            try:
                for game in games[:3]:
                    for k in range(4):
                        await game.send_chat(f"flood {k}")
                while fake.in_flight < limit:
                    await asyncio.sleep(0.01)
                turn = await games[3].ai_turn(deadline=15)
                for game in games[:3]:
                    await game.settle_chats(20)
                    assert all(c.reply is not None for c in game.chats)
            finally:
                for game in games:
                    await game.close()
    assert turn.finished
    # 12 chat calls queued at 2 at a time would hold a first-come turn for 6 rounds (3 s); a play
    # waits only for the round in flight, then takes the next slot.
    assert turn.latency is not None and turn.latency < 4 * delay, turn.latency
    assert fake.max_in_flight <= limit  # before: every call at once (100 for 20 games under a chat flood)
