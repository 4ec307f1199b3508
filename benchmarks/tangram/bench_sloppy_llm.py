"""Issue 19's acceptance measure: a sloppy model costs few turns, and the agent adds little time.

The fake OpenAI server answers every call with a random instance of the move schema the request
names (its random-schema mode: any action, any piece, nulls anywhere, anchors in the drawer, half
relations, numbers off the board). The agent runs as its own process with ``configs/gpt4o.yaml``
pointed at the fake; the simulator plays the game, a random human moves between AI turns.

    .venv/bin/python -m benchmarks.tangram.bench_sloppy_llm [--games 8] [--turns 6] [--delay 1.0]
        [--seed 1] [--null-rate 0.5] [--pass-weight 1.0] [--config configs/gpt4o.yaml] [--candidates N]

Prints, from the simulator and the agent's transcripts: turns with a play, first play valid (the
game reports no collision for it), LLM calls per turn, salvages and re-asks by kind, and the
agent's own time per turn: from the playRequest's arrival to the ``finish``, minus the LLM waits
(the fake's ``--delay`` per call) and minus the game's animation waits (each play to its feedback);
and the agent process's CPU time per turn, which a busy machine does not inflate.
``--candidates 0`` runs without checked candidates (the model's own moves only: salvage and re-ask
do all the work).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import psutil
import yaml

from agent.games.tangram.sim.client import GameClient
from benchmarks.agent_process import agent_server, percentile
from benchmarks.tangram.turn_tally import TurnTally


def read_records(folder: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in sorted(folder.rglob("*.jsonl")):
        records.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return records


def turn_times(records: list[dict[str, Any]], delay: float,
               answer_seconds: list[float] | None = None) -> list[dict[str, float]]:
    """Per AI turn (by session and turn id): wall time, LLM time, the game's waits, the agent's own.

    The LLM's time for a call is what the fake took to answer it (``answer_seconds``, matched to the
    calls in the order they ended; games run one after another, so the orders agree), else
    ``delay``: a fake that a busy machine slows down is the model's delay, not the agent's."""
    calls = sorted((r for r in records if r.get("kind") == "llm"), key=lambda r: (r["t"], r["session"]))
    server: dict[int, float] = {}
    if answer_seconds is not None and len(answer_seconds) == len(calls):
        server = {id(rec): secs for rec, secs in zip(calls, answer_seconds, strict=True)}
    turns: dict[tuple[str, int], dict[str, Any]] = defaultdict(lambda: {"plays": [], "feedbacks": [], "llm": [],
                                                                        "server": [], "start": None, "finish": None})
    for rec in records:
        turn = rec.get("turn")
        if turn is None:
            continue
        t = turns[(rec["session"], turn)]
        kind = rec.get("kind")
        if kind == "frame_in" and rec.get("type") == "playRequest":
            t["start"] = rec["t"]
        elif kind == "frame_in" and rec.get("type") == "playFeedback":
            t["feedbacks"].append(rec["t"])
        elif kind == "frame_out":
            ftype = (rec.get("frame") or {}).get("type")
            if ftype == "play":
                t["plays"].append(rec["t"])
            elif ftype == "finish" and t["finish"] is None:
                t["finish"] = rec["t"]
        elif kind == "llm":
            t["llm"].append(float(rec.get("elapsed_s") or 0.0))
            t["server"].append(server.get(id(rec), delay))
    out = []
    for t in turns.values():
        if t["start"] is None or t["finish"] is None:
            continue
        wall = t["finish"] - t["start"]
        game_waits = sum(fb - play for play, fb in zip(t["plays"], t["feedbacks"], strict=False))
        llm_elapsed = sum(t["llm"])
        out.append({"wall": wall, "calls": len(t["llm"]), "llm_elapsed": llm_elapsed, "game": game_waits,
                    "own": wall - game_waits - sum(t["server"]),
                    "own_vs_delay": wall - game_waits - len(t["llm"]) * delay,
                    "own_vs_elapsed": wall - game_waits - llm_elapsed})
    return out


async def _timings(base_url: str) -> list[float]:
    """The fake's own time for each request, in the order they were answered."""
    root = base_url.removesuffix("/v1")
    async with aiohttp.ClientSession() as http, http.get(f"{root}/_fake/timings") as resp:
        return list((await resp.json())["answer_seconds"])


@contextlib.asynccontextmanager
async def fake_server(args: argparse.Namespace) -> AsyncIterator[str]:
    """The fake LLM as its own process: in this one, the simulator's image rendering would hold up
    its answers and the agent would be blamed for the wait."""
    cmd = [sys.executable, "-m", "agent.core.testing.fake_openai", "--port", "0", "--delay", str(args.delay),
           "--random-schema", "--null-rate", str(args.null_rate), "--seed", str(args.seed)]
    if args.pass_weight != 1.0:
        cmd += ["--enum-weight", f"action=pass:{args.pass_weight:g}"]
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
    if "listening on" not in first:
        proc.terminate()
        raise SystemExit(f"fake LLM did not start: {first.strip()}")
    try:
        yield first.rsplit(" ", 1)[-1].strip()
    finally:
        args.answer_seconds = await _timings(first.rsplit(" ", 1)[-1].strip())
        proc.send_signal(signal.SIGINT)
        await proc.wait()


async def run(args: argparse.Namespace, config: dict[str, Any]) -> dict[str, Any]:
    tally = TurnTally()
    async with fake_server(args) as base_url:
        config["llm"] = {**config.get("llm", {}), "base_url": base_url, "api_key_required": False}
        config.pop("transcripts", None)
        async with agent_server(config) as agent:
            url = f"ws://127.0.0.1:{agent.port}"
            proc = psutil.Process(agent.process.pid)
            cpu_before = sum(proc.cpu_times()[:2])
            for g in range(args.games):
                async with GameClient(url, seed=f"{args.seed}:{g}", human="random") as game:
                    for _ in range(args.turns):
                        await game.human_turn()
                        tally.turn(await game.ai_turn(deadline=config.get("turn", {}).get("deadline", 60) + 10))
                    tally.game(game)
            await asyncio.sleep(0.5)  # each session's transcript is flushed when its game disconnects
            cpu = sum(proc.cpu_times()[:2]) - cpu_before
            records = read_records(agent.transcripts)
    stats = {"turns": tally.turns, "ended": tally.finished, "undone": tally.undone, "with_play": tally.with_play,
             "first_valid": tally.first_valid, "violations": tally.violations}
    return {"stats": stats, "records": records, "cpu_s": cpu}


def report(result: dict[str, Any], args: argparse.Namespace) -> None:
    s, records = result["stats"], result["records"]
    turns = max(1, s["turns"])
    ai_turns = {(r["session"], r["turn"]) for r in records if r.get("kind") == "turn_start"}
    llm = [r for r in records if r.get("kind") == "llm"]
    purposes = Counter(str(r.get("purpose")) for r in llm)
    salvages = Counter(str(r.get("salvage")) for r in records if r.get("kind") == "salvage")
    reasks = Counter(str(r.get("problem")) for r in records if r.get("kind") == "reask")
    decisions = Counter(str(r.get("source")) for r in records if r.get("kind") == "decision"
                        and not r.get("adjust"))
    passes = sum(1 for r in records if r.get("kind") == "decision" and not r.get("adjust")
                 and str(r.get("source")).startswith("llm") and r.get("pose") is None)
    answers = getattr(args, "answer_seconds", None)
    times = turn_times(records, args.delay, answers)
    own = [t["own"] for t in times]
    print(f"games={args.games} turns={args.turns} llm_delay={args.delay:g}s null_rate={args.null_rate:g} "
          f"pass_weight={args.pass_weight:g} seed={args.seed} config={args.config}"
          + (f" candidates={args.candidates}" if args.candidates is not None else ""))
    print(f"turns={s['turns']} ended_with_finish={s['ended']} undone_by_game={s['undone']} "
          f"protocol_violations={s['violations']}")
    print(f"turns_with_play={s['with_play']}/{s['turns']} ({100 * s['with_play'] / turns:.1f}%); "
          f"passes the model chose: {passes}; of the other turns {s['with_play']}/{s['turns'] - passes} "
          f"({100 * s['with_play'] / max(1, s['turns'] - passes):.1f}%) played")
    valid = 100 * s["first_valid"] / max(1, s["with_play"])
    print(f"first_play_valid={s['first_valid']}/{s['with_play']} ({valid:.1f}%)")
    print(f"llm_calls={len(llm)} ({len(llm) / max(1, len(ai_turns)):.2f} per turn; by purpose: "
          f"{dict(sorted(purposes.items()))})")
    print(f"decisions by source: {dict(sorted(decisions.items()))}")
    print(f"salvages={sum(salvages.values())} by kind: {dict(salvages.most_common())}")
    print(f"reasks={sum(reasks.values())} by problem: {dict(reasks.most_common())}")
    if own:
        matched = answers is not None and len(answers) == len(llm)
        what = "the fake's own time per call" if matched else f"{args.delay:g} s per call"
        print(f"agent_own_ms per turn (turn - LLM waits ({what}) - animation waits), n={len(own)}: "
              f"median {1000 * statistics.median(own):.1f}, p90 {1000 * percentile(own, 0.9):.1f}, "
              f"max {1000 * max(own):.1f}")
        by_delay = [t["own_vs_delay"] for t in times]
        print(f"  counting {args.delay:g} s per call instead (the fake's slow answers on a busy machine then count "
              f"as the agent's): median {1000 * statistics.median(by_delay):.1f} ms")
        elapsed = [t["own_vs_elapsed"] for t in times]
        print(f"  agent process CPU per turn (user + system, all threads; the machine's load does not change it): "
              f"{1000 * result['cpu_s'] / max(1, len(ai_turns)):.1f} ms; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end")
        print(f"  counting each call's time as the agent measured it (its client's own work left out): median "
              f"{1000 * statistics.median(elapsed):.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the fake LLM takes per call")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--null-rate", type=float, default=0.5, help="chance a nullable field of the answer is null")
    ap.add_argument("--pass-weight", type=float, default=1.0,
                    help="weight of action 'pass' against 1 for 'place' and 'rotate'")
    ap.add_argument("--config", default="configs/gpt4o.yaml")
    ap.add_argument("--candidates", type=int, help="override llm.candidates of the config")
    ap.add_argument("--keep", help="write the agent's transcript records to this JSONL file")
    args = ap.parse_args()
    start = time.perf_counter()
    config = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    if args.candidates is not None:
        config.setdefault("llm", {})["candidates"] = args.candidates
    result = asyncio.run(run(args, config))
    if args.keep:
        Path(args.keep).write_text("".join(json.dumps(r) + "\n" for r in result["records"]), encoding="utf-8")
    report(result, args)
    print(f"wall_s={time.perf_counter() - start:.1f}")


if __name__ == "__main__":
    main()
