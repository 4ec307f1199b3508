"""Play whole games against an agent server and measure what it did.

:func:`run_games` plays ``games`` games of ``turns`` rounds each (the scripted human's turn, then
the AI's) against any agent URL, several at once if allowed. :func:`run_in_process` first starts
our own agent (``agent.games.tangram.link.server.serve_agent``) on a free loopback port with its transcripts in a
known folder, so the LLM numbers can be read back from them. :func:`summarize` turns the results
into one JSON-ready dict.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from websockets.exceptions import InvalidHandshake, InvalidURI

from agent.games.tangram.config import Config
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.sim.client import GODOT_TWEEN_S, ChatResult, GameClient, HumanTurn, TurnResult
from agent.games.tangram.sim.feedback_delay import FeedbackDelay
from agent.games.tangram.sim.figure import figure_score, target_poses
from agent.games.tangram.sim.humans import HUMAN_KINDS
from agent.games.tangram.sim.simgame import OBJECTIVES, Build, SimGame, StateLayout, pose_dict

log = logging.getLogger(__name__)


class AgentStartError(RuntimeError):
    """Our agent could not be started in-process; the message is one line."""


@dataclass
class RunOptions:
    games: int = 1
    turns: int = 7
    human: str = "cooperative"
    seed: int = 0
    objective: str | None = None
    """None: each game draws one of the game's six objectives from the seed."""
    deadline: float = 65.0
    """Seconds the simulator waits for an AI turn to end before recording a violation."""
    chat_timeout: float = 30.0
    tween: float = GODOT_TWEEN_S
    parallel: int = 1
    state_layout: StateLayout = "dict"
    build: Build = "shipped"
    """"shipped": the game build users run (ignores ``error``); "source": the current source."""
    stale_collisions: bool = False
    false_tint: bool = False
    """Feedback pictures tint the moved piece and its neighbour whatever the state says (the real game's glitch)."""
    feedback_delay: FeedbackDelay | None = None
    """None: each feedback follows its play's tween and a frame; else drawn per play (sim/feedback.py)."""

    def __post_init__(self) -> None:
        if self.human not in HUMAN_KINDS:
            raise ValueError(f"unknown human kind {self.human!r}; choose from {', '.join(HUMAN_KINDS)}")
        if self.games < 1 or self.turns < 1:
            raise ValueError("games and turns must be at least 1")


@dataclass
class Snapshot:
    """The board after one turn, for the report."""

    round: int
    who: str
    """"human" or "ai"."""
    png: bytes
    state: dict[str, dict[str, float]]


@dataclass
class GameResult:
    index: int
    seed: str
    objective: str
    human: str
    url: str
    game: SimGame
    local_port: int | None = None
    wall_start: float = 0.0
    wall_end: float = 0.0
    turns: list[TurnResult] = field(default_factory=list)
    human_turns: list[HumanTurn] = field(default_factory=list)
    chats: list[ChatResult] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    figure_score: float | None = None
    frames_sent: int = 0
    bytes_sent: int = 0
    frames_received: int = 0
    error: str | None = None
    agent_records: list[dict[str, Any]] | None = None
    """The agent's own transcript for this game, when it could be read."""
    agent_dir: Path | None = None
    """The folder of the agent's transcripts: files its records name (the pictures the LLM saw) are there."""
    broken_promises: list[str] = field(default_factory=list)
    """What the scripted partner asked for and saw the agent not do (the ``requesting`` partner)."""

    @property
    def final_board(self) -> dict[str, Pose]:
        return self.game.on_board()

    def to_dict(self) -> dict[str, Any]:
        """This game's transcript as plain JSON (images left out: they are files in the report)."""
        return {
            "index": self.index, "seed": self.seed, "objective": self.objective, "human": self.human,
            "url": self.url, "local_port": self.local_port, "error": self.error,
            "wall_start": self.wall_start, "wall_end": self.wall_end,
            "figure_score": self.figure_score,
            "final_board": {n: pose_dict(p) for n, p in self.final_board.items()},
            "frames_sent": self.frames_sent, "bytes_sent": self.bytes_sent, "frames_received": self.frames_received,
            # game.turns may hold one more turn (the one the run stopped in): only played turns pair up.
            "turns": [_turn_dict(t, r) for t, r in zip(self.turns, self.game.turns, strict=False)],
            "human_moves": [_asdict(m) for m in self.game.human_moves],
            "chat": [_asdict(c) for c in self.game.chat_log],
            "chat_requests": [_asdict(c) for c in self.chats],
            "violations": [_asdict(v) for v in self.game.violations],
            "broken_promises": self.broken_promises,
        }


def _asdict(obj: Any) -> dict[str, Any]:
    return asdict(obj)


def _turn_dict(result: TurnResult, record: Any) -> dict[str, Any]:
    return {
        "index": result.index, "ended_by": result.ended_by, "latency": result.latency,
        "piece": result.piece, "undone": result.undone, "collisions": result.collisions,
        "error_message": result.error_message, "chat": result.chat,
        "plays": [_asdict(p) for p in result.plays],
        "wall_start": record.wall_start, "wall_end": record.wall_end,
        "frames": [{"at": round(f.at, 4), "size": f.size, "type": f.type,
                    "text": f.text if f.size < 4096 else f.text[:4096] + "...(truncated)"} for f in result.frames],
        "violations": [_asdict(v) for v in result.violations],
    }


def game_objective(options: RunOptions, index: int) -> str:
    if options.objective:
        return options.objective
    return random.Random(f"objective:{options.seed}:{index}").choice(OBJECTIVES)


async def play_game(url: str, index: int, options: RunOptions,
                    on_turn: Callable[[GameResult, TurnResult | None], None] | None = None) -> GameResult:
    """One game of ``options.turns`` rounds. Never raises for the agent's faults: they are recorded."""
    objective = game_objective(options, index)
    seed = f"{options.seed}:{index}"
    client = GameClient(url, objective=objective, seed=seed, human=options.human, tween=options.tween,
                        state_layout=options.state_layout, build=options.build,
                        stale_collisions=options.stale_collisions, chat_timeout=options.chat_timeout,
                        feedback_delay=options.feedback_delay, false_tint=options.false_tint)
    result = GameResult(index, seed, objective, options.human, url, client.game, wall_start=time.time())
    played = 0
    try:
        async with client:
            result.local_port = client.local_port
            for rnd in range(1, options.turns + 1):
                if not client.connected:
                    break
                human = await client.human_turn()
                result.human_turns.append(human)
                result.snapshots.append(Snapshot(rnd, "human", client.game.board_png(), client.game.snapshot()))
                turn = await client.ai_turn(options.deadline)
                result.turns.append(turn)
                result.snapshots.append(Snapshot(rnd, "ai", client.game.board_png(), client.game.snapshot()))
                played += 1
                if on_turn:
                    on_turn(result, turn)
            await client.settle_chats(options.chat_timeout)
    except (TimeoutError, OSError, InvalidURI, InvalidHandshake) as exc:
        result.error = f"{type(exc).__name__}: {exc}"[:300]
        log.info("game %d: %s", index, result.error)  # the summary names it; one line per game there
    finally:
        result.wall_end = time.time()
        result.chats = list(client.chats)
        result.broken_promises = list(client.human.broken) if client.human is not None else []
        result.frames_sent = len(client.sent)
        result.bytes_sent = sum(f.size for f in client.sent)
        result.frames_received = len(client.frames)
        if on_turn:
            for _ in range(options.turns - played):
                on_turn(result, None)
    # Off the event loop: other games are still being timed. A planner error while scoring is this
    # game's error (the summary names it), not a missing score; the game's other numbers are kept.
    try:
        result.figure_score = await asyncio.to_thread(figure_score, result.final_board, objective)
    except Exception as exc:
        result.error = result.error or f"figure score: {type(exc).__name__}: {exc}"[:300]
        log.warning("game %d: figure score failed: %s: %s", index, type(exc).__name__, exc)
    return result


async def run_games(url: str, options: RunOptions,
                    on_turn: Callable[[GameResult, TurnResult | None], None] | None = None) -> list[GameResult]:
    """All games against ``url``, at most ``options.parallel`` at a time; in game order."""
    gate = asyncio.Semaphore(max(1, options.parallel))
    # Loading the planner's figure library can take seconds: do it once, before any game is timed.
    await asyncio.to_thread(lambda: [target_poses(game_objective(options, i)) for i in range(1, options.games + 1)])

    async def one(i: int) -> GameResult:
        async with gate:
            return await play_game(url, i, options, on_turn)

    return list(await asyncio.gather(*(one(i) for i in range(1, options.games + 1))))


async def run_in_process(config: Config, options: RunOptions, transcript_dir: Path,
                         on_turn: Callable[[GameResult, TurnResult | None], None] | None = None,
                         player_factory: Any = None) -> list[GameResult]:
    """Start our agent on a free loopback port, play, then attach each game's agent transcript.

    ``player_factory`` replaces the one the config would build (tests use it)."""
    try:
        from agent.games.tangram.link.server import (
            serve_agent,  # here, so --connect works even if the agent cannot load
        )
    except ImportError as exc:
        raise AgentStartError(f"cannot load the agent: {exc}") from exc

    # images: the report shows each LLM turn's pictures exactly as the model got them.
    transcripts = config.transcripts.model_copy(update={"enabled": True, "dir": Path(transcript_dir), "images": True})
    config = config.model_copy(update={"transcripts": transcripts})
    async with contextlib.AsyncExitStack() as stack:
        try:
            server = await stack.enter_async_context(
                serve_agent(config, host="127.0.0.1", port=0, player_factory=player_factory))
        except Exception as exc:  # ImportError, ServerSetupError, ...: one line for the user
            raise AgentStartError(f"cannot start the agent in-process: {type(exc).__name__}: {exc}") from exc
        results = await run_games(server.url, options, on_turn)
        paths: list[Path] = list(server.transcript_paths())
    attach_transcripts(results, [read_jsonl(p) for p in paths], Path(transcript_dir))
    return results


# ---------------------------------------------------------------------- the agent's transcripts


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        log.warning("cannot read transcript %s: %s", path, exc)
        return out
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def read_transcript_dir(directory: Path, since: float = 0.0) -> list[list[dict[str, Any]]]:
    """Every ``*.jsonl`` session in ``directory`` written at or after ``since`` (wall time)."""
    return [read_jsonl(path) for path in sorted(Path(directory).glob("*.jsonl")) if path.stat().st_mtime >= since]


def _session_port(records: list[dict[str, Any]]) -> int | None:
    for rec in records[:20]:
        peer = rec.get("peer")
        if rec.get("kind") == "session_start" and isinstance(peer, str) and ":" in peer:
            try:
                return int(peer.rsplit(":", 1)[1])
            except ValueError:
                return None
    return None


def attach_transcripts(results: list[GameResult], sessions: list[list[dict[str, Any]]],
                       directory: Path | None = None) -> None:
    """Give each game the agent session that served it: by the client port the agent logged,
    else by start time (sessions open in the order the games connect)."""
    sessions = [s for s in sessions if s]
    by_port = {p: s for s in sessions if (p := _session_port(s)) is not None}
    unmatched = [s for s in sessions if _session_port(s) is None]
    unmatched.sort(key=lambda s: float(s[0].get("t", 0)))
    for result in sorted(results, key=lambda r: r.wall_start):
        if result.local_port is not None and result.local_port in by_port:
            result.agent_records = by_port.pop(result.local_port)
        elif unmatched:
            result.agent_records = unmatched.pop(0)
        if result.agent_records is not None:
            result.agent_dir = directory


def turn_map(records: Iterable[dict[str, Any]]) -> dict[Any, int]:
    """The agent's turn ids mapped to the simulator's AI turn numbers.

    The agent numbers each playRequest it reads (its ``frame_in`` records carry the id); the
    simulator sends one playRequest per AI turn, so the n-th id is the n-th AI turn. Matching by
    id, not by wall time, keeps a decision under its own round however the clocks drift.
    """
    ids = [rec["turn"] for rec in records
           if rec.get("kind") == "frame_in" and rec.get("type") == "playRequest" and rec.get("turn") is not None]
    if not ids:  # a transcript without frame_in ids: the agent's own turn numbers, in order
        ids = sorted({rec["turn"] for rec in records if rec.get("kind") == "turn_start" and "turn" in rec},
                     key=lambda t: (str(type(t)), t))
    return {turn_id: n for n, turn_id in enumerate(ids, start=1)}


def agent_notes(result: GameResult, kinds: tuple[str, ...] = ("decision",)) -> dict[int, list[dict[str, Any]]]:
    """The agent's records of ``kinds`` (decisions by default) per AI turn number, by turn id."""
    notes: dict[int, list[dict[str, Any]]] = {}
    if not result.agent_records:
        return notes
    numbers = turn_map(result.agent_records)
    for rec in result.agent_records:
        if rec.get("kind") in kinds and rec.get("turn") in numbers:
            notes.setdefault(numbers[rec["turn"]], []).append(rec)
    return notes


def llm_totals(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    calls = prompt = completion = images = 0
    for rec in records:
        if rec.get("kind") != "llm":
            continue
        calls += 1
        prompt += int(rec.get("prompt_tokens") or 0)
        completion += int(rec.get("completion_tokens") or 0)
        images += int(rec.get("image_bytes") or 0)
    return {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion, "image_bytes": images}


# ---------------------------------------------------------------------- the summary


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    k = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (k - lo), 4)


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def summarize(results: list[GameResult], options: RunOptions, agent: str,
              transcripts: bool, wall_seconds: float | None = None) -> dict[str, Any]:
    """The run's numbers. ``transcripts`` says whether the agent's transcripts were read (LLM
    numbers are null when they were not)."""
    turns = [t for r in results for t in r.turns]
    n = len(turns)
    ended = [t for t in turns if t.ended]
    latencies = [t.latency for t in turns if t.ended and t.latency is not None]
    chats = [c for r in results for c in r.chats]
    replied = [c for c in chats if c.latency is not None]
    violations = [v for r in results for v in r.game.violations]
    scores = [r.figure_score for r in results if r.figure_score is not None]
    llm: dict[str, Any] = {"llm_calls_per_turn": None, "prompt_tokens_per_turn": None,
                           "completion_tokens_per_turn": None, "tokens_per_turn": None,
                           "image_bytes_per_llm_call": None}
    if transcripts and any(r.agent_records is not None for r in results):
        tot = llm_totals(rec for r in results for rec in (r.agent_records or []))
        llm = {"llm_calls_per_turn": _ratio(tot["calls"], n),
               "prompt_tokens_per_turn": _ratio(tot["prompt_tokens"], n),
               "completion_tokens_per_turn": _ratio(tot["completion_tokens"], n),
               "tokens_per_turn": _ratio(tot["prompt_tokens"] + tot["completion_tokens"], n),
               "image_bytes_per_llm_call": _ratio(tot["image_bytes"], tot["calls"])}
    return {
        "agent": agent,
        "games": len(results),
        "turns_per_game": options.turns,
        "human": options.human,
        "seed": options.seed,
        "objectives": [r.objective for r in results],
        "game_errors": [r.error for r in results if r.error],
        "turns": n,
        "turns_ended": len(ended),
        "turns_finished": sum(t.ended_by == "finish" for t in turns),
        "turns_error": sum(t.ended_by == "error" for t in turns),
        "turns_timed_out": sum(t.ended_by == "timeout" for t in turns),
        "turns_closed": sum(t.ended_by == "closed" for t in turns),
        "turns_undone": sum(t.undone for t in turns),
        "turns_without_play": sum(not t.plays for t in turns),
        "plays_per_turn": _ratio(sum(len(t.plays) for t in turns), n),
        **llm,
        "turn_latency_p50_s": percentile(latencies, 50),
        "turn_latency_p95_s": percentile(latencies, 95),
        "chat_requests": len(chats),
        "chat_replies": len(replied),
        "chat_reply_latency_p50_s": percentile([c.latency for c in replied if c.latency is not None], 50),
        "chat_reply_latency_p95_s": percentile([c.latency for c in replied if c.latency is not None], 95),
        "protocol_violations": len(violations),
        "violations_by_kind": dict(sorted(Counter(v.kind for v in violations).items())),
        "pieces_on_board_mean": _ratio(sum(len(r.final_board) for r in results), len(results)),
        "figure_score_mean": round(sum(scores) / len(scores), 4) if scores else None,
        "figure_scores": [r.figure_score for r in results],
        "wall_seconds": None if wall_seconds is None else round(wall_seconds, 2),
    }


def per_game_rows(results: list[GameResult]) -> list[dict[str, Any]]:
    """One row per game, for the report's table."""
    rows = []
    for r in results:
        llm = llm_totals(r.agent_records) if r.agent_records is not None else None
        latencies = [t.latency for t in r.turns if t.ended and t.latency is not None]
        rows.append({
            "game": r.index, "objective": r.objective, "human": r.human, "seed": r.seed,
            "AI turns": len(r.turns), "ended": sum(t.ended for t in r.turns),
            "undone": sum(t.undone for t in r.turns), "passed": sum(not t.plays for t in r.turns),
            "violations": len(r.game.violations),
            "turn latency p50 (s)": percentile(latencies, 50),
            "chat replies": f"{sum(c.latency is not None for c in r.chats)}/{len(r.chats)}",
            "LLM calls": llm["calls"] if llm else None,
            "tokens": llm["prompt_tokens"] + llm["completion_tokens"] if llm else None,
            "pieces on board": len(r.final_board), "figure score": r.figure_score,
            "error": r.error,
        })
    return rows


def per_objective_rows(results: list[GameResult]) -> list[dict[str, Any]]:
    """One row per objective: how the agent did on that figure across games."""
    rows = []
    for objective in sorted({r.objective for r in results}):
        games = [r for r in results if r.objective == objective]
        turns = [t for r in games for t in r.turns]
        scores = [r.figure_score for r in games if r.figure_score is not None]
        latencies = [t.latency for t in turns if t.ended and t.latency is not None]
        rows.append({
            "objective": objective, "games": len(games), "AI turns": len(turns),
            "ended": sum(t.ended for t in turns), "undone": sum(t.undone for t in turns),
            "violations": sum(len(r.game.violations) for r in games),
            "turn latency p50 (s)": percentile(latencies, 50),
            "pieces on board (mean)": _ratio(sum(len(r.final_board) for r in games), len(games)),
            "figure score (mean)": round(sum(scores) / len(scores), 4) if scores else None,
        })
    return rows


def summary_lines(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The summary as (label, readable value) pairs: for the terminal and the report."""

    def num(v: Any, unit: str = "", digits: int = 2) -> str:
        return "n/a" if v is None else f"{v:.{digits}f}{unit}" if isinstance(v, float) else f"{v}{unit}"

    lines = [
        ("agent", s["agent"]),
        ("games", f"{s['games']} x {s['turns_per_game']} turns, human={s['human']}, seed={s['seed']}"),
        ("objectives", ", ".join(s["objectives"])),
        ("turns", f"{s['turns']} (ended {s['turns_ended']}: finish {s['turns_finished']}, error {s['turns_error']};"
                  f" timed out {s['turns_timed_out']}; undone by the game {s['turns_undone']})"),
        ("plays per turn", num(s["plays_per_turn"])),
        ("LLM per turn", "not known (the agent's transcripts were not read: pass --transcripts DIR)"
         if s["llm_calls_per_turn"] is None else
         f"calls {num(s['llm_calls_per_turn'])}, tokens {num(s['tokens_per_turn'], digits=0)}"
         f" (prompt {num(s['prompt_tokens_per_turn'], digits=0)},"
         f" completion {num(s['completion_tokens_per_turn'], digits=0)})"),
        ("image bytes/call", num(s["image_bytes_per_llm_call"], digits=0)),
        ("turn latency", f"p50 {num(s['turn_latency_p50_s'], ' s')}, p95 {num(s['turn_latency_p95_s'], ' s')}"),
        ("chat replies", f"{s['chat_replies']}/{s['chat_requests']},"
                         f" latency p50 {num(s['chat_reply_latency_p50_s'], ' s')},"
                         f" p95 {num(s['chat_reply_latency_p95_s'], ' s')}"),
        ("violations", f"{s['protocol_violations']}" + (
            " (" + ", ".join(f"{k} {v}" for k, v in s["violations_by_kind"].items()) + ")"
            if s["violations_by_kind"] else "")),
        ("figure score", num(s["figure_score_mean"], digits=3) + " (mean silhouette IoU)"),
        ("pieces on board", num(s["pieces_on_board_mean"], digits=1)),
    ]
    if s.get("game_errors"):
        lines.append(("game errors", "; ".join(s["game_errors"])))
    if s.get("report"):
        lines.append(("report", s["report"]))
    return lines


def format_summary(s: dict[str, Any]) -> str:
    """The summary as a few aligned lines for people."""
    lines = summary_lines(s)
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in lines)
