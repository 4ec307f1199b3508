"""One run: build and serve the game, start the agent, play the plan in Chromium, tally."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agent.core.local_model import free_port
from benchmarks.tangram.real_game.agent_run import (
    AGENT_LEFT,
    GAME_PORT,
    AgentProcess,
    RunnerError,
    agent_config,
    port_in_use,
    run_agent,
)
from benchmarks.tangram.real_game.ai_turn import play_ai_turn
from benchmarks.tangram.real_game.browser import Recorder, StepTimeout, chromium
from benchmarks.tangram.real_game.events import EventLog, ImageStore
from benchmarks.tangram.real_game.human import Human
from benchmarks.tangram.real_game.options import Options
from benchmarks.tangram.real_game.plan import TurnPlan, plan
from benchmarks.tangram.real_game.promises import check
from benchmarks.tangram.real_game.report import decision_sources, summarize, summary_lines, table
from benchmarks.tangram.real_game.set_run import play_set, set_report
from benchmarks.tangram.real_game.site import served_game
from benchmarks.tangram.real_game.study import (
    ConsoleCamera,
    game_lines,
    game_rows,
    games_of,
    status,
    status_lines,
    study_cli,
    study_copy,
)
from benchmarks.tangram.real_game.tally import tally

REPO = Path(__file__).resolve().parents[3]


@dataclass
class Outcome:
    notes: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def base_config(options: Options) -> dict[str, Any]:
    path = options.config
    if path is None and (options.local_model or options.fake_llm):
        path = REPO / "configs" / "local.yaml"
    if path is None:
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise RunnerError(f"{path}: a config is a YAML mapping")
    if "prompts_dir" in data and not Path(data["prompts_dir"]).is_absolute():
        data["prompts_dir"] = str((REPO / data["prompts_dir"]).resolve())
    return data


@contextlib.asynccontextmanager
async def fake_llm(enabled: bool) -> AsyncIterator[str | None]:
    """The project's fake OpenAI-compatible server answering every structured request with its
    schema's first choices (a model that always picks the first candidate)."""
    if not enabled:
        yield None
        return
    from agent.core.testing.fake_openai import FakeOpenAI, first_enum_responder

    async with FakeOpenAI(responder=first_enum_responder) as fake:
        yield fake.base_url


async def play_game(human: Human, rec: Recorder, steps: list[TurnPlan], turn_timeout: float, game: int) -> None:
    game_turns = 0
    """The game's own turn counter (End Turn and finish each add one; Finish needs 3)."""
    for step in steps:
        ws = rec.sockets
        if step.chat_before:
            await human.chat(step.chat_before)
        if step.undo:
            await human.drag_piece(ws)
            await human.undo()
        await human.drag_piece(ws)
        how = await play_ai_turn(human, rec, step, turn_timeout)
        if how == "reload":
            game_turns = 0
            continue
        game_turns += 2
        await human.screenshot(f"game{game}-turn{step.turn:02d}")
    if game_turns >= 3:
        await human.finish()
        await human.screenshot(f"game{game}-finish")


async def run(options: Options) -> tuple[list[str], dict[str, Any]]:
    """The printed lines and the summary object."""
    port = _free_game_port(options)
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    log = EventLog(out / "events.jsonl")
    store = ImageStore(out / "images" if options.images_mb > 0 else None, int(options.images_mb * 1_000_000))
    rec = Recorder(log, store)
    outcome = Outcome()
    steps = plan(options.turns, options.reload_turn, options.chat)
    study_report: list[str] = []
    set_runs: list[Any] = []
    try:
        async with served_game(options.gaips, options.template, out) as url, fake_llm(options.fake_llm) as llm_url:
            if options.study is not None:
                study_report = await _drive_study(options, url, rec, steps, outcome, port)
            else:
                config = agent_config(base_config(options), out / "transcripts", llm_url, port)
                if llm_url is not None:  # the fake reads the schema from OpenAI's json_schema form only
                    config["llm"]["structured_output"] = "json_schema"
                async with run_agent(config, out, options.local_model) as agent, \
                        chromium(options.chromium, options.agent_port, clock=options.chat == "set") as context:
                    if options.chat == "set":

                        set_runs = await play_set(context, url, rec, agent, options)
                    else:
                        for game in range(1, options.games + 1):
                            await _one_game(context, url, rec, agent, steps, options, game, outcome)
                    outcome.notes["agent_alive_at_end"] = agent.process.returncode is None
    finally:
        log.close()
    result = tally(log.events)
    summary = summarize(result, log.events)
    # transcripts/ of a plain run, study-transcripts/ of a study's (beside its database, study.db).
    decisions = decision_sources([line for path in sorted(out.glob("*transcripts/*.jsonl"))
                                  for line in path.read_text(encoding="utf-8", errors="replace").splitlines()])
    data = {**summary.model_dump(), "decisions": decisions, **outcome.notes, "runner_failures": outcome.failures,
            "out": str(out)}
    lines = [*table(result), *summary_lines(summary), f"the agent's decisions by source (transcripts): {decisions}"]
    lines += study_report
    if options.chat == "set":

        set_lines, data["chat_set"] = set_report(set_runs, out / "sheet.jsonl")
        lines = [*set_lines, *summary_lines(summary), f"the agent's decisions by source (transcripts): {decisions}"]
    if options.chat == "requests":
        promises = check(log.events)
        data["promises"] = promises.summary()
        lines += promises.lines()
    lines += [f"runner step failed: {f}" for f in outcome.failures]
    (out / "summary.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    (out / "table.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines, data


def _free_game_port(options: Options) -> int:
    port = options.agent_port or GAME_PORT
    taken = port_in_use(port)
    if taken and port == GAME_PORT:
        raise RunnerError(f"port 5000 is taken ({taken}): the game dials ws://localhost:5000, so the agent must "
                          "listen there; stop what holds it first (or pass --agent-port PORT to redirect the "
                          "game's socket in the page)")
    if taken:
        raise RunnerError(f"--agent-port {port} is taken ({taken})")
    return port


async def _drive_study(options: Options, url: str, rec: Recorder, steps: list[TurnPlan], outcome: Outcome,
                       port: int) -> list[str]:
    """The agent serving the study with its console; the participant started from the command line
    and playing their games; the console photographed. The study's tables, as printed lines."""
    assert options.study is not None
    out = options.out
    study = study_copy(options.study, out)
    console_port = free_port()
    async with run_agent(None, out, options.local_model, study=study, port=port, console_port=console_port) as agent, \
            chromium(options.chromium, options.agent_port) as context:
        started = await study_cli("next", options.participant, "--study", str(study), cwd=out)
        rec.note("runner", "participant started", line=started)
        camera = await ConsoleCamera.open(context, f"http://127.0.0.1:{console_port}/", out / "shots",
                                          options.step_timeout)
        total = games_of(await status(study), options.participant)
        games = min(total, options.games) if options.games_given else total
        for game in range(1, games + 1):
            await _one_game(context, url, rec, agent, steps, options, game, outcome, camera)
            try:
                await camera.until_progress(options.participant, game)
            except Exception as exc:  # Playwright's TimeoutError: the game did not count as completed
                outcome.failures.append(f"game {game}: the console never showed {game} completed game(s) ({exc})"[:300])
            await camera.shot(f"console-after-game{game}")
        outcome.notes["agent_alive_at_end"] = agent.process.returncode is None
        final = await status(study)
    outcome.notes["study"] = final
    return ["", *status_lines(final), "", *game_lines(await asyncio.to_thread(game_rows, out / "study.db"))]


async def _one_game(context: Any, url: str, rec: Recorder, agent: AgentProcess, steps: list[TurnPlan],
                    options: Options, game: int, outcome: Outcome, camera: ConsoleCamera | None = None) -> None:
    page = await context.new_page()
    rec.on_page(page)
    human = Human(page, rec, options.out / "shots", options.step_timeout)
    since = rec.cursor
    try:
        await page.goto(url, timeout=options.step_timeout * 1000)
        await human.wait_socket(since)
        await human.find_canvas()
        rec.note("runner", "game start", game=game)
        await play_game(human, rec, steps, options.turn_timeout, game)
        if camera is not None:  # the game's last board, live on the console, before the page goes
            await camera.shot(f"console-game{game}-live")
    except (StepTimeout, RunnerError) as exc:
        outcome.failures.append(f"game {game}: {exc}")
        rec.note("runner", "step failed", game=game, error=str(exc))
        with contextlib.suppress(Exception):
            await human.screenshot(f"game{game}-failed")
    mark = len(agent.lines)
    rec.note("human", "close")
    await page.close()
    left = await agent.wait_line(lambda line: AGENT_LEFT in line, mark, options.step_timeout)
    outcome.notes[f"game{game}_close_seen_by_agent"] = left is not None
