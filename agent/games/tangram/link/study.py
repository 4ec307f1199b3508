"""A study's side of the link: each game connection bound to the current participant's condition.

``python -m agent --study FILE`` serves every condition from one process. At start-up each
condition gets its seat (lifecycle.prepare_seat: its config, a player factory built and primed as a
normal run does, its ``session_start`` metadata, its turn lines). :class:`StudyLink` is the study's
binder of the session lifecycle (link/lifecycle.py): at a connection's first frame the server asks
:meth:`StudyLink.bind` for the study run's current assignment (the active participant's next game);
:meth:`StudyLink.started` records it in the study's database before the game starts
(:meth:`StudyRun.game_started`); the session then plays that condition's player and config, its
transcript tagged participant, condition and order, in the study's transcript folder beside its
database (``<db>-transcripts/``). When the connection ends, :func:`judge` says whether the game was
completed and :meth:`StudyLink.ended` records it.

What "completed" means for tangram: the game has no game-over frame. Its only end is the Finish
button (on the participant's turn, from the game's third turn, so after two AI turns) and the
closing form, which quits the engine: the agent sees the socket close. So a game counts as
completed when the game closed the connection while no AI turn was running, after at least
``study.completed_after_turns`` AI turns of that connection ended with ``finish``. A socket lost
during an AI turn or before that, an agent stopping (Ctrl-C, SIGTERM) or killed, or a session that
failed, leaves it uncompleted: the next connection plays the same condition again (attempt 2).

With questionnaires, the game waits until the participant's pages (the online pages on the lab
machine's loopback, online/lab.py) reach it: :meth:`StudyRun.playable`.

With no active participant, a connection waits: its frames are answered (a chat line saying the
experimenter is setting up, and ``finish`` for a ``playRequest``, so the game never freezes) and
each new frame asks again, so the game already open binds as soon as the experimenter starts a
participant. Nothing of the study is written for a waiting connection.

An online study's connections meet their study in the other binder of the same lifecycle
(online/sockets.py: a ticket names the participant and the game; the server judges the end from the
AI turns it counted).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.core.redact import Secrets
from agent.core.studies.run import Assignment, StartedGame, StoreError, StudyRun
from agent.core.transcript import Transcript
from agent.games.tangram.config import Config
from agent.games.tangram.contract import Decision, Player, TurnView
from agent.games.tangram.link.factory import PlayerSource
from agent.games.tangram.link.lifecycle import Binding, Outcome, Seat, prepare_seat
from agent.games.tangram.link.session import Session
from agent.games.tangram.protocol import MAX_CHAT_CHARS

log = logging.getLogger(__name__)

LINES_PATH = Path(__file__).resolve().parent / "study_lines.yaml"
SERVER_FIELDS = ("host", "port", "allow_remote", "token", "max_frame_bytes", "ping_interval", "max_connections")
"""The server settings every condition must share: one process listens for all of them."""


class StudySetupError(Exception):
    """The study cannot be served as configured; one line for the user."""


class StudyLines(BaseModel):
    """The chat lines of ``study_lines.yaml``."""

    model_config = ConfigDict(extra="forbid")
    no_participant: str = Field(min_length=1, max_length=MAX_CHAT_CHARS)


def load_lines(path: Path = LINES_PATH) -> StudyLines:
    try:
        return StudyLines.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise StudySetupError(f"{path.name}: {exc}".splitlines()[0]) from exc


def server_mismatch(configs: Mapping[str, Config]) -> str | None:
    """One line naming a server setting two conditions disagree on, else None."""
    names = list(configs)
    first = configs[names[0]].server
    for name in names[1:]:
        other = configs[name].server
        for field in SERVER_FIELDS:
            if getattr(other, field) != getattr(first, field):
                return (f"conditions {names[0]!r} and {name!r} set server.{field} differently "
                        f"({getattr(first, field)!r}, {getattr(other, field)!r}): one process listens for every "
                        "condition, so the server section must be the same")
    return None


@dataclass
class StudyGame:
    """One connection's game, as the study's binder keeps it (a binding's ``context``)."""

    assignment: Assignment
    started: StartedGame | None = None
    verdict: Verdict | None = None


class StudyLink:
    """The study run and every condition's seat; shared by all the connections of one server. The
    lifecycle's binder for a study (link/lifecycle.py): binds a connection to the active participant's
    next game, records it before the session starts, and judges and records its end."""

    def __init__(self, run: StudyRun, seats: Mapping[str, Seat], lines: StudyLines, secrets: Secrets) -> None:
        self.run = run
        self.seats = dict(seats)
        self.lines = lines
        self.secrets = secrets
        self.on_change: Callable[[], None] | None = None
        """Called after a game of the study started or ended (the console refreshes its study panel)."""

    @classmethod
    async def build(cls, run: StudyRun, secrets: Secrets) -> StudyLink:
        """Every condition's seat (lifecycle.prepare_seat); StudySetupError (one line) when the
        conditions cannot share one server. Call before anything listens."""
        configs: dict[str, Config] = {}
        for condition in run.study.conditions:
            if not isinstance(condition.config, Config):
                raise StudySetupError(f"condition {condition.name!r} is not a tangram config")
            configs[condition.name] = condition.config
        problem = server_mismatch(configs)
        if problem is not None:
            raise StudySetupError(problem)
        lines = load_lines()
        seats: dict[str, Seat] = {}
        try:
            for name, config in configs.items():
                seats[name] = await prepare_seat(config, name)
        except BaseException:
            for seat in seats.values():
                if seat.factory is not None:
                    await seat.factory.aclose()
            raise
        return cls(run, seats, lines, secrets)

    @property
    def first(self) -> Seat:
        return next(iter(self.seats.values()))

    def supervise(self, wrap: Callable[[PlayerSource, Config], PlayerSource]) -> None:
        """Give every condition's sessions through ``wrap`` (the console's supervision)."""
        self.seats = {name: seat.supervised(wrap) for name, seat in self.seats.items()}

    def prime_soon(self) -> None:
        for seat in self.seats.values():
            if seat.factory is not None:
                seat.factory.prime_soon()

    async def aclose(self) -> None:
        for seat in self.seats.values():
            if seat.factory is not None:
                await seat.factory.aclose()

    def waiting(self, seat: Seat) -> Binding:
        """What a connection waiting for a participant plays: every turn passes with the waiting line."""
        line = self.lines.no_participant
        return Binding.of(seat, players=lambda _transcript: WaitingPlayer(line), metadata={})

    async def bind(self) -> Binding | None:
        """The active participant's next game, with its condition's seat; None when nobody is active,
        when their flow is at a questionnaire page (their pages, online/lab.py, go on first), or when the
        database cannot be read (logged)."""
        try:
            assignment = await self.run.playable()
        except StoreError as exc:
            log.warning("study %s: %s", self.run.study.name, exc)
            return None
        if assignment is None:
            return None
        seat = self.seats[assignment.condition]
        config = assignment.config
        assert isinstance(config, Config)
        # The study's transcripts go beside its database (core/studies/files.py), not to the
        # condition's transcripts.dir: the study's folder holds everything of it.
        return Binding.of(seat, config=config, metadata=assignment.session_metadata(seat.metadata),
                          folder=self.run.transcripts_dir, context=StudyGame(assignment))

    async def started(self, binding: Binding, transcript: Transcript) -> bool:
        """Record the game in the study's database before its first frame is answered. False when
        the participant was dropped or paused since :meth:`bind` (logged): the connection closes, and
        the game's next dial binds again."""
        game: StudyGame = binding.context
        assignment = game.assignment
        try:
            started = await self.run.game_started(assignment, transcript.session_id, transcript.path)
        except StoreError as exc:
            log.warning("study %s: %s", self.run.study.name, exc)
            return False
        binding.metadata = {**binding.metadata, "attempt": started.attempt}
        game.started = started
        self._changed()
        return True

    async def connected(self, binding: Binding, session: Session) -> None:
        game: StudyGame = binding.context
        assert game.started is not None
        started = game.started
        a = started.assignment
        log.info("game connected from %s (session %s): participant %s, condition %s (%d of %d), attempt %d",
                 session.peer, session.transcript.session_id, a.participant, a.condition, a.position,
                 a.games_total, started.attempt)

    def closing(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        """Judge the game's end while its transcript is still open, and write the verdict there."""
        verdict = judge(binding.config, closed_by_game=outcome.by_game, ai_turn_running=outcome.ai_turn_running,
                        ai_turns_ended=outcome.ai_turns_ended, failed=outcome.failed)
        session.transcript.record("study_game_end", completed=verdict.completed, reason=verdict.reason)
        binding.context.verdict = verdict

    async def ended(self, binding: Binding, session: Session, outcome: Outcome) -> None:
        """Record the game's end as :meth:`closing` judged it (shielded: an agent stopping still writes it)."""
        game: StudyGame = binding.context
        started, verdict = game.started, game.verdict
        assert started is not None and verdict is not None
        a = started.assignment
        try:
            await asyncio.shield(self.run.game_ended(started, verdict.completed, verdict.reason))
        except StoreError as exc:
            log.error("study %s: the end of %s's game could not be recorded: %s", self.run.study.name,
                      a.participant, exc)
        self._changed()
        log.info("game from %s left (session %s: %s): participant %s, condition %s %s (%s)", session.peer,
                 session.transcript.session_id, outcome.reason, a.participant, a.condition,
                 "completed" if verdict.completed else "not completed", verdict.reason)

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # the console must never cost the study a record
                log.exception("study: the console failed on a change")


class WaitingPlayer(Player):
    """The player of a connection waiting for a participant: every turn passes, and every turn and
    chat request gets the waiting line."""

    name = "waiting"
    uses_images = False

    def __init__(self, line: str) -> None:
        self.line = line

    async def play(self, view: TurnView) -> Decision:
        return Decision(None, self.line, source="study-waiting")

    async def adjust(self, view: TurnView) -> Decision:
        return Decision(None, self.line, source="study-waiting")

    async def chat(self, view: TurnView) -> str:
        return self.line


@dataclass(frozen=True)
class Verdict:
    completed: bool
    reason: str


def judge(config: Config, *, closed_by_game: bool, ai_turn_running: bool, ai_turns_ended: int,
          failed: bool = False) -> Verdict:
    """Whether a study game was completed (see the module's docstring). ``failed``: the session
    ended on an error of the agent's own."""
    need = config.study.completed_after_turns
    if failed:
        return Verdict(False, "the session failed (see the agent's log)")
    if not closed_by_game:
        return Verdict(False, "the agent ended the connection")
    if ai_turn_running:
        return Verdict(False, f"the game left during an AI turn (after {ai_turns_ended} AI turns)")
    if ai_turns_ended < need:
        return Verdict(False, f"the game left after {ai_turns_ended} AI turns, fewer than the "
                              f"{need} a finished game has (study.completed_after_turns)")
    return Verdict(True, f"the game closed on the participant's turn after {ai_turns_ended} AI turns")
