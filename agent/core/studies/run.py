"""What a game server asks of a study: which participant and condition a new game belongs to.

```python
run = await StudyRun.open(study)                 # study = load_study(...): every config checked
assignment = await run.current()                 # None: no participant is active
started = await run.game_started(assignment, transcript.session_id, transcript.path)
...  # play with assignment.config (the condition's config, tagged participant/condition/order)
await run.game_ended(started, completed=True)
```

A game binds a connection to a study through its binder of the session lifecycle (tangram:
link/study.py in the lab, online/sockets.py online), which makes these calls.

The database is read on every call, so a participant started from the command line while the
agent serves is the one the next connection gets. Nothing is cached between calls but the study
itself; the object holds no module-level state and is safe to share between the tasks of one
event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.core.config import GameConfig, apply_tags
from agent.core.studies.files import resolve_transcript, stored_transcript, transcripts_dir
from agent.core.studies.metadata import with_study
from agent.core.studies.place import last_texts, place_of
from agent.core.studies.plan import Design
from agent.core.studies.questionnaires import Step, check_answers
from agent.core.studies.store import (
    GameRow,
    ParticipantRow,
    ParticipantState,
    StoreError,
    StudyStore,
    Submitted,
)
from agent.core.studies.study_file import NAME, NAME_RULE, Study

__all__ = ["Assignment", "StartedGame", "StoreError", "StudyRun", "StudyStatus"]


@dataclass(frozen=True)
class Assignment:
    """The game a new connection plays: whose, which condition, where in their sequence."""

    study: str
    plan_hash: str
    participant: str
    condition: str
    order: int
    """1-based place of the condition in the participant's sequence."""
    position: int
    """1-based place of this game among all the participant's games."""
    repeat: int
    games_total: int
    config: GameConfig
    """The condition's config, its tags plus participant, condition and order."""
    console: str | None = None
    """The condition's console takeover (wizard: the console plays every AI turn)."""
    games_per_condition: int = 1
    analysis_hash: str | None = None
    """The study's analysis plan's hash (None: the study file declares none)."""

    def tags(self) -> dict[str, str]:
        """participant, condition and order; with several games per condition also ``repeat``
        (which of them, from 1)."""
        tags = {"participant": self.participant, "condition": self.condition, "order": str(self.order)}
        if self.games_per_condition > 1:
            tags["repeat"] = str(self.repeat)
        return tags

    def session_metadata(self, base: Mapping[str, Any]) -> dict[str, Any]:
        """``base`` (the condition's :func:`agent.core.studies.metadata.study_metadata`, made once at start-up)
        with the study, the plan's hash, and the tags participant, condition and order."""
        return with_study(base, self.study, self.plan_hash, self.tags(), self.analysis_hash)


@dataclass(frozen=True)
class StartedGame:
    assignment: Assignment
    game_id: int
    attempt: int
    """1 unless the game at this place was started before and not completed (a killed agent)."""
    session_id: str


class ParticipantStatus(BaseModel):
    id: str
    number: int = Field(description="1-based: the order in which participants were started.")
    sequence: int = Field(description="1-based: the plan's order sequence.")
    order: list[str] = Field(description="Condition names in the participant's sequence.")
    state: ParticipantState
    completed: int = Field(description="Games completed.")
    games: int = Field(description="Games the participant plays in all.")
    attempts: int = Field(description="Games started, replays of interrupted ones included.")
    next_condition: str | None = Field(description="The condition of the participant's next game.")
    replaces: str | None = Field(description="The dropped participant whose sequence this one took.")
    created_at: str
    online: bool = Field(False, description="Takes part from their own browser (an online study's link).")
    source: str | None = Field(None, description="Online: 'invite' (an invitation link) or 'open' (the open address).")
    consent: str | None = Field(None, description="'given' or 'refused'; None when not answered (or not asked).")
    consent_at: str | None = Field(None, description="When the consent page was answered.")
    left_at: str | None = Field(None, description="When their page said it was closing, if they are not back.")
    finished_page_at: str | None = Field(None, description="When they first saw the completion page.")
    dropped_at: str | None = Field(None, description="When they were dropped out (state dropped).")
    dropped_why: str | None = Field(None, description="Why they were dropped out, as far as the study knows.")
    outcome: str | None = Field(None, description="How the participation ended early: screened_out, withdrawn, "
                                                  "timed_out; None otherwise.")
    place: str = Field("", description="Where they are in the flow: consent, a questionnaire page, a game, done, "
                                       "screened out, withdrawn, timed out.")
    last_text: str | None = Field(None, description="Their latest free-text answer (plain text, at most 200 "
                                                    "characters), for the experimenter's eyes only.")


class SequenceStatus(BaseModel):
    sequence: int = Field(description="1-based.")
    order: list[str]
    participants: int = Field(description="Participants holding it who have not dropped out.")
    completed: int
    dropped: int


class ConditionStatus(BaseModel):
    condition: str
    participants: int = Field(description="Participants not dropped out whose sequence has it.")
    games_completed: int
    games_started: int


class StudyStatus(BaseModel):
    study: str
    plan_sha256: str
    design: Design
    store: str
    conditions: list[str]
    games_per_participant: int
    active: str | None
    counts: dict[Literal["active", "paused", "dropped", "completed"], int]
    balanced: bool = Field(description="Every sequence has the same number of completed participants.")
    balance: str = Field(description="One line on the balance.")
    sequences: list[SequenceStatus]
    by_condition: list[ConditionStatus]
    participants: list[ParticipantStatus]


@dataclass(frozen=True)
class _Facts:
    """What the participants table's online columns and the event log say of one participant."""

    consent_at: str | None = None
    finished_page_at: str | None = None
    dropped_at: str | None = None
    drop_detail: str | None = None


def _facts(records: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict[str, _Facts]:
    drops: dict[str, tuple[str, str | None]] = {}
    for e in events:  # in order: the last drop counts
        if e.get("action") == "drop" and e.get("participant"):
            drops[e["participant"]] = (e["at"], e.get("detail"))
    return {r["id"]: _Facts(r.get("consent_at"), r.get("finished_page_at"), *drops.get(r["id"], (None, None)))
            for r in records}


def _dropped(row: ParticipantRow, facts: _Facts) -> tuple[str | None, str | None]:
    """When and why a dropped participant was dropped (None, None for anyone else)."""
    if row.state != "dropped":
        return None, None
    if row.consent == "refused":
        return facts.consent_at or facts.dropped_at or row.updated_at, "refused consent"
    at = facts.dropped_at or row.updated_at
    if facts.drop_detail:
        return at, facts.drop_detail
    if row.left_at is not None:
        return at, f"their page closed at {row.left_at} and they did not come back"
    return at, "by the experimenter (study drop, or the console's Drop out)"


def _balance(design: Design, sequences: list[SequenceStatus]) -> tuple[bool, str]:
    done = [s.completed for s in sequences]
    if design == "fixed":
        return True, f"one fixed order: {done[0]} participant(s) completed"
    target = max(done) if any(done) else 0
    short = [s.sequence for s in sequences if s.completed < target]
    if not short:
        return True, (f"balanced: {target} completed participant(s) on each of the {len(sequences)} sequences"
                      if target else f"no participant completed yet ({len(sequences)} sequences)")
    return False, (f"not balanced yet: sequence(s) {', '.join(map(str, short))} need more completed participants "
                   f"(a balanced design has a multiple of {len(sequences)} completed)")


class StudyRun:
    """A study being run: the loaded study and its open database."""

    def __init__(self, study: Study, store: StudyStore) -> None:
        self.study = study
        self.store = store
        self._configs = {c.name: c for c in study.conditions}
        self.pages_url: str | None = None
        """In the lab with questionnaires: where this process serves the participants' pages
        (``http://127.0.0.1:PORT``; tangram's online/lab.py sets it), for the console's links."""

    @classmethod
    async def open(cls, study: Study) -> StudyRun:
        """Open (create, migrate) the study's database; StoreError with one line if it cannot be used
        or holds another plan. Call before anything listens."""
        return cls(study, await StudyStore.open(study.store, study.name, study.plan))

    async def close(self) -> None:
        await self.store.close()

    @property
    def transcripts_dir(self) -> Path:
        """Where the study's games write their transcripts: ``<database name>-transcripts/`` beside the
        study's database (each condition's ``transcripts.enabled`` and ``images`` still apply, its
        ``transcripts.dir`` does not)."""
        return transcripts_dir(self.store.path)

    def transcript_of(self, game: GameRow) -> Path | None:
        """The transcript file of ``game``, wherever the study's folder is now."""
        return resolve_transcript(self.store.path, game.transcript)

    async def __aenter__(self) -> StudyRun:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _assignment(self, row: ParticipantRow, position: int) -> Assignment:
        plan = self.study.plan
        slot = plan.slots(row.sequence - 1)[position - 1]
        condition = self._configs[slot.condition]
        bare = Assignment(self.study.name, plan.hash, row.id, slot.condition, slot.order, slot.position, slot.repeat,
                          plan.games_per_participant(), condition.config, condition.console, plan.games_per_condition,
                          self.study.analysis_hash)
        return dataclasses.replace(bare, config=apply_tags(condition.config, bare.tags()))

    def assignment_of(self, row: ParticipantRow, position: int) -> Assignment:
        """Participant ``row``'s game at ``position`` (1-based), with its condition's config."""
        return self._assignment(row, position)

    async def current(self) -> Assignment | None:
        """The game the next connection plays: the active participant's next game; None when no
        participant is active (or the active one has played every game)."""
        row = await self.store.active()
        if row is None:
            return None
        slot = await self.store.next_slot(row)
        return None if slot is None else self._assignment(row, slot.position)

    async def playable(self) -> Assignment | None:
        """The game a lab connection may play now: :meth:`current`, but only when the active
        participant's flow has reached it (with questionnaires, the pages before it are answered on
        the participant's pages, link of ``study next``); None otherwise (the connection waits)."""
        row = await self.store.active()
        if row is None:
            return None
        assignment = await self.current()
        if assignment is None or self.study.questionnaires is None:
            return assignment
        if self.asks_consent(row) and row.consent != "given":
            return None
        step = await self.current_step(row)
        return assignment if step is not None and step.kind == "game" and step.position == assignment.position \
            else None

    def asks_consent(self, row: ParticipantRow) -> bool:
        """The participant's pages open with the study's consent page: online, or in the lab when the
        study has questionnaires (the lab's participant pages are the online ones)."""
        return self.study.online is not None and self.study.online.consent is not None and (
            row.online or self.study.questionnaires is not None)

    async def current_step(self, row: ParticipantRow) -> Step | None:
        """The participant's place in the flow: the first questionnaire page not submitted or game not
        completed (None: the flow is done, or the study has no questionnaires)."""
        if self.study.questionnaires is None:
            return None
        done = await self.store.completed_games(row.id)
        submitted = await self.store.submitted_steps(row.id)
        return _current(self.steps_of(row), done, submitted)

    async def game_started(self, assignment: Assignment, session_id: str,
                           transcript: Path | None, ticket_sha256: str | None = None) -> StartedGame:
        """Record the game before it starts. StoreError when the participant is no longer active or
        has moved on (the experimenter dropped them meanwhile): the connection is then not the
        study's. ``ticket_sha256``: online, the hash of the ticket the game's connection came with."""
        slot = self.study.plan.slots(
            (await self._row(assignment.participant)).sequence - 1)[assignment.position - 1]
        game = await self.store.start_game(assignment.participant, slot, session_id,
                                           stored_transcript(self.store.path, transcript), ticket_sha256)
        return StartedGame(assignment, game.id, game.attempt, session_id)

    async def game_ended(self, started: StartedGame, completed: bool, reason: str | None = None) -> bool:
        """Record the game's end. ``completed``: the game was played to its end, and the participant
        moves on; otherwise the same condition is played again at the next connection. False when
        the game had already been ended (replaced by a newer connection, participant dropped)."""
        return await self.store.end_game(started.game_id, completed, reason)

    async def withdraw(self, pid: str) -> int:
        """Participant ``pid`` withdrew (their page's "stop and delete my data", or ``study withdraw``):
        their answers, games and event lines leave the store, and their transcripts (with the files kept
        beside them) are deleted; the study keeps one line, who withdrew and when, and their order
        sequence goes to the next participant. Returns the transcript files deleted."""
        stored = await self.store.withdraw(pid)
        paths = [p for p in (resolve_transcript(self.store.path, s) for s in stored) if p is not None]
        return await asyncio.to_thread(_delete_transcripts, paths)

    def steps_of(self, row: ParticipantRow) -> list[Step]:
        """The participant's flow (questionnaire pages and games, in order; empty: no questionnaires)."""
        q = self.study.questionnaires
        return [] if q is None else q.steps(self.study.plan.slots(row.sequence - 1))

    async def answer_page(self, pid: str, step: Step, language: str, answers: Mapping[str, Any],
                          other: Mapping[str, str] | None = None) -> Submitted:
        """Answer the participant's questionnaire page ``step`` as their page would: shown (its items'
        order drawn and recorded), the answers checked as the online server checks them, and saved.
        For the lab and the simulator's pilot, where no page enforces the flow: the caller keeps to
        it. StoreError naming every problem, nothing stored, for answers the server would refuse."""
        q = self.study.questionnaires
        if q is None or step.kind != "page" or step.questionnaire is None:
            raise StoreError("this study has no such questionnaire page")
        row = await self._row(pid)
        spec = q.specs[step.questionnaire]
        checked, problems = check_answers(spec, dict(answers), dict(other or {}), len(row.conditions))
        if problems:
            raise StoreError("; ".join(problems))
        await self.store.open_page(pid, step.index, step.questionnaire, step.position,
                                   q.item_order(step.questionnaire, pid, step.index))
        return await self.store.submit_page(pid, step.index, q.language(language), checked,
                                            q.attention.allowed_failures)

    async def _row(self, pid: str) -> ParticipantRow:
        row = await self.store.participant(pid)
        if row is None:
            raise StoreError(f"no participant {pid} in this study")
        return row

    async def next_participant(self, pid: str) -> ParticipantStatus:
        """Start participant ``pid`` (ids: a letter or digit, then letters, digits, '_', '.', '-')."""
        _check_id(pid)
        return await self._status_of(await self.store.add_participant(pid))

    async def pause(self, pid: str) -> ParticipantStatus:
        return await self._status_of(await self.store.set_state(pid, "paused"))

    async def resume(self, pid: str) -> ParticipantStatus:
        return await self._status_of(await self.store.set_state(pid, "active"))

    async def drop(self, pid: str) -> ParticipantStatus:
        """Mark ``pid`` dropped out; their sequence goes to the next participant started."""
        return await self._status_of(await self.store.set_state(pid, "dropped"))

    async def _facts(self) -> dict[str, _Facts]:
        return _facts(await self.store.participant_records(), await self.store.events())

    async def _texts(self) -> dict[str, str]:
        q = self.study.questionnaires
        if q is None:
            return {}
        kinds = {(name, item.id) for name, spec in q.specs.items() for item in spec.items
                 if item.kind in ("short_text", "long_text")}
        return last_texts(await self.store.free_texts(sorted(kinds)), kinds)

    async def _status_of(self, row: ParticipantRow, games: list[GameRow] | None = None,
                         facts: _Facts | None = None, submitted: set[int] | None = None,
                         text: str | None = None) -> ParticipantStatus:
        games = await self.store.games(row.id) if games is None else games
        facts = (await self._facts()).get(row.id, _Facts()) if facts is None else facts
        done = len({g.position for g in games if g.completed})
        slots = self.study.plan.slots(row.sequence - 1)
        following = slots[done].condition if done < len(slots) and row.state in ("active", "paused") else None
        dropped_at, dropped_why = _dropped(row, facts)
        submitted = await self.store.submitted_steps(row.id) if submitted is None else submitted
        step = _current(self.steps_of(row), done, submitted)
        place = place_of(row, step, done, len(slots), self.asks_consent(row) and row.consent is None)
        return ParticipantStatus(id=row.id, number=row.number, sequence=row.sequence, order=list(row.conditions),
                                 state=row.state, completed=done, games=len(slots), attempts=len(games),
                                 next_condition=following, replaces=row.replaces, created_at=row.created_at,
                                 online=row.online, source=row.source, consent=row.consent,
                                 consent_at=facts.consent_at, left_at=row.left_at,
                                 finished_page_at=facts.finished_page_at, dropped_at=dropped_at,
                                 dropped_why=dropped_why, outcome=row.outcome, place=place, last_text=text)

    async def status(self) -> StudyStatus:
        plan = self.study.plan
        rows = await self.store.participants()
        games = await self.store.games()
        by_participant: dict[str, list[GameRow]] = {}
        for g in games:
            by_participant.setdefault(g.participant, []).append(g)
        facts = await self._facts()
        submitted: dict[str, set[int]] = {}
        for page in await self.store.pages():
            if page.submitted_at is not None:
                submitted.setdefault(page.participant, set()).add(page.step)
        texts = await self._texts()
        people = [await self._status_of(r, by_participant.get(r.id, []), facts.get(r.id, _Facts()),
                                        submitted.get(r.id, set()), texts.get(r.id)) for r in rows]
        sequences = [SequenceStatus(sequence=i + 1, order=list(seq),
                                    participants=sum(1 for r in rows if r.sequence == i + 1 and r.state != "dropped"),
                                    completed=sum(1 for r in rows if r.sequence == i + 1 and r.state == "completed"),
                                    dropped=sum(1 for r in rows if r.sequence == i + 1 and r.state == "dropped"))
                     for i, seq in enumerate(plan.sequences)]
        conditions = [ConditionStatus(
            condition=c, participants=sum(1 for r in rows if r.state != "dropped" and c in r.conditions),
            games_completed=sum(1 for g in games if g.condition == c and g.completed),
            games_started=sum(1 for g in games if g.condition == c)) for c in plan.conditions]
        counts = {s: sum(1 for r in rows if r.state == s) for s in ("active", "paused", "dropped", "completed")}
        balanced, balance = _balance(plan.design, sequences)
        return StudyStatus(study=self.study.name, plan_sha256=plan.hash, design=plan.design,
                           store=str(self.store.path), conditions=list(plan.conditions),
                           games_per_participant=plan.games_per_participant(),
                           active=next((r.id for r in rows if r.state == "active"), None),
                           counts=counts, balanced=balanced, balance=balance,  # type: ignore[arg-type]
                           sequences=sequences, by_condition=conditions, participants=people)


def _current(steps: list[Step], done: int, submitted: set[int]) -> Step | None:
    """The first step of ``steps`` not done: a game past the ``done`` completed ones, a page not submitted."""
    for step in steps:
        if (step.kind == "game" and step.position > done) or (step.kind == "page" and step.index not in submitted):
            return step
    return None


def _delete_transcripts(paths: list[Path]) -> int:
    deleted = 0
    for path in paths:
        shutil.rmtree(path.with_name(f"{path.stem}.files"), ignore_errors=True)
        try:
            path.unlink()
            deleted += 1
        except FileNotFoundError:
            pass
    return deleted


def _check_id(pid: str) -> None:
    if not NAME.match(pid):
        raise StoreError(f"participant id {pid!r}: {NAME_RULE}")
