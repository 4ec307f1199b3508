"""Evaluation: N matches between two players over TCP, in parallel, with the numbers that matter.

    python -m agent.games.hive.eval --a ours --b example -n 200 --jobs 2
    python -m agent.games.hive.eval --a ours --b "cmd:/path/to/agent {host} {port}" -n 20
    python -m agent.games.hive.eval --a ours --b example --arena-command "/path/to/arena {port} {log}"

Players: ``ours`` (the full agent session, offline), ``ours+chaos`` (the agent with an LLM coach
served by a local fake that answers late, wrongly or not at all), any bot of
agent.games.hive.opponents.bots (``random``, ``mover``, ``example``), or ``cmd:COMMAND`` (an external agent
started with ``{host}`` and ``{port}`` filled in). Each match runs the local arena (or the given
external arena) on a free loopback port; seats are drawn by the arena, as in the real one.
Prints win rate of A (over the matches played out, with its 95 % interval), scores,
decision-time percentiles, forfeits and failures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import shlex
import socket
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent.core import proportion
from agent.games.hive.arena import Arena, ArenaResult
from agent.games.hive.link.client import ClientOutcome, Decider, play
from agent.games.hive.opponents.bots import BOTS, make_bot
from agent.games.hive.protocol import ProtocolError, parse_log

MATCH_TIMEOUT_S = 600.0
"""One match may take this long at most (a real match takes seconds)."""
PLAYER_KINDS = tuple(dict.fromkeys(("ours", "ours+chaos", *BOTS)))  # "ours" is also a bot


@dataclass
class MatchRecord:
    seed: int
    seat_a: int | None = None
    scores: tuple[int, int] = (0, 0)
    """(A's score, B's score)."""
    winner: str = "none"
    """'a', 'b', 'draw' or 'none' (no match)."""
    turns: int = 0
    forfeit: str | None = None
    """'a' or 'b' when that side forfeited."""
    error: str = ""
    decision_ms: dict[str, list[float]] = field(default_factory=lambda: {"a": [], "b": []})
    answer_ms: dict[str, list[float]] = field(default_factory=lambda: {"a": [], "b": []})
    coach: dict[str, int] = field(default_factory=dict)


def check_player(spec: str) -> str:
    if spec.startswith("cmd:"):
        if "{port}" not in spec:
            raise argparse.ArgumentTypeError("a cmd: player needs {port} (and usually {host}) in its command")
        return spec
    if spec not in PLAYER_KINDS:
        raise argparse.ArgumentTypeError(f"unknown player {spec!r}; use {', '.join(PLAYER_KINDS)} or cmd:COMMAND")
    return spec


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# ---- players ------------------------------------------------------------------------------------

class _Chaos:
    """A fake OpenAI server (in a thread) that answers coach calls slowly, wrongly or not at all."""

    def __init__(self, seed: int) -> None:
        from agent.core.testing.fake_openai import FakeOpenAI, FakeReply

        rng = random.Random(seed)
        self._reply = FakeReply

        def responder(body: dict[str, Any]) -> Any:
            roll = rng.random()
            plan = {"bees": [{"bee": b, "role": rng.choice(["forage", "explore", "raid", "defend"]),
                              "target": None} for b in range(5)],
                    "aggression": round(rng.random(), 2), "note": "chaos"}
            if roll < 0.25:
                return FakeReply.ok_json(plan, delay=rng.uniform(0.5, 5.0))
            if roll < 0.40:
                invalid = {"bees": [{"bee": 9, "role": "dance"}], "aggression": 7}
                return FakeReply.ok_json(invalid, delay=rng.uniform(0, 2))
            if roll < 0.55:
                return FakeReply.http_error(500, delay=rng.uniform(0, 1))
            if roll < 0.70:
                return FakeReply.garbage()
            if roll < 0.85:
                return FakeReply.stall(rng.uniform(5.0, 8.0), json.dumps(plan))
            return FakeReply.dropped(delay=rng.uniform(0, 1))

        self.fake = FakeOpenAI(responder=responder).start_in_thread()

    def close(self) -> None:
        self.fake.stop_in_thread()


def _chaos_config(base_url: str, seed: int) -> Any:
    from agent.games.hive.config import HiveConfig

    return HiveConfig.model_validate({
        "player": "llm", "seed": seed,
        "llm": {"base_url": base_url, "model": "fake-model", "api_key_required": False, "request_timeout": 6,
                "retry": {"max_attempts": 2, "initial_backoff": 0.1, "max_backoff": 0.5}},
        "coach": {"every_rounds": 1, "max_age_rounds": 150, "timeout": 8},
        "transcripts": {"enabled": False},
    })


async def _run_player(spec: str, port: int, name: str, seed: int, chaos: _Chaos | None,
                      stats: dict[str, Any]) -> ClientOutcome | None:
    if spec.startswith("cmd:"):
        await run_to_end(shlex.split(spec[4:].format(host="127.0.0.1", port=port)), MATCH_TIMEOUT_S)
        return None
    if spec in ("ours", "ours+chaos"):
        from agent.core.llm import LLMClient
        from agent.games.hive.coach.coach import load_hive_prompts
        from agent.games.hive.link.session import HiveSession

        if spec == "ours+chaos" and chaos is not None:
            config = _chaos_config(chaos.fake.base_url, seed)
            llm = LLMClient(config.llm, None)
            session = HiveSession(team=name, seed=seed, llm=llm,
                                  prompts=load_hive_prompts(config.resolve_dir(config.prompts_dir)),
                                  coach_config=config.coach)
        else:
            llm = None
            session = HiveSession(team=name, seed=seed)
        try:
            outcome = await play("127.0.0.1", port, name, session, connect_timeout=10)
        finally:
            await session.aclose()
            if llm is not None:
                await llm.aclose()
        stats.update(session.summary().get("coach", {}))
        return outcome
    decider: Decider = make_bot(spec, seed)
    return await play("127.0.0.1", port, name, decider, connect_timeout=10)


async def run_to_end(argv: list[str], limit: float) -> int | None:
    """Run a command until it exits or ``limit`` seconds; its exit code, None if it had to be killed.

    The process is killed and waited for however the wait ends, also when the match is cancelled: an
    unreaped process would outlive the match, and its transport, collected after asyncio.run closed the
    loop, warns "Event loop is closed" (Python 3.13).
    """
    proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        return await asyncio.wait_for(proc.wait(), limit)
    except TimeoutError:
        return None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await _reap(proc)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for a killed process even if cancelled meanwhile (it takes milliseconds), then re-raise."""
    waiting = asyncio.ensure_future(proc.wait())
    cancelled = False
    while not waiting.done():
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


async def _external_arena(command: str, port: int, log: Path) -> ArenaResult:
    await run_to_end(shlex.split(command.format(port=port, log=str(log))), MATCH_TIMEOUT_S)
    result = ArenaResult()
    try:
        text = await asyncio.to_thread(log.read_text, encoding="utf-8", errors="replace")
        parsed = parse_log(text)
    except (OSError, ProtocolError) as exc:
        result.reason = f"no usable arena log: {exc}"
        return result
    result.played = bool(parsed.turns)
    result.names = parsed.names
    result.winner = parsed.winner
    result.forfeit = parsed.forfeit
    if parsed.turns:
        last = parsed.turns[-1]
        result.scores = (last.score0, last.score1)
        result.turns = last.turn
    return result


async def play_one(a: str, b: str, seed: int, chaos: _Chaos | None = None, arena_command: str | None = None,
                   log_dir: Path | None = None) -> MatchRecord:
    record = MatchRecord(seed=seed)
    names = {"a": f"A-{a.split()[0][:20]}", "b": f"B-{b.split()[0][:20]}"}
    log_path = (log_dir / f"match-{seed}.log") if log_dir else None
    coach_stats: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if arena_command:
            port = free_port()
            log_file = log_path or Path(tmp) / "arena.log"
            arena_task = asyncio.create_task(_external_arena(arena_command, port, log_file))
            await asyncio.sleep(0.2)  # the external arena needs a moment to listen; clients retry anyway
        else:
            arena = Arena(port=0, log_path=log_path, seed=seed)
            arena_task = asyncio.create_task(arena.serve())
            await arena.listening.wait()
            port = arena.port
        players = [asyncio.create_task(_run_player(a, port, names["a"], seed, chaos, coach_stats)),
                   asyncio.create_task(_run_player(b, port, names["b"], seed + 7919, None, {}))]
        try:
            outcomes, result = await asyncio.wait_for(asyncio.gather(asyncio.gather(*players), arena_task),
                                                      MATCH_TIMEOUT_S)
        except TimeoutError:
            record.error = f"match did not end within {MATCH_TIMEOUT_S:g} s"
            # The time-out cancelled all three, but gather returns as soon as the first is cancelled: wait
            # for the others to finish cancelling (external agents killed and reaped, sockets closed)
            # before the next match, or asyncio.run's end, comes.
            await asyncio.wait([*players, arena_task])
            return record
    if not result.played:
        record.error = result.reason or "no match"
        return record
    # External agents pick their own team names: the side we named tells both seats.
    if names["a"] in result.names:
        seat_a = result.names.index(names["a"])
    elif names["b"] in result.names:
        seat_a = 1 - result.names.index(names["b"])
    else:
        record.error = f"cannot tell the sides apart from the team names {result.names}"
        return record
    seat = {"a": seat_a, "b": 1 - seat_a}
    record.seat_a = seat["a"]
    record.scores = (result.scores[seat["a"]], result.scores[seat["b"]])
    record.turns = result.turns
    record.winner = "draw" if result.winner is None else ("a" if result.winner == seat["a"] else "b")
    if result.forfeit is not None:
        record.forfeit = "a" if result.forfeit == seat["a"] else "b"
        record.error = result.reason
    for side, outcome in zip(("a", "b"), outcomes, strict=True):
        if outcome is not None:
            record.decision_ms[side] = outcome.decision_ms
        record.answer_ms[side] = result.answer_ms[seat[side]]
    record.coach = {k: int(v) for k, v in coach_stats.items()}
    return record


def run_batch(a: str, b: str, seeds: list[int], arena_command: str | None, log_dir: str | None) -> list[dict[str, Any]]:
    """One worker's share: its matches one after another, with one chaos server if needed."""
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    chaos = _Chaos(seeds[0]) if "ours+chaos" in (a, b) and seeds else None
    try:
        out = []
        for seed in seeds:
            record = asyncio.run(play_one(a, b, seed, chaos, arena_command, Path(log_dir) if log_dir else None))
            out.append(asdict(record))
        return out
    finally:
        if chaos is not None:
            chaos.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(a: str, b: str, records: list[dict[str, Any]], elapsed: float) -> str:
    played = [r for r in records if r["winner"] != "none"]
    wins = sum(r["winner"] == "a" for r in played)
    losses = sum(r["winner"] == "b" for r in played)
    draws = sum(r["winner"] == "draw" for r in played)
    lines = [f"A = {a}   B = {b}   matches: {len(records)} ({len(played)} played) in {elapsed:.1f} s"]
    if played:
        lines.append(f"A wins {wins}, draws {draws}, losses {losses}: win rate {100 * wins / len(played):.1f}%")
        # A forfeit hands the other side a win it did not play for: count the matches played out.
        out = [r for r in played if r["forfeit"] is None]
        w, d, lo = (sum(r["winner"] == k for r in out) for k in ("a", "draw", "b"))
        lines.append(f"played out (no forfeit) {len(out)}: A wins {w}, draws {d}, losses {lo}: "
                     f"win rate {proportion.describe(w, len(out))}")
        sa = [r["scores"][0] for r in played]
        sb = [r["scores"][1] for r in played]
        lines.append(f"scores: A mean {statistics.mean(sa):.1f} (min {min(sa)}, max {max(sa)}), "
                     f"B mean {statistics.mean(sb):.1f} (min {min(sb)}, max {max(sb)}); "
                     f"turns mean {statistics.mean(r['turns'] for r in played):.0f}")
        seats = sum(1 for r in played if r["seat_a"] == 0)
        lines.append(f"A played as player 0 in {seats} matches, as player 1 in {len(played) - seats}")
    for side in ("a", "b"):
        dec = [x for r in records for x in r["decision_ms"][side]]
        ans = [x for r in records for x in r["answer_ms"][side]]
        fo = sum(r["forfeit"] == side for r in records)
        text = f"{side.upper()} forfeits: {fo}"
        if dec:
            text += (f"; decision ms p50 {percentile(dec, 0.5):.2f} p99 {percentile(dec, 0.99):.2f} "
                     f"max {max(dec):.2f} ({len(dec)} decisions)")
        if ans:
            text += (f"; arena-side answer ms p50 {percentile(ans, 0.5):.2f} p99 {percentile(ans, 0.99):.2f} "
                     f"max {max(ans):.2f}")
        lines.append(text)
    coach = [r["coach"] for r in records if r["coach"]]
    if coach:
        kinds = ("asked", "applied", "late", "invalid", "failed", "abandoned")
        totals = {k: sum(c.get(k, 0) for c in coach) for k in kinds}
        lines.append("coach calls: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    errors = [f"seed {r['seed']}: {r['error']}" for r in records if r["error"]]
    if errors:
        lines.append(f"problems ({len(errors)}): " + "; ".join(errors[:5]))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agent.games.hive.eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", type=check_player, default="ours", help="player A (default ours)")
    p.add_argument("--b", type=check_player, default="example", help="player B (default example)")
    p.add_argument("-n", "--matches", type=int, default=20, help="number of matches (default 20)")
    p.add_argument("--jobs", type=int, default=2, help="matches in parallel, one process each (default 2)")
    p.add_argument("--seed", type=int, default=0, help="first seed; match i uses seed+i (default 0)")
    p.add_argument("--arena-command", help="run this arena instead of ours, with {port} and {log} filled in")
    p.add_argument("--logs", type=Path, help="keep every match log in this folder")
    p.add_argument("--json", type=Path, help="write every match record to this JSON file")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # The chaotic coach's failures are expected here; the summary counts them.
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if not 1 <= args.matches <= 100_000 or not 1 <= args.jobs <= 64:
        print("error: --matches must be 1-100000 and --jobs 1-64", file=sys.stderr)
        return 2
    if args.arena_command and "{port}" not in args.arena_command:
        print("error: --arena-command needs {port} (and {log}) in it", file=sys.stderr)
        return 2
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
    seeds = [args.seed + i for i in range(args.matches)]
    jobs = min(args.jobs, len(seeds))
    shares = [seeds[i::jobs] for i in range(jobs)]
    started = time.monotonic()
    records: list[dict[str, Any]] = []
    log_dir = str(args.logs) if args.logs else None
    if jobs == 1:
        records = run_batch(args.a, args.b, seeds, args.arena_command, log_dir)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(run_batch, args.a, args.b, share, args.arena_command, log_dir) for share in shares]
            for future in futures:
                records.extend(future.result())
    records.sort(key=lambda r: r["seed"])
    print(summarise(args.a, args.b, records, time.monotonic() - started), flush=True)
    if args.json:
        args.json.write_text(json.dumps(records), encoding="utf-8")
    failed = sum(1 for r in records if r["winner"] == "none" or r["forfeit"] is not None)
    return 1 if failed else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(main())
