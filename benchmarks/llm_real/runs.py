"""Each game's LLM player against a real model server, played on our local counterparts: what the
real-model tests (tests/llm_real/) assert on and what the real-model benchmark prints.

A shipped config is changed only where a user would change it (``llm.base_url``, ``llm.model``,
``llm.api_key_required``); every run writes transcripts, and :func:`llm_stats` reads the ``llm``
records from them (the calls, their cuts, salvages and re-asks, latencies and prompt tokens).
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.core.config import load_config, read_config_mapping

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {"tangram": "gpt4o.yaml", "forge": "forge-gpt4o.yaml", "boardgame": "boardgame-llm.yaml",
           "hive": "hive-gpt4o.yaml"}
"""Each game's shipped LLM config for a hosted model (the one a user starts from)."""
LOCAL_CONFIGS = {"tangram": "local.yaml", "forge": "forge-local.yaml", "boardgame": "boardgame-local.yaml",
                 "hive": "hive-local.yaml"}
"""Each game's shipped config for a model on this machine (deadlines for a CPU)."""


def localised(game: str, base_url: str, model: str, transcripts: Path, *, local: bool = False, **llm: Any) -> Any:
    """The game's shipped LLM config (``local``: its config for a model on this machine), pointed at
    ``base_url`` / ``model`` with no key, writing its transcripts to ``transcripts``. ``llm``
    overrides further LLM fields (benchmarks' variants)."""
    from agent.games import load_game

    path = ROOT / "configs" / (LOCAL_CONFIGS if local else CONFIGS)[game]
    config = load_config(path, load_game(read_config_mapping(path).get("game", "tangram")).config_model)
    update = {"base_url": base_url, "model": model, "api_key_required": False, **llm}
    tx = config.transcripts.model_copy(update={"enabled": True, "dir": transcripts})
    return config.model_copy(update={"llm": config.llm.model_copy(update=update), "transcripts": tx})


def read_records(folder: Path) -> list[dict[str, Any]]:
    from agent.games.tangram.sim.runner import read_jsonl

    return [r for path in sorted(folder.rglob("*.jsonl")) for r in read_jsonl(path)]


@dataclass
class Run:
    """What one game's run left: its transcripts' records and who made each decision."""

    records: list[dict[str, Any]]
    decisions: int
    by_model: int
    detail: dict[str, Any] = field(default_factory=dict)

    def llm_calls(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("kind") == "llm" and r.get("purpose") != "chat"]


async def tangram(config: Any, games: int, turns: int, seed: int, folder: Path) -> Run:
    from agent.games.tangram.sim.runner import RunOptions, run_in_process

    # Generous: the simulator flags a turn still running after this; the agent's own deadlines end it.
    results = await run_in_process(config, RunOptions(games=games, turns=turns, seed=seed, deadline=240), folder)
    records = [r for g in results for r in (g.agent_records or [])]
    plays = [r for r in records if r.get("kind") == "decision" and not r.get("adjust")]
    by_model = sum(str(r.get("source", "")).startswith("llm") and bool(r.get("pose")) for r in plays)
    ends = [r for r in records if r.get("kind") == "turn_end"]
    violations = [v for g in results for v in g.game.violations]
    errors = [g.error for g in results if g.error]
    return Run(records, len(ends), by_model, {"violations": violations, "errors": errors, "turn_ends": len(ends),
                                              "plays": len(plays)})


async def forge(config: Any, games: int, turns: int, seed: int) -> Run:
    from agent.games.forge.factory import make_decider
    from agent.games.forge.fake.client import FakeForge, Report
    from agent.games.forge.fake.engine import Game
    from agent.games.forge.server import ForgeServer

    config = config.model_copy(update={"server": config.server.model_copy(update={"port": 0, "host": "127.0.0.1"})})
    decider = make_decider(config)
    server = ForgeServer(config, decider)
    await server.start()
    report = Report()
    try:
        async with FakeForge(f"http://127.0.0.1:{server.port}") as client:
            for i in range(games):
                await client.play(Game(seed + i, ("action", "possible_actions")[i % 2], max_turns=turns), report)
    finally:
        await server.shutdown()
        if decider.client is not None:
            await decider.client.aclose()
    records = read_records(Path(config.transcripts.dir))
    decisions = [r for r in records if r.get("kind") == "decision"]
    by_model = sum(str(r.get("source", "")).startswith("llm") for r in decisions)
    return Run(records, len(decisions), by_model, {"invalid": len(report.invalid()),
                                                   "latency_max_s": max(report.latencies(), default=0.0),
                                                   "sources": sorted({str(r.get("source")) for r in decisions})})


async def boardgame(config: Any, matches: int, seed: int, game: str = "tictactoe") -> Run:
    """``matches`` matches through the agent's own runner (its transcripts) against the reference
    engine's random bot, started here on a free loopback port."""
    from agent.games.boardgame.engine.server import Engine, EngineSettings
    from agent.games.boardgame.runner import run

    engine = Engine(EngineSettings(games=(game,), bot="random", seed=seed, turn_timeout=600.0))
    port = await engine.start("127.0.0.1", 0)
    connection = config.engine.model_copy(update={"url": f"ws://127.0.0.1:{port}", "board_game": game,
                                                  "opponent": "random", "response_timeout": 120.0})
    config = config.model_copy(update={"engine": connection, "seed": seed,
                                       "play": config.play.model_copy(update={"matches": matches})})
    try:
        code = await run(config)
    finally:
        await engine.close()
    records = read_records(Path(config.transcripts.dir))
    results = [r for r in records if r.get("kind") == "result"]
    turns = [r for r in records if r.get("kind") == "turn_end"]
    ours = sum(r.get("outcome") in ("played", "fallback") for r in turns)
    fallbacks = sum(r.get("outcome") == "fallback" for r in turns)
    guarded = sum(r.get("kind") == "guard" for r in records)
    return Run(records, ours, max(0, ours - fallbacks - guarded),
               {"exit": code, "finished": len(results), "matches": matches, "fallbacks": fallbacks,
                "guard_overrides": guarded, "outcomes": [r.get("outcome") for r in results]})


@dataclass
class Paced:
    """An opponent that takes ``seconds`` over each move, as agents across a network do: the local
    arena otherwise runs a match as fast as both sides answer (seconds), faster than a coach on a
    CPU model can answer once; the real arena's matches last minutes."""

    inner: Any
    seconds: float

    async def _answer(self, view: Any) -> tuple[int, int]:
        await asyncio.sleep(self.seconds)
        answer = self.inner.decide(view)
        return await answer if inspect.isawaitable(answer) else answer

    def decide(self, view: Any) -> Any:
        return self._answer(view)

    def bad_line(self, line: str, error: str) -> None:
        self.inner.bad_line(line, error)


async def hive(config: Any, seed: int, opponent: str = "example", pace_s: float = 0.02) -> Run:
    from agent.games.hive.arena import Arena
    from agent.games.hive.link.client import play
    from agent.games.hive.link.match import play_configured
    from agent.games.hive.opponents.bots import make_bot

    arena = Arena(port=0, seed=seed)
    served = asyncio.create_task(arena.serve())
    await arena.listening.wait()
    config = config.model_copy(update={"seed": seed, "arena": config.arena.model_copy(update={"port": arena.port})})
    ours = asyncio.create_task(play_configured(config))
    theirs = asyncio.create_task(play("127.0.0.1", arena.port, "B-" + opponent,
                                      Paced(make_bot(opponent, seed + 7919), pace_s), connect_timeout=10))
    outcome, _, result = await asyncio.gather(ours, theirs, served)
    records = read_records(Path(config.transcripts.dir))
    coach = outcome.session.get("coach", {})
    return Run(records, int(coach.get("asked", 0)), int(coach.get("applied", 0)),
               {"forfeit": result.forfeit, "winner": result.winner, "scores": result.scores, "coach": coach,
                "ending": outcome.client.ending})
