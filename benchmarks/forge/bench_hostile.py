"""The Forge endpoint against hostile clients: status counts, log bytes and tracebacks per case.

The real command (``python -m agent --game forge``) on a free loopback port: 400 slow bodies
(1,000 bytes announced, 10 sent) while a real request comes every 0.5 s for 15 s, then their
hang-up; 256 clients hanging up mid-body; 100 malformed requests; options with indices Forge could not read.

    .venv/bin/python -m benchmarks.forge.bench_hostile [slow hangup malformed indices]
    .venv/bin/python -m benchmarks.forge.bench_hostile --tree /path/to/older/checkout

``--tree`` runs the agent from another checkout: how docs/robustness.md's "before" figures were taken.
"""

from __future__ import annotations

import asyncio
import copy
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp

from agent.games.forge.fake.catalogue import catalogue
from benchmarks.hostile_support import chosen, free_port, log_figures, log_size, parser, start_agent, wait_for_text

CASES = ("slow", "hangup", "malformed", "indices")
SLOW_CLIENTS = 400
"""More than the 256 decision slots (with 300, one slot was sometimes left free before the fix)."""
MALFORMED = [b"POST /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
             b"POST / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 100_000 + b"\r\nContent-Length: 2\r\n\r\n{}",
             b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
             b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"]


def body() -> dict[str, Any]:
    return copy.deepcopy(catalogue("possible_actions")[0][1])


async def slow(http: aiohttp.ClientSession, url: str, port: int, log: Path) -> None:
    held = []
    for _ in range(SLOW_CLIENTS):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                     b'{"gameId":')
        await writer.drain()
        held.append((reader, writer))
    statuses: Counter[int] = Counter()
    started = time.monotonic()
    first_ok = None
    while time.monotonic() - started < 15:
        async with http.post(url, json=body()) as response:
            statuses[response.status] += 1
            if response.status == 200 and first_ok is None:
                first_ok = time.monotonic() - started
        await asyncio.sleep(0.5)
    closed = 0
    for reader, _ in held:
        try:
            await asyncio.wait_for(reader.read(), 0.05)
            closed += 1
        except (TimeoutError, ConnectionError):
            pass
    before = log_size(log)
    for _, writer in held:
        writer.transport.abort()
    await asyncio.sleep(3)
    size, tracebacks = log_figures(log, before)
    print(f"{SLOW_CLIENTS} slow bodies, a real request every 0.5 s for 15 s: statuses {dict(statuses)}, first 200 "
          f"after {first_ok if first_ok is None else round(first_ok, 2)} s; slow ones closed by the agent within "
          f"15 s: {closed}; when they hang up: {size} bytes of log, {tracebacks} tracebacks")


async def hangup(port: int, log: Path) -> None:
    before = log_size(log)
    writers = []
    for _ in range(256):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + b'{"gameId":')
        await writer.drain()
        writers.append(writer)
    await asyncio.sleep(1.0)
    for writer in writers:
        writer.transport.abort()
    await asyncio.sleep(2.0)
    size, tracebacks = log_figures(log, before)
    print(f"256 clients hanging up 1 s into their body: {size} bytes of log, {tracebacks} tracebacks")


async def malformed(port: int, log: Path) -> None:
    before = log_size(log)
    answers: Counter[bytes] = Counter()
    for _ in range(25):
        for raw in MALFORMED:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(raw)
            try:
                await writer.drain()
                answer = await asyncio.wait_for(reader.read(), 5)
            except (ConnectionError, TimeoutError):
                answer = b"(reset)"
            writer.close()
            answers[answer[:12]] += 1
    await asyncio.sleep(0.5)
    size, tracebacks = log_figures(log, before)
    print(f"{25 * len(MALFORMED)} malformed requests (100 KB URL, 100 KB header, bad and duplicate Content-Length): "
          f"answers {dict(answers)}; {size} bytes of log, {tracebacks} tracebacks")


async def indices(http: aiohttp.ClientSession, url: str) -> None:
    request = body()  # the two land drops, one of which the heuristic plays, numbered 2**70 and -4
    for option, index in zip(request["actionState"]["possible_actions"], (2**70, -4), strict=False):
        option["index"] = index
    async with http.post(url, json=request) as response:
        print(f"options numbered 2**70 and -4: {response.status} {(await response.text())[:160]}")


async def main(cases: list[str], tree: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    port = free_port()
    log = work / "stderr.log"
    proc = await start_agent(tree, ["--game", "forge", "--host", "127.0.0.1", "--port", str(port)], work, log)
    url = f"http://127.0.0.1:{port}/"
    try:
        await wait_for_text(log, "127.0.0.1")
        async with aiohttp.ClientSession() as http:
            for _ in range(100):  # the port is open a moment after the log line
                try:
                    async with http.get(url):
                        break
                except aiohttp.ClientError:
                    await asyncio.sleep(0.1)
            if "slow" in cases:
                await slow(http, url, port, log)
            if "hangup" in cases:
                await hangup(port, log)
            if "malformed" in cases:
                await malformed(port, log)
            if "indices" in cases:
                await indices(http, url)
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    args = parser(__doc__ or "", CASES).parse_args()
    asyncio.run(main(chosen(args, CASES), args.tree.resolve()))
