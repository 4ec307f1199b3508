"""LLM failures, disconnects and load over real sockets (issue 6, items 3, 4 and 5).

The agent runs in-process (``serve_agent`` on port 0), the games are the simulator's GameClient,
and the "model" is the fake OpenAI-compatible server speaking real HTTP to the real SDK.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket

import psutil
import pytest
from websockets.asyncio.server import ServerConnection

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.transcript import Transcript
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.link.session import Session
from agent.games.tangram.llm_player.player import LLMPlayer
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.simgame import SimGame
from tests.tangram.support import (
    MOVE,
    Chaos,
    assert_agent_frames_valid,
    good_replies,
    is_chat_request,
    llm_config,
    other_tasks,
    wait_until,
)

APOLOGY = "trouble deciding"


@pytest.mark.parametrize("name, failure", [
    ("timeout", lambda: FakeReply.stall(30, json.dumps(MOVE))),
    ("500", lambda: FakeReply.http_error(500, "internal error")),
    ("503", lambda: FakeReply.http_error(503, "overloaded")),
    ("429 with a long Retry-After", lambda: FakeReply.rate_limited(retry_after=3600)),
    ("dropped connection", lambda: FakeReply.dropped()),
    ("truncated body", lambda: FakeReply.truncated(json.dumps(MOVE))),
    ("JSON cut at max_tokens", lambda: FakeReply.ok('{"action": "place", "piece": "Gr', finish_reason="length")),
    ("HTML instead of JSON", lambda: FakeReply.garbage()),
    ("unknown piece", lambda: FakeReply.ok_json({**MOVE, "piece": "Pink"})),
    ("no piece", lambda: FakeReply.ok_json({**MOVE, "piece": None})),
    ("401", lambda: FakeReply.http_error(401, "Incorrect API key provided", code="invalid_api_key")),
])
async def test_each_llm_failure_ends_the_turn_with_an_apology_and_bounded_retries(tmp_path, name, failure):
    async with FakeOpenAI(responder=lambda req: failure()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=4, request_timeout=0.5, max_attempts=3),
                        host="127.0.0.1", port=0) as server:
        async with GameClient(server.url) as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and turn.plays == [] and turn.latency is not None and turn.latency <= 4
            assert any(APOLOGY in line for line in turn.chat), turn.chat
            assert_agent_frames_valid(game)
        assert 1 <= len(fake.chat_requests) <= 3  # max_attempts (or a play and its re-ask), never more
        await wait_until(lambda: fake.in_flight == 0, what="no LLM call left running")


async def test_connection_refused_ends_the_turn_with_an_apology(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = llm_config(f"http://127.0.0.1:{port}/v1", tmp_path, deadline=4, request_timeout=0.5)
    async with serve_agent(config, host="127.0.0.1", port=0) as server, GameClient(server.url) as game:
        turn = await game.ai_turn(deadline=10)
        assert turn.finished and turn.plays == [] and any(APOLOGY in line for line in turn.chat)
        reply = await game.chat("are you there?", timeout=5)
        assert reply.reply is not None
        assert_agent_frames_valid(game)


async def test_429_retry_after_is_waited_for_then_the_turn_plays(tmp_path):
    async with FakeOpenAI(responder=good_replies()) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=6, max_backoff=1.0), host="127.0.0.1",
                        port=0) as server:
        fake.enqueue(FakeReply.rate_limited(retry_after=0.4), FakeReply.rate_limited(retry_after_ms=300))
        async with GameClient(server.url) as game:
            turn = await game.ai_turn(deadline=10)
            assert turn.finished and [p.shape for p in turn.plays] == ["Green"]
        times = [r.received_at for r in fake.chat_requests[:3]]
        assert times[1] - times[0] >= 0.4 and times[2] - times[1] >= 0.3


async def test_chaotic_llm_every_turn_of_several_games_ends_within_the_deadline(tmp_path):
    """A third of the calls fail, a third stall, a third lie; 4 games at once, humans moving and chatting."""
    deadline, request_timeout = 3.0, 0.8
    chaos = Chaos(seed=int(os.environ.get("CHAOS_SEED", 6)), request_timeout=request_timeout)
    config = llm_config("", tmp_path, deadline=deadline, request_timeout=request_timeout, max_attempts=3,
                        initial_backoff=0.05, max_backoff=0.2)
    async with FakeOpenAI(responder=chaos) as fake:
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": fake.base_url})})

        # The games run on the agent's own event loop here: drawing their pictures (every frame, some
        # 0.2 s a picture, seconds on a loaded machine) would be time the agent's turns lose to the
        # simulator, counted against their deadline. The fake model looks at no picture.
        images = SimGame().images()

        async def one_game(i: int) -> list:
            human = ("chatty", "random")[i % 2]
            async with GameClient(server.url, objective=("A house", "A fish", "A cat", "A robot")[i], seed=i,
                                  human=human, chat_timeout=deadline + 2) as game:
                game.game.images = lambda *_: images  # type: ignore[method-assign]
                turns = []
                for _ in range(4):
                    turns.append(await game.ai_turn(deadline=deadline + 5))
                    await game.human_turn()
                await game.settle_chats(deadline + 2)
                assert_agent_frames_valid(game)
                assert all(c.reply is not None for c in game.chats), "a chat went unanswered"
                return turns

        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            results = await asyncio.gather(*(one_game(i) for i in range(4)))
        turns = [t for game in results for t in game]
        assert len(turns) == 16
        # What this test is about: every turn ended with the agent's finish, within the deadline.
        assert all(t.finished for t in turns), [t.ended_by for t in turns]
        assert max(t.latency for t in turns) <= deadline
        # The model was asked, and every call it got was chaos. How many calls fit in these turns depends
        # on the machine's speed (a slow one has less of a decision's time left to send one, and benches
        # the model sooner), but the kind of a call comes from its index in a fixed cycle, so the calls
        # made say how often each kind came (from 3 calls on, every kind).
        calls = len(fake.chat_requests)
        assert calls >= 1 and chaos.counts == Chaos.expected_counts(calls), (calls, chaos.counts)
        assert any(not t.plays for t in turns)  # the failures cost turns their move
        assert fake.max_in_flight >= 2
        await wait_until(lambda: fake.in_flight == 0, what="no LLM call left running")
    records = [json.loads(line) for p in server.transcript_paths() for line in p.read_text().splitlines()]
    outcomes = [r["outcome"] for r in records if r["kind"] == "turn_end"]
    assert len(outcomes) == 16 and "cancelled" not in outcomes and "internal-error" not in outcomes
    # A turn plays only when a usable answer came in time, fewer of them on a slow machine (none when
    # the model is benched early): what was played is checked, not how often. Each play the agent
    # sent reached its game, and the games saw no other.
    sent = [r for r in records if r["kind"] == "frame_out" and r["frame"].get("type") == "play"]
    assert len(sent) == sum(len(t.plays) for t in turns), (len(sent), [len(t.plays) for t in turns])


async def test_the_game_leaving_mid_turn_cancels_its_llm_call_and_leaves_no_task(tmp_path):
    async with FakeOpenAI(responder=lambda req: FakeReply.stall(60, json.dumps(MOVE))) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=60, request_timeout=60), host="127.0.0.1",
                        port=0) as server:
        before = set(asyncio.all_tasks())
        game = GameClient(server.url)
        await game.connect()
        await game.send_frame(game.game.start_ai_turn())
        await game.send_chat("hello?")  # a chat call in flight too
        await wait_until(lambda: fake.in_flight == 2, what="the play and chat LLM calls")
        await game.close()
        await wait_until(lambda: fake.in_flight == 0, timeout=3, what="the LLM calls to be cancelled")
        await wait_until(lambda: not server.sessions, timeout=3, what="the session to end")
        await wait_until(lambda: not other_tasks(before), timeout=3, what="every task of the session to end")
    records = [json.loads(line) for line in server.transcript_paths()[0].read_text().splitlines()]
    assert records[-1]["kind"] == "session_end" and records[-1]["reason"] == "disconnected"
    assert any(r["kind"] == "turn_end" and r["outcome"] == "cancelled" for r in records)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_100_connect_disconnect_cycles_leave_nothing_behind(tmp_path):
    """Half the cycles play a whole turn, half leave while the LLM is thinking."""
    stall = {"on": False}

    def responder(req):
        if stall["on"] and not is_chat_request(req):
            return FakeReply.stall(60, json.dumps(MOVE))
        return FakeReply.ok_json(MOVE)

    no_images = {"send_board": False, "send_drawer": False}  # image work is tested elsewhere; here it only costs time
    watched = (Session, Transcript, GameClient, ServerConnection, LLMPlayer)
    # Objects earlier tests left in library caches (aiohttp keeps its handlers' middleware chains in
    # an lru_cache) are not this test's to judge: only what these cycles leave counts.
    gc.collect()
    earlier = {id(o) for o in gc.get_objects() if isinstance(o, watched)}
    async with FakeOpenAI(responder=responder) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=60, request_timeout=60, images=no_images),
                        host="127.0.0.1", port=0) as server:

        calls = 0
        images = SimGame().images()

        async def cycle(i: int) -> None:
            nonlocal calls
            stall["on"] = i % 2 == 1
            async with GameClient(server.url, seed=i) as game:
                game.game.images = lambda *_: images  # type: ignore[method-assign] # rendering is the slow part
                if stall["on"]:
                    await game.send_frame(game.game.start_ai_turn())
                    await wait_until(lambda: bool(fake.chat_requests) and fake.in_flight == 1, what="the LLM call")
                else:
                    assert (await game.ai_turn(deadline=10)).finished
            # Clean-up takes milliseconds; the limit only tells a call cancelled from one left to run its
            # 60 s stall, so it stays well short of that and clear of a loaded machine's odd slow second.
            await wait_until(lambda: fake.in_flight == 0 and not server.sessions, timeout=20,
                             what=f"clean-up after cycle {i}")
            calls += len(fake.chat_requests)
            fake.requests.clear()  # the fake keeps every request body; that is the test's memory, not the agent's

        for i in range(6):  # warm-up: connection pools, caches, lazy imports
            await cycle(i)
        gc.collect()
        before_tasks = set(asyncio.all_tasks())
        fds, objects, rss = open_fds(), len(gc.get_objects()), psutil.Process().memory_info().rss
        for i in range(100):
            await cycle(i)
        gc.collect()
        await wait_until(lambda: not other_tasks(before_tasks), timeout=3, what="no task left behind")
        assert open_fds() <= fds + 2, (fds, open_fds())  # the LLM pool may keep one more idle socket
        # Python objects: what 100 sessions would leave is tens of thousands; allow the remembered
        # transcript paths and caches a few per cycle.
        assert len(gc.get_objects()) - objects < 2000, len(gc.get_objects()) - objects
        assert psutil.Process().memory_info().rss - rss < 20 * 2**20
        leftovers = [type(o).__name__ for o in gc.get_objects() if isinstance(o, watched) and id(o) not in earlier]
        assert not leftovers, leftovers
        assert calls >= 106
    assert len(server.transcript_paths()) == 106


async def test_load_many_games_at_once_every_turn_ends_and_turns_overlap(tmp_path):
    games, turns, delay = 12, 2, 0.5
    async with FakeOpenAI(responder=good_replies(delay=delay)) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, deadline=20), host="127.0.0.1", port=0) as server:

        async def one_game(i: int) -> list:
            async with GameClient(server.url, seed=i, human="random") as game:
                out = []
                for _ in range(turns):
                    out.append(await game.ai_turn(deadline=30))
                    await game.human_turn()
                assert_agent_frames_valid(game)
                return out

        results = await asyncio.gather(*(one_game(i) for i in range(games)))
    assert all(t.finished for game in results for t in game)
    assert fake.max_in_flight >= games // 2  # the calls overlapped instead of queueing one by one
