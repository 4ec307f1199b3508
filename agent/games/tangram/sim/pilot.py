"""A study piloted in the simulator: ``python -m agent.games.tangram.sim --study FILE --participants N``.

The agent serves the study in-process exactly as ``python -m agent --study FILE`` does (every
condition's player ready, each connection bound to the active participant's next condition,
link/study.py); the pilot starts participants one after the other, and each of their games is a
simulated game against a scripted partner, played through and closed on the partner's turn, as the
game's Finish does. Transcripts go beside the pilot's database (``<pilot db>-transcripts/``), tagged
participant, condition and order, so a researcher checks the design, the orders and the files
before the first person comes.

The pilot never touches the study's own database: it writes its own (``--store``, by default a new
``<study>-pilot-<UTC time>.db`` beside the study's), so the real participants start from nothing.
A Wizard-of-Oz condition has nobody at the console in a pilot: its config's own player stands in
for the experimenter (said in the output).

A study with questionnaires: each participant answers every page of their flow at its place (before
the first game, after each, after the last), through the store as a participant's page would
(``StudyRun.answer_page``: shown, checked, saved), with answers drawn per condition and the effect
``--effect CONDITION=POINTS`` puts on its scales (core/studies/simulated.py); participants take the
study's languages in turn. The pilot answers each page before the game it comes before, as the lab's
pages would (online/lab.py): the study's binder binds a game only when the flow has reached it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.studies.run import StudyRun, StudyStatus
from agent.core.studies.simulated import simulated_answers
from agent.core.studies.study_file import Study, load_study
from agent.games.tangram.config import Config
from agent.games.tangram.link.server import AgentServer
from agent.games.tangram.link.study import StudyLink
from agent.games.tangram.sim.runner import GameResult, RunOptions, play_game

GAME_END_WAIT_S = 30.0
"""How long the pilot waits for the agent to record a game's end after the partner closed it."""
MAX_ATTEMPTS = 3
"""Games played for one place of a participant's sequence before the pilot gives up on it."""
MAX_PARTICIPANTS = 1000


class PilotError(Exception):
    """The pilot cannot run as asked; one line."""


@dataclass(frozen=True)
class PilotGame:
    participant: str
    position: int
    condition: str
    order: int
    attempt: int
    completed: bool
    reason: str
    ai_turns: int
    figure_score: float | None
    transcript: str | None
    error: str | None


@dataclass
class PilotResult:
    games: list[PilotGame]
    status: StudyStatus
    store: Path
    notes: list[str]


def config_model_of(game: str) -> type[Config]:
    """The config model a study's conditions are checked with: the simulator pilots tangram studies."""
    if game != "tangram":
        raise ValueError(f"the tangram simulator pilots tangram studies, not {game!r} ones")
    return Config


def read_pilot_study(path: Path) -> Study:
    """The study file with every condition's config validated (StudyError, one line each)."""
    return load_study(path, config_model_of, "tangram")


def pilot_store(study: Study, now: datetime.datetime | None = None) -> Path:
    """A new database beside the study's: ``<store stem>-pilot-<UTC time>.db``."""
    stamp = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y%m%dT%H%M%SZ")
    return study.store.with_name(f"{study.store.stem}-pilot-{stamp}.db")


def participant_ids(count: int, prefix: str) -> list[str]:
    width = max(2, len(str(count)))
    return [f"{prefix}{i:0{width}d}" for i in range(1, count + 1)]


def check_turns(study: Study, turns: int) -> None:
    """A pilot's games must be long enough to count as completed in every condition."""
    for condition in study.conditions:
        config = condition.config
        assert isinstance(config, Config)
        need = config.study.completed_after_turns
        if turns < need:
            raise PilotError(f"--turns {turns}: condition {condition.name!r} counts a game as completed after "
                             f"{need} AI turns (study.completed_after_turns), so no game could complete")


def pilot_study(study: Study, store: Path, participants: list[str], turns: int) -> Study:
    """``study`` with its database at ``store``, which must not exist yet; PilotError (one line)
    for a pilot that cannot work."""
    if not participants or len(participants) > MAX_PARTICIPANTS:
        raise PilotError(f"--participants must be 1 to {MAX_PARTICIPANTS}")
    if store.exists():
        raise PilotError(f"{store} exists: a pilot starts a new database (choose another --store)")
    check_turns(study, turns)
    return dataclasses.replace(study, store=store.resolve())


async def _answer_pages(run: StudyRun, pid: str, before: int | None, effects: Mapping[str, float],
                        rng: random.Random) -> int:
    """Answer the participant's questionnaire pages not yet answered that come before their game at
    ``before`` (None: every page left), as their page would (core/studies/simulated.py). In the lab
    no page enforces the flow: the pilot keeps to it. Returns the pages answered."""
    q = run.study.questionnaires
    row = await run.store.participant(pid)
    if q is None or row is None:
        return 0
    if run.asks_consent(row) and row.consent is None:
        await run.store.set_consent(pid, True)  # the first page, as a participant who takes part answers it
    done = await run.store.submitted_steps(pid)
    answered = 0
    for step in run.steps_of(row):
        if step.kind == "game":
            if before is not None and step.position >= before:
                break
            continue
        if step.index in done or step.questionnaire is None:
            continue
        answers, other = simulated_answers(q.specs[step.questionnaire], step.condition, effects, rng,
                                           len(row.conditions))
        language = q.languages[(row.number - 1) % len(q.languages)]  # every language gets its share
        await run.answer_page(pid, step, language, answers, other)
        answered += 1
    return answered


async def run_pilot(study: Study, participants: list[str], options: RunOptions,
                    effects: Mapping[str, float] | None = None) -> PilotResult:
    """Serve ``study`` (from :func:`pilot_study`) in-process and play every participant's games
    in turn; with questionnaires, each participant answers every page of their flow, drawn with
    ``effects`` (condition -> scale points added to its scales; core/studies/simulated.py)."""
    effects = dict(effects or {})
    rng = random.Random(options.seed)
    store = study.store
    notes = [f"condition {c.name!r} is Wizard-of-Oz: nobody is at the console in a pilot, so its config's "
             f"{c.config.player} player stands in for the experimenter" for c in study.conditions
             if c.console == "wizard"]
    async with await StudyRun.open(study) as run:
        secrets = study.secrets()
        link = await StudyLink.build(run, secrets)
        ended = asyncio.Event()
        link.on_change = ended.set
        first = link.first.config
        config = first.model_copy(update={"server": first.server.model_copy(update={"host": "127.0.0.1", "port": 0})})
        server = AgentServer(config, link.first.players, secrets, study_link=link)
        games: list[PilotGame] = []
        try:
            await server.start()
            link.prime_soon()
            index = 0
            for pid in participants:
                await run.next_participant(pid)
                while (assignment := await run.current()) is not None and assignment.participant == pid:
                    await _answer_pages(run, pid, assignment.position, effects, rng)
                    attempts = sum(1 for g in await run.store.games(pid) if g.position == assignment.position)
                    if attempts >= MAX_ATTEMPTS:
                        raise PilotError(f"participant {pid}: game {assignment.position} ({assignment.condition}) "
                                         f"did not complete in {MAX_ATTEMPTS} attempts; see its transcripts")
                    index += 1
                    ended.clear()
                    result = await play_game(server.url, index, options)
                    games.append(await _recorded(run, pid, result, ended))
                await _answer_pages(run, pid, None, effects, rng)
        finally:
            await server.shutdown()
            await link.aclose()
        return PilotResult(games, await run.status(), store, notes)


async def _recorded(run: StudyRun, pid: str, result: GameResult, ended: asyncio.Event) -> PilotGame:
    """The game as the study's database recorded it, once the agent has recorded its end."""
    async with asyncio.timeout(GAME_END_WAIT_S):
        while True:
            rows = await run.store.games(pid)
            if rows and rows[-1].ended_at is not None:
                break
            await ended.wait()
            ended.clear()
    row = rows[-1]
    return PilotGame(pid, row.position, row.condition, row.order_position, row.attempt, bool(row.completed),
                     row.end_reason or "", len(result.turns), result.figure_score,
                     Path(row.transcript).name if row.transcript else None, result.error)


def format_games(games: list[PilotGame]) -> str:
    """One line per game played: the participants table of the pilot."""
    head = (f"{'participant':<12} {'game':>4} {'condition':<16} {'order':>5} {'attempt':>7} {'completed':<9} "
            f"{'AI turns':>8} {'figure':>6}  transcript")
    lines = [head]
    for g in games:
        score = "n/a" if g.figure_score is None else f"{g.figure_score:.2f}"
        lines.append(f"{g.participant:<12} {g.position:>4} {g.condition:<16} {g.order:>5} {g.attempt:>7} "
                     f"{'yes' if g.completed else 'no':<9} {g.ai_turns:>8} {score:>6}  {g.transcript or '-'}"
                     + (f"  ({g.error})" if g.error else "") + ("" if g.completed else f"  [{g.reason}]"))
    return "\n".join(lines)


def pilot_json(result: PilotResult) -> dict[str, Any]:
    return {"store": str(result.store), "notes": result.notes, "games": [dataclasses.asdict(g) for g in result.games],
            "status": result.status.model_dump(mode="json")}
