"""Issue 49's side-by-side measure: this agent against the GAIPS SimpleGPTAgent, cold and warm.

Both agents run as their own processes against the same fake LLM (its own process too), which
answers every request after ``--delay`` seconds: plays, feedback adjustments, chat replies, and
this agent's dialect probes and start-up priming alike (``--probe-delay`` changes the last two).
Each batch is ``--games`` simulated games at once, each of ``--turns`` rounds of an AI turn and a
human chat line sent during it (``--chat before``: sent before the turn, its reply awaited first).
The first batch connects as soon as the agent listens (cold: the probes and the priming are still
under way), the second to the same process (warm).

    .venv/bin/python -m benchmarks.tangram.bench_vs_gaips [--games 4] [--turns 2] [--delay 1.0]
        [--probe-delay SECONDS] [--chat during|before] [--ours-only] [--keep FILE.jsonl]
        [--gaips-repo /work/.mirror/GAIPS+TangramCollaborativeAI/repo]

Prints each agent's wall time per batch, the cold and warm speed-ups (goal: at least 6x cold),
and this agent's own time per AI turn with the games at once: the turn from its playRequest to its
``finish`` (transcript clock) less the LLM calls (``--delay`` each; each call's time as the agent
measured it on a second line) and less the game's animation waits (each play to its feedback).
Goal: at most 50 ms.

The GAIPS agent's Python sources (``models/``) are exported from the git mirror into a temporary
folder at run time (``git archive``) and run there with a launcher written here; nothing of theirs
is kept in this project. It reads ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` as the openai SDK does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import itertools
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import psutil

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.testing.random_schema import request_schema
from agent.games.tangram.sim.client import GameClient
from benchmarks.agent_process import agent_server, percentile
from benchmarks.tangram.bench_sloppy_llm import read_records, turn_times
from benchmarks.tangram.turn_tally import TurnTally

GAIPS_REPO = Path("/work/.mirror/GAIPS+TangramCollaborativeAI/repo")
CHAT_LINE = "Shall we start with the roof?"
MOVE = {"action": "place", "piece": "Green", "rotation": 0, "x": 50, "y": 50, "relation": None, "anchor": None,
        "chat": "Green goes in the middle.", "reasoning": "benchmark"}
TEXT_PLAY = "PLAY Green, 0, 50, 50 | Green goes in the middle."
REPLIES = tuple(f"{opener}, {piece} could go next." for piece in ("Red", "Blue", "Green", "Yellow", "Purple", "Cream")
                for opener in ("Sounds good", "Nice idea", "Yes"))
"""Chat answers in turn: a model that repeated its last line word for word would be caught as a copy."""
LAUNCHER = """\
import asyncio, sys, types
sys.path.insert(0, sys.argv[1])
try:
    import aiofiles  # noqa: F401  (imported by their template, unused by this agent)
except ImportError:
    sys.modules["aiofiles"] = types.ModuleType("aiofiles")
from models.simpleAgent.simpleGPTAgent import CustomAgent
asyncio.run(CustomAgent().start_server(host="127.0.0.1", port=int(sys.argv[2])))
"""


# ---- the fake LLM, answering both agents -------------------------------------------------------------


def _texts(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        parts.extend(part.get("text", "") if isinstance(part, dict) else str(part or "")
                     for part in (content if isinstance(content, list) else [content]))
    return "\n".join(parts)


def _instance(schema: Mapping[str, Any], reply: str) -> Any:
    """A plain, valid instance of one of this agent's answer schemas (not the move's)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return _instance(next((s for s in schema["anyOf"] if s.get("type") != "null"), schema["anyOf"][0]), reply)
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "object":
        return {k: _instance(v, reply) for k, v in (schema.get("properties") or {}).items()}
    return {"string": reply, "integer": 1, "number": 50, "boolean": False, "array": []}.get(str(kind))


def answer(body: dict[str, Any], count: int) -> FakeReply:
    """This agent asks with a JSON Schema; the GAIPS agent in its own text formats (play, adjustment,
    chat). ``count`` picks the chat line."""
    reply = REPLIES[count % len(REPLIES)]
    schema = request_schema(body)
    if schema is not None:
        props = schema.get("properties") or {}
        return FakeReply.ok_json(MOVE if "action" in props and "piece" in props else _instance(schema, reply))
    said = _texts(body)
    if "Feedback game state" in said:
        return FakeReply.ok("FINISH")
    if "The message you are replying to" in said:
        return FakeReply.ok(reply)
    return FakeReply.ok(TEXT_PLAY)


async def serve_fake(delay: float, probe_delay: float) -> None:
    """The fake as its own process (``--serve-fake``): the URL on stdout, until SIGINT."""
    counter = itertools.count()

    def delayed(body: dict[str, Any]) -> FakeReply:
        reply = answer(body, next(counter))
        reply.delay = delay
        return reply

    fake = FakeOpenAI(responder=delayed, default_delay=delay, prime_delay=probe_delay, probe_delay=probe_delay)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with fake:
        print(f"listening on {fake.base_url}", flush=True)
        await stop.wait()


@contextlib.asynccontextmanager
async def fake_process(delay: float, probe_delay: float) -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "benchmarks.tangram.bench_vs_gaips", "--serve-fake", "--delay", str(delay),
        "--probe-delay", str(probe_delay), stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
    try:
        if "listening on" not in first:
            raise SystemExit(f"fake LLM did not start: {first.strip()}")
        yield first.rsplit(" ", 1)[-1].strip()
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
        await proc.wait()


# ---- the games -----------------------------------------------------------------------------------------


async def one_game(url: str, turns: int, seed: str, chat: str, tally: TurnTally, chats: list[float]) -> None:
    """``chat`` "during": the line goes out just after the playRequest (a participant typing while the
    AI plays), and the round ends when both the turn and the reply are done; "before": the line and
    its reply, then the AI turn."""
    async with GameClient(url, objective="A house", seed=seed, human="passive", chat_timeout=120) as game:
        for _ in range(turns):
            if chat == "before":
                line = await game.chat(CHAT_LINE)
                turn = await game.ai_turn(deadline=120)
            else:
                playing = asyncio.create_task(game.ai_turn(deadline=120))
                await asyncio.sleep(0)  # the playRequest goes out first
                line = await game.chat(CHAT_LINE)
                turn = await playing
            if line.reply is None:
                raise SystemExit(f"no reply to the chat line in game {seed}")
            chats.append(line.latency or 0.0)
            if not turn.finished:
                raise SystemExit(f"game {seed}: a turn did not end with finish ({turn.ended_by})")
            tally.turn(turn)
        tally.game(game)


async def batch(url: str, args: argparse.Namespace, label: str, tally: TurnTally,
                chats: list[float] | None = None) -> float:
    """Wall time of one batch; each chat reply's wait goes into ``chats``."""
    start = time.perf_counter()
    waits: list[float] = [] if chats is None else chats
    await asyncio.gather(*(one_game(url, args.turns, f"{label}:{g}", args.chat, tally, waits)
                           for g in range(args.games)))
    return time.perf_counter() - start


# ---- the two agents -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_listening(port: int, proc: asyncio.subprocess.Process, timeout: float = 60) -> None:
    """Until the port takes a TCP connection (the GAIPS agent prints nothing we could wait for)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.returncode is not None:
            raise SystemExit(f"the GAIPS agent exited with {proc.returncode}")
        with contextlib.suppress(OSError):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            return
        await asyncio.sleep(0.02)
    raise SystemExit("the GAIPS agent did not listen in time")


def export_gaips(repo: Path, into: Path) -> None:
    """Their ``models/`` folder, from the mirror's HEAD, into ``into`` (read only at run time)."""
    tar = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", "HEAD", "models"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, filter="data")
    (into / "run_gaips.py").write_text(LAUNCHER, encoding="utf-8")


async def run_gaips(args: argparse.Namespace, base_url: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        export_gaips(args.gaips_repo, root)
        port = free_port()
        env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-benchmark"}
        launched = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(sys.executable, str(root / "run_gaips.py"), str(root), str(port),
                                                    env=env, stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL)
        try:
            await wait_listening(port, proc)
            listening = time.perf_counter() - launched
            tally = TurnTally()
            cold = await batch(f"ws://127.0.0.1:{port}", args, "cold", tally)
            warm = await batch(f"ws://127.0.0.1:{port}", args, "warm", tally)
        finally:
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()
    return {"cold": cold, "warm": warm, "start": listening, "turns": tally.finished}


async def run_ours(args: argparse.Namespace, base_url: str) -> dict[str, Any]:
    config: dict[str, Any] = {"player": "llm", "llm": {"base_url": base_url, "api_key_required": False}}
    launched = time.perf_counter()
    async with agent_server(config) as agent:
        listening = time.perf_counter() - launched
        url = f"ws://127.0.0.1:{agent.port}"
        tally = TurnTally()
        proc = psutil.Process(agent.process.pid)
        cpu = [sum(proc.cpu_times()[:2])]
        cold_chats: list[float] = []
        warm_chats: list[float] = []
        cold = await batch(url, args, "cold", tally, cold_chats)
        cpu.append(sum(proc.cpu_times()[:2]))
        await asyncio.sleep(0.5)  # each session's transcript is flushed when its game disconnects
        cold_sessions = {r.get("session") for r in read_records(agent.transcripts)}
        cpu.append(sum(proc.cpu_times()[:2]))
        warm = await batch(url, args, "warm", tally, warm_chats)
        cpu.append(sum(proc.cpu_times()[:2]))
        await asyncio.sleep(0.5)
        records = read_records(agent.transcripts)
    cold_records = [r for r in records if r.get("session") in cold_sessions]
    warm_records = [r for r in records if r.get("session") not in cold_sessions]
    rounds = args.games * args.turns  # an AI turn and a chat reply each
    return {"cold": cold, "warm": warm, "start": listening, "turns": tally.finished, "records": records,
            "cold_chats": cold_chats, "warm_chats": warm_chats,
            "cpu_cold_ms": 1000 * (cpu[1] - cpu[0]) / rounds, "cpu_warm_ms": 1000 * (cpu[3] - cpu[2]) / rounds,
            "cold_times": turn_times(cold_records, args.delay), "warm_times": turn_times(warm_records, args.delay)}


def own_line(label: str, times: list[dict[str, float]]) -> str:
    own = [t["own"] for t in times]
    measured = [t["own_vs_elapsed"] for t in times]
    if not own:
        return f"{label}: no turns"
    return (f"{label}, n={len(own)}: median {1000 * statistics.median(own):.1f} ms, "
            f"p90 {1000 * percentile(own, 0.9):.1f}, max {1000 * max(own):.1f} "
            f"(each call's time as the agent measured it instead: median {1000 * statistics.median(measured):.1f})")


async def main_async(args: argparse.Namespace) -> None:
    async with fake_process(args.delay, args.probe_delay) as base_url:
        ours = await run_ours(args, base_url)
        gaips = None if args.ours_only else await run_gaips(args, base_url)
    n = args.games * args.turns
    print(f"games={args.games} turns={args.turns} (each: an AI turn and a chat line {args.chat} it) "
          f"llm_delay={args.delay:g}s "
          f"probe_and_priming_delay={args.probe_delay:g}s load_average={os.getloadavg()[0]:.1f}")
    if args.keep:
        args.keep.write_text("".join(json.dumps(r) + "\n" for r in ours["records"]), encoding="utf-8")
    if gaips is None:
        print(f"ours only: turns ended with finish {ours['turns']}/{2 * n}, listening after launch "
              f"{ours['start']:.2f} s, cold {ours['cold']:.2f} s, warm {ours['warm']:.2f} s")
    else:
        print(f"turns ended with finish: ours {ours['turns']}/{2 * n}, GAIPS {gaips['turns']}/{2 * n}")
        print(f"listening after launch: ours {ours['start']:.2f} s, GAIPS {gaips['start']:.2f} s")
        print(f"cold (games connect as the agent listens): ours {ours['cold']:.2f} s, GAIPS {gaips['cold']:.2f} s: "
              f"speed-up {gaips['cold'] / ours['cold']:.2f}x (goal >= 6x)")
        print(f"warm (same processes, again): ours {ours['warm']:.2f} s, GAIPS {gaips['warm']:.2f} s: "
              f"speed-up {gaips['warm'] / ours['warm']:.2f}x")
    for label in ("cold", "warm"):
        waits = ours[f"{label}_chats"]
        print(f"chat reply wait (the game's clock, the LLM's {args.delay:g} s included), {label}: "
              f"median {statistics.median(waits):.2f} s, max {max(waits):.2f} s")
    print(own_line(f"own time per AI turn, {args.games} games at once, warm (goal <= 50 ms)", ours["warm_times"]))
    print(own_line(f"own time per AI turn, {args.games} games at once, cold", ours["cold_times"]))
    print(f"agent process CPU per round (an AI turn and a chat reply; user + system, all threads; the machine's "
          f"load does not change it): warm {ours['cpu_warm_ms']:.1f} ms, cold {ours['cpu_cold_ms']:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--turns", type=int, default=2)
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the fake LLM takes per answer")
    ap.add_argument("--probe-delay", type=float, help="seconds per probe and priming request (default: --delay)")
    ap.add_argument("--chat", choices=("during", "before"), default="during",
                    help="the chat line goes out during the AI turn (default) or before it, waiting for its reply")
    ap.add_argument("--gaips-repo", type=Path, default=GAIPS_REPO, help="the GAIPS project's git mirror")
    ap.add_argument("--ours-only", action="store_true", help="skip the GAIPS agent (no speed-up printed)")
    ap.add_argument("--keep", type=Path, help="write this agent's transcript records to this JSONL file")
    ap.add_argument("--serve-fake", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe_delay is None:
        args.probe_delay = args.delay
    if args.serve_fake:
        asyncio.run(serve_fake(args.delay, args.probe_delay))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
