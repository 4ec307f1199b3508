"""What the experimenter console costs a game, and how fast it answers the experimenter.

    .venv/bin/python -m benchmarks.tangram.bench_console [--games 4] [--turns 7] [--pages 2] [--checks 200]

In one process: the agent (offline planner), the console with ``--pages`` pages connected over
real WebSockets, and ``--games`` simulated games played at once, each ``--turns`` turns. Prints:

- turn latency (playRequest to finish, as the game sees it) without the console and with it in
  autonomous mode: the console must add no more than noise;
- what a page receives per turn (messages, bytes);
- the editor's live check (pose -> collisions and repair preview) round trip, from a page;
- how soon a supervised review reaches a page after the game asked for a move.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from agent.games.tangram.config import Config
from agent.games.tangram.console.hub import Console
from agent.games.tangram.console.web import ConsoleServer
from agent.games.tangram.link.factory import make_player_factory
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.sim import GameClient


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(values: list[float]) -> str:
    return f"median {1000 * statistics.median(values):.1f} ms, p95 {1000 * pct(values, 0.95):.1f} ms (n={len(values)})"


@contextlib.asynccontextmanager
async def agent(config: Config, with_console: bool) -> AsyncIterator[tuple[str, Console | None, str | None]]:
    factory = make_player_factory(config)
    console = web = None
    source: Any = factory
    if with_console:
        console = Console(config)
        web = ConsoleServer(console, "127.0.0.1", 0, None)
        await web.start()
        source = console.wrap(factory)
    try:
        async with serve_agent(config, host="127.0.0.1", port=0, player_factory=source) as server:
            yield server.url, console, web.url if web is not None else None
    finally:
        if web is not None:
            await web.stop()
        await factory.aclose()


async def play(url: str, games: int, turns: int) -> list[float]:
    async def one(seed: int) -> list[float]:
        out = []
        async with GameClient(url, objective="A house", seed=seed, tween=0.0) as game:
            for _ in range(turns):
                turn = await game.ai_turn(deadline=60)
                if not turn.finished:
                    raise SystemExit(f"a turn did not finish: {turn.ended_by}")
                out.append(turn.latency or 0.0)
        return out
    results = await asyncio.gather(*(one(i) for i in range(games)))
    return [x for r in results for x in r]


async def page_reader(ws: aiohttp.ClientWebSocketResponse, counts: dict[str, int]) -> None:
    async for msg in ws:
        counts["messages"] += 1
        counts["bytes"] += len(msg.data)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--turns", type=int, default=7)
    ap.add_argument("--pages", type=int, default=2, help="pages watching while the games play (at least 1)")
    ap.add_argument("--checks", type=int, default=200)
    ap.add_argument("--supervised", type=int, default=20, help="supervised turns to time")
    args = ap.parse_args()
    config = Config.model_validate({"transcripts": {"dir": tempfile.mkdtemp(prefix="bench-console-")}})

    async with agent(config, with_console=False) as (url, _, _):
        await play(url, 1, 1)  # warm-up: the figure library, shapely
        plain = await play(url, args.games, args.turns)
    print(f"turn latency without the console: {ms(plain)}")

    async with agent(config, with_console=True) as (url, console, page_url), aiohttp.ClientSession() as http:
        assert console is not None and page_url is not None
        counts = {"messages": 0, "bytes": 0}
        sockets = [await http.ws_connect(page_url + "ws", max_msg_size=0) for _ in range(args.pages)]
        readers = [asyncio.create_task(page_reader(ws, counts)) for ws in sockets]
        await play(url, 1, 1)
        counts.update(messages=0, bytes=0)
        with_console = await play(url, args.games, args.turns)
        await asyncio.sleep(0.2)  # the last coalesced update
        turns = args.games * args.turns
        print(f"turn latency with the console, autonomous, {args.pages} pages open: {ms(with_console)}")
        print(f"a page receives per turn: {counts['messages'] / turns / args.pages:.1f} messages, "
              f"{counts['bytes'] / turns / args.pages / 1024:.1f} KiB")

        ws = await http.ws_connect(page_url + "ws", max_msg_size=0)  # a fresh page for the timings
        sockets.append(ws)
        async with GameClient(url, objective="A house", seed=99, tween=0.0) as game:
            for _ in range(100):
                if console.games:
                    break
                await asyncio.sleep(0.01)
            gid = max(console.games.values(), key=lambda g: g.started).id
            await game.ai_turn(deadline=60)
            rtts = []
            for i in range(args.checks):
                pose = {"piece": "Purple", "x": 20 + (i % 60), "y": 30 + (i % 40), "rotation": 45 * (i % 8)}
                sent = time.perf_counter()
                await ws.send_str(json.dumps({"type": "check", "game": gid, "seq": i, "pose": pose}))
                while True:
                    data = json.loads((await ws.receive()).data)
                    if data["type"] == "checked" and data["seq"] == i:
                        break
                rtts.append(time.perf_counter() - sent)
            print(f"editor check round trip from a page: {ms(rtts)}")

            console.games[gid].set_mode("supervised", "bench")
            waits = []
            last = 0
            for _ in range(args.supervised):
                asked = time.perf_counter()
                pending = asyncio.create_task(game.ai_turn(deadline=60))
                while True:
                    data = json.loads((await ws.receive()).data)
                    fresh = [r for r in data["game"]["reviews"] if r["id"] > last] if data["type"] == "game" \
                        and data["game"]["id"] == gid else []
                    if fresh:  # (an update sent just before the last verdict still lists that review)
                        review = fresh[0]
                        last = review["id"]
                        break
                waits.append(time.perf_counter() - asked)
                await ws.send_str(json.dumps({"type": "verdict", "game": gid, "review": review["id"],
                                              "action": "approve"}))
                await pending
                await game.human_turn()
            print(f"supervised: playRequest to the review on the page: {ms(waits)}")
        for task in readers:
            task.cancel()
        for sock in sockets:
            await sock.close()


if __name__ == "__main__":
    asyncio.run(main())
