"""The tangram server under a burst and a slowloris mix: refusals, resets and time to play.

The real command (``python -m agent``) on a free loopback port: 100 games at once that re-dial
until each has played a turn (after Retry-After when given, 1 s otherwise), then 800 hostile
sockets (silent TCP, half upgrades, half frames, open fragments) with the game arriving 2 s later.

    .venv/bin/python -m benchmarks.tangram.bench_hostile [burst loris]
    .venv/bin/python -m benchmarks.tangram.bench_hostile --tree /path/to/older/checkout

``--tree`` runs the agent from another checkout: how docs/robustness.md's "before" figures were taken.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from benchmarks.hostile_support import chosen, free_port, parser, start_agent, wait_for_text
from tests.tangram.link.socket_support import play_one_turn, play_request
from tests.tangram.link.test_connection_limits import release, slowloris

CASES = ("burst", "loris")
GAMES = 100
EACH = 200


async def start(tree: Path) -> tuple[asyncio.subprocess.Process, str, int]:
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    (work / "t.yaml").write_text("transcripts:\n  enabled: false\n")
    port = free_port()
    log = work / "stderr.log"
    proc = await start_agent(tree, ["--config", str(work / "t.yaml"), "--host", "127.0.0.1", "--port", str(port)],
                             work, log)
    await wait_for_text(log, "listening on")
    return proc, f"ws://127.0.0.1:{port}", port


async def game(url: str, stats: Counter[str], deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            async with connect(url, open_timeout=10, ping_interval=None) as ws:
                if (await play_one_turn(ws, play_request(), timeout=20))[-1]["type"] == "finish":
                    stats["played"] += 1
                    return
        except InvalidStatus as exc:
            after = exc.response.headers.get("Retry-After")
            stats["503 with Retry-After" if after else f"HTTP {exc.response.status_code} without Retry-After"] += 1
            await asyncio.sleep(float(after) if after else 1.0)
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else None
            stats["closed with 1013 (replaced)" if code == 1013 else f"closed ({code})"] += 1
            await asyncio.sleep(0.2)
        except Exception as exc:  # a reset: what a client sees as "did not receive a valid HTTP response"
            stats[f"no HTTP answer ({type(exc).__name__})"] += 1
            await asyncio.sleep(1.0)


async def burst(tree: Path) -> None:
    proc, url, _ = await start(tree)
    stats: Counter[str] = Counter()
    started = time.monotonic()
    try:
        await asyncio.gather(*(game(url, stats, started + 60) for _ in range(GAMES)))
    finally:
        proc.terminate()
        await proc.wait()
    print(f"{GAMES} games at once (server.max_connections 64), each re-dialling until it has played a turn: "
          f"{dict(stats)}; {time.monotonic() - started:.1f} s")


async def loris(tree: Path) -> None:
    proc, url, port = await start(tree)
    held: list[Any] = []
    try:
        held = await slowloris(url, port, EACH)
        await asyncio.sleep(2.0)
        started = time.monotonic()
        refused = 0
        played = False
        while not played and time.monotonic() - started < 30:
            try:
                async with connect(url, open_timeout=3) as ws:
                    played = (await play_one_turn(ws, play_request(), timeout=10))[-1]["type"] == "finish"
            except Exception:
                refused += 1
                await asyncio.sleep(0.25)
        print(f"slowloris mix ({4 * EACH} sockets: silent TCP, half upgrades, half frames, open fragments), the game "
              f"2 s in: played after {time.monotonic() - started:.2f} s, {refused} refused attempts")
    finally:
        release(held)
        proc.terminate()
        await proc.wait()


async def main(cases: list[str], tree: Path) -> None:
    if "burst" in cases:
        await burst(tree)
    if "loris" in cases:
        await loris(tree)


if __name__ == "__main__":
    args = parser(__doc__ or "", CASES).parse_args()
    asyncio.run(main(chosen(args, CASES), args.tree.resolve()))
