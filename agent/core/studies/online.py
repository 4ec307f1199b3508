"""Online participants: many at once, each in their own browser, let in by an unguessable code.

```python
online = OnlineRun(run)                            # run: an open StudyRun; run.study.online set
invites = await online.invite(40)                  # codes for 40 links (only their hashes are kept)
visit = await online.visit(code)                   # where the link stands; changes nothing
code, visit = await online.enter_open(prolific)    # open recruitment: a new code, nobody started yet
visit = await online.answer_consent(code, True)    # starts the participant (the plan's next sequence)
ticket, assignment = await online.ticket(code)     # the credential of the participant's current game
assignment = await online.admit(ticket)            # what the game socket checks: None = refuse
judged = await online.finish(assignment, ticket, claim, 2)  # the page says the game ended: judged
```

**A link takes a place only when its participant starts.** Opening a link (an e-mail scanner or a
chat's link preview fetches it too) changes nothing: the order sequence is given when the
participant answers the consent page, or asks for their first game when the study has none. A
participant who started and has not connected a game within ``start_grace_s`` is dropped, so
their sequence goes to the next participant.

**Completion is the server's judgement.** A game counts as completed only when the agent itself
ended (with ``finish``), under the ticket the page names, at least as many AI turns of it as the
game says a played game has (tangram: ``study.completed_after_turns``, as in the lab). The page's
word that the engine quit, or that the participant pressed Continue, is a claim; a claim the
server cannot back is recorded in the event log and completes nothing.

Two kinds of secret, both from :func:`secrets.token_urlsafe` and both kept only as SHA-256
hashes (a copy of the database lets nobody in):

- the *link code* names a participant for as long as the study runs (their link, a reload);
- the *ticket* names one participant's one game: it is made when their page starts a game, and
  stops working when the game is completed (the participant moves on), when a newer page of the
  same participant takes a ticket (a reload, or a second browser on the same link takes the game
  over: never two games for one slot), or when the participant leaves the study. A game that
  reconnects (a dropped socket, a restarted server) redials with the same ticket and continues
  the same game on the same condition.

Nothing here knows a game or HTTP; the web side is the game's (tangram's online/ room).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from agent.core.studies.idle import IdleLimits, Where, idle_for
from agent.core.studies.questionnaires import Step, check_answers
from agent.core.studies.run import Assignment, StudyRun
from agent.core.studies.spend import SpendMeter
from agent.core.studies.store import OnlineEntry, ParticipantRow, StoreError
from agent.core.studies.study_file import OnlineSpec

CODE_BYTES = 18
"""Random bytes of a link code or ticket: 144 bits, 24 URL-safe characters."""
CODE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
PLATFORM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Prolific's ids are 24 hex digits; anything else URL-safe and short is kept as given."""
MAX_INVITES_AT_ONCE = 10_000

Stage = Literal["consent", "questionnaire", "play", "done", "refused", "dropped", "paused", "screened_out",
                "withdrawn", "timed_out"]


class AnswerError(Exception):
    """A page's answers the server refuses: one line per problem (naming the item)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def new_code() -> str:
    return secrets.token_urlsafe(CODE_BYTES)


def digest(code: str) -> str:
    return hashlib.sha256(code.encode("ascii", "replace")).hexdigest()


def well_formed(code: str | None) -> bool:
    return code is not None and CODE.match(code) is not None


@dataclass(frozen=True)
class Invite:
    number: int
    code: str

    def link(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}/p/{self.code}"


@dataclass(frozen=True)
class ProlificIds:
    """What Prolific puts in the study address (PROLIFIC_PID, STUDY_ID, SESSION_ID)."""

    pid: str
    study: str | None = None
    session: str | None = None

    @classmethod
    def parse(cls, query: dict[str, str]) -> ProlificIds | None:
        """From the query parameters (None without PROLIFIC_PID); ValueError for a malformed id."""
        pid = query.get("PROLIFIC_PID")
        if pid is None:
            return None
        values = {"PROLIFIC_PID": pid, "STUDY_ID": query.get("STUDY_ID"), "SESSION_ID": query.get("SESSION_ID")}
        for name, value in values.items():
            if value is not None and not PLATFORM_ID.match(value):
                raise ValueError(f"{name} is not an id (letters, digits, '_' or '-', at most 64)")
        return cls(pid, values["STUDY_ID"], values["SESSION_ID"])


@dataclass(frozen=True)
class EndClaim:
    """What a participant's page says of how a game ended (a claim, judged by :meth:`OnlineRun.finish`)."""

    how: Literal["exit", "continue"]
    """exit: the engine quit; continue: the participant pressed the page's Continue after Finish."""
    exit: int = 0
    """The engine's exit code (0: it quit normally)."""


@dataclass(frozen=True)
class Judged:
    """The server's judgement of a claimed end."""

    completed: bool
    """The game counts as played: the participant moves on."""
    ended: bool
    """An open attempt was ended by the claim (completed or not)."""
    ai_turns: int
    """AI turns the server saw ended in the game."""
    needed: int
    reason: str


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Visit:
    """Where a participant stands, as their page shows it."""

    participant: str | None
    """None: a link not started yet (its participant has not consented or asked for a game)."""
    stage: Stage
    games_done: int
    games_total: int
    assignment: Assignment | None = None
    """stage play: the game to play now."""
    completion_code: str | None = None
    """stage done: the study's completion code, if it has one (screened_out: the screen-out code)."""
    completion_url: str | None = None
    language: str | None = None
    """The language of the participant's pages."""
    page: dict[str, Any] | None = None
    """stage questionnaire: the page to answer (its step, texts in the participant's language, and what
    they entered so far)."""


class OnlineRun:
    """The online side of an open :class:`StudyRun`."""

    def __init__(self, run: StudyRun) -> None:
        self.run = run
        self.spec: OnlineSpec = run.study.online or OnlineSpec()
        self.spend = SpendMeter(self.spec, run.store)
        """The LLM spend so far, per participant and for the study, against the caps."""

    async def invite(self, n: int) -> list[Invite]:
        """``n`` new invitation links' codes (the caller writes them out: only hashes are kept)."""
        if not 1 <= n <= MAX_INVITES_AT_ONCE:
            raise StoreError(f"--n must be 1 to {MAX_INVITES_AT_ONCE}, not {n}")
        codes = [new_code() for _ in range(n)]
        numbers = await self.run.store.add_invites([digest(c) for c in codes])
        return [Invite(number, code) for number, code in zip(numbers, codes, strict=True)]

    async def enter_open(self, prolific: ProlificIds | None) -> tuple[str, Visit]:
        """Open recruitment: a new code for the visitor, who starts as a participant only when they
        consent (:meth:`start`). The same Prolific session coming back gets its participant (or its
        visit not started yet) again, with a new code: the old address stops working; a Prolific
        participant who already took part in this study is refused, and so is a visitor once the
        study has ``max_participants``. StoreError with one line."""
        if self.spec.recruitment != "open":
            raise StoreError("this study takes part by invitation only")
        code = new_code()
        if prolific is not None:
            earlier = await self.run.store.by_prolific(prolific.pid)
            same = [r for r in earlier if prolific.session is not None and r.prolific_session == prolific.session]
            if same:
                await self.run.store.set_link(same[0].id, digest(code))
                return code, await self._visit(same[0])
            if any(r.state != "dropped" or r.consent == "refused" for r in earlier):
                raise StoreError("you have already taken part in this study")
        if await self.run.store.open_participants() >= self.spec.max_participants:
            raise StoreError(f"the study has its {self.spec.max_participants} participants")
        entry = OnlineEntry("open", digest(code), prolific.pid if prolific else None,
                            prolific.study if prolific else None, prolific.session if prolific else None)
        await self.run.store.add_open_entry(entry)
        return code, self._not_started()

    async def known(self, code: str) -> bool:
        """Whether ``code`` is a link of the study (a participant's, an invitation's, an open visit's);
        what serving their page asks. Changes nothing."""
        if not well_formed(code):
            return False
        key = digest(code)
        store = self.run.store
        return await store.by_link(key) is not None or await store.is_invite(key) or await store.is_open_entry(key)

    async def visit(self, code: str, language: str | None = None) -> Visit | None:
        """Where the link of ``code`` stands (a link not started yet: its first page); None for a
        code that is no one's. A started participant's ``language`` (one of the study's) is kept for
        their pages. Changes nothing else (a questionnaire page is recorded as shown)."""
        row = await self._by_code(code)
        if row is not None:
            await self.run.store.touch(row.id)
            if language is not None and language != row.language and language in self.languages:
                await self.run.store.set_place(row.id, row.place or "", language)
                row = dataclasses.replace(row, language=language)
            return await self._visit(row)
        return self._not_started(language) if await self.known(code) else None

    @property
    def languages(self) -> tuple[str, ...]:
        q = self.run.study.questionnaires
        return q.languages if q is not None else ("en",)

    def _language(self, wanted: str | None) -> str:
        return wanted if wanted in self.languages else self.languages[0]

    async def current_step(self, row: ParticipantRow) -> Step | None:
        """The participant's place in the flow: the first questionnaire page not submitted or game not
        completed (None: the flow is done, or the study has no questionnaires)."""
        return await self.run.current_step(row)

    async def submit(self, code: str, step: int, language: str | None, answers: dict[str, Any],
                     other: dict[str, str]) -> Visit | None:
        """The participant's answers to their page ``step``: checked (AnswerError naming each problem,
        nothing stored), saved at once, and the participant's next place; None for a code that is no
        one's. StoreError when ``step`` is not the participant's current page."""
        row = await self._by_code(code)
        if row is None:
            return None
        q = self.run.study.questionnaires
        current = await self.current_step(row)
        if q is None or current is None or current.kind != "page" or current.index != step or \
                row.state not in ("active", "completed"):
            raise StoreError("this page is not your current page: reload to see where you are")
        assert current.questionnaire is not None
        checked, problems = check_answers(q.specs[current.questionnaire], answers, other, len(row.conditions))
        if problems:
            raise AnswerError(problems)
        lang = self._language(language or row.language)
        await self.run.store.touch(row.id)
        await self.run.store.submit_page(row.id, step, lang, checked, q.attention.allowed_failures)
        fresh = await self.run.store.participant(row.id)
        return None if fresh is None else await self._visit(fresh)

    async def draft(self, code: str, step: int, answers: dict[str, Any], other: dict[str, str]) -> bool:
        """What the participant entered on their current page ``step`` so far (kept unchecked, for a
        reload); False when ``step`` is not their open page."""
        row = await self._by_code(code)
        if row is None:
            return False
        saved = await self.run.store.save_draft(row.id, step, {"answers": answers, "other": other})
        if saved:
            await self.run.store.touch(row.id)
        return saved

    async def withdraw(self, code: str) -> bool:
        """The participant asked to stop and have their data deleted (see :meth:`StudyRun.withdraw`);
        False for a code that is no one's started participant."""
        row = await self._by_code(code)
        if row is None:
            return False
        if row.outcome != "withdrawn":
            await self.run.withdraw(row.id)
        return True

    async def start(self, code: str) -> Visit | None:
        """The participant of ``code``, started now if the link was not yet (given the plan's next
        order sequence); None for a code that is no one's. StoreError (one line) when the study
        cannot take them (quota, open recruitment full, already took part)."""
        row = await self._start(code)
        return None if row is None else await self._visit(row)

    async def _start(self, code: str) -> ParticipantRow | None:
        row = await self._by_code(code)
        if row is not None or not well_formed(code):
            return row
        key = digest(code)
        return await self.run.store.open_invite(key) or await self.run.store.start_open_entry(
            key, self.spec.max_participants)

    async def answer_consent(self, code: str, given: bool) -> Visit | None:
        """The answer to the consent page; it starts the participant (a refusal starts and drops them
        in the event log, and their sequence goes to the next participant)."""
        if self.spec.consent is None:
            return await self.visit(code)
        row = await self._start(code)
        if row is None:
            return None
        await self.run.store.touch(row.id)
        return await self._visit(await self.run.store.set_consent(row.id, given))

    async def ticket(self, code: str) -> tuple[str, Assignment] | None:
        """A new credential for the participant's current game (the previous one stops working), and
        the game; None when the participant has no game to play now (consent first, done, left).
        Without a consent page, the first game's ticket starts the participant."""
        row = await self._by_code(code) if self.spec.consent is not None else await self._start(code)
        if row is None:
            return None
        visit = await self._visit(row)
        if visit.stage != "play" or visit.assignment is None:
            return None
        ticket = new_code()
        await self.run.store.touch(row.id)
        await self.run.store.set_ticket(row.id, digest(ticket), visit.assignment.position)
        return ticket, visit.assignment

    async def admit(self, ticket: str | None) -> Assignment | None:
        """The game ``ticket`` is for, if it may be played now: the newest ticket of a participant still
        in the study, for the game they are at. None: refuse the connection (no ticket, a forged one,
        a replaced one, one of a game already completed)."""
        if not well_formed(ticket):
            return None
        assert ticket is not None
        row = await self.run.store.by_ticket(digest(ticket))
        if row is None or not row.online:
            return None
        visit = await self._visit(row)
        if visit.stage != "play" or visit.assignment is None or visit.assignment.position != row.ticket_position:
            return None
        return visit.assignment

    async def finish(self, assignment: Assignment, ticket: str, claim: EndClaim, needed: int) -> Judged:
        """The participant's page says the game of ``assignment``, played under ``ticket``, ended:
        judged from what the server saw (see the module's text): ``needed`` AI turns make a game
        played (the game's own rule: tangram's ``study.completed_after_turns``). A backed claim ends the game's
        open attempt completed; an engine that stopped with an error ends it uncompleted (the game
        is played again); a claim the server cannot back is logged and changes nothing else."""
        store = self.run.store
        pid, position = assignment.participant, assignment.position
        seen = await store.ai_turns(pid, position, digest(ticket))
        said = "Continue after the game's Finish" if claim.how == "continue" else f"the engine quit ({claim.exit})"
        if claim.exit != 0:
            ended = await store.end_open_game(pid, position, False, f"the engine stopped ({claim.exit})")
            return Judged(False, ended, seen, needed, f"the engine stopped ({claim.exit})")
        if seen < needed:
            why = (f"the page said {said} after {seen} AI turn{'s' if seen != 1 else ''} the server saw "
                   f"({needed} needed): not completed")
            await store.log_event(pid, "unbacked_end", f"game {position}: {why}")
            return Judged(False, False, seen, needed, why)
        reason = (f"the participant's {said}" if claim.how == "continue" else "the game's Finish (the engine quit)") \
            + f", {seen} AI turns"
        ended = await store.end_open_game(pid, position, True, reason)
        return Judged(ended, ended, seen, needed, reason)

    async def over_cap(self, participant: str) -> str | None:
        """Why the participant's next game is played by the planner (the spend caps of the study file),
        or None while under both caps. Seeds the running totals (:attr:`spend`) for the game: its
        calls are added to them and checked against the caps as they are made."""
        await self.spend.follow(participant)
        return self.spend.over(participant)

    async def left(self, code: str, gone: bool = True) -> None:
        """The participant's page is closing (``gone``) or is back."""
        row = await self._by_code(code)
        if row is None or row.state not in ("active", "paused") or (not gone and row.left_at is None):
            return  # not in the study, or never left: nothing to record
        await self.run.store.set_left(row.id, gone)

    async def apply_leaving(self, now: datetime | None = None) -> list[str]:
        """Participants who started and have not connected a game within ``start_grace_s`` are dropped
        out, whatever ``on_leave`` says (they hold an order sequence and played nothing). Participants
        whose page closed more than ``leave_grace_s`` ago and who are not back: with ``on_leave:
        drop`` they are dropped out (their sequence goes to the next participant); with keep nothing
        changes. Returns the ids dropped."""
        moment = now or datetime.now(UTC)
        store = self.run.store
        idle = [(row, f"never started a game within {self.spec.start_grace_s:g} s")
                for row in await store.never_started(_stamp(moment - timedelta(seconds=self.spec.start_grace_s)))]
        if self.spec.on_leave == "drop":
            gone = await store.left_before(_stamp(moment - timedelta(seconds=self.spec.leave_grace_s)))
            idle += [(row, "left and did not come back") for row in gone if row.id not in {r.id for r, _ in idle}]
        dropped = []
        for row, why in idle:
            try:
                await store.set_state(row.id, "dropped", why)
            except StoreError:
                continue  # changed meanwhile (completed, dropped from the command line)
            dropped.append(row.id)
        return dropped

    @property
    def idle_limits(self) -> IdleLimits:
        return IdleLimits(self.spec.page_timeout_s, self.spec.game_timeout_s, self.spec.timeout_warning_s)

    async def where(self, row: ParticipantRow) -> Where | None:
        """Whether the participant is on a page (consent, a questionnaire) or at a game; None when
        their flow is done."""
        if self.spec.consent is not None and row.consent is None:
            return "page"
        if self.run.study.questionnaires is None:
            return "game" if await self.run.store.next_slot(row) is not None else None
        step = await self.current_step(row)
        return None if step is None else ("page" if step.kind == "page" else "game")

    async def apply_idle(self, now: datetime | None = None) -> list[tuple[str, str, bool]]:
        """Online participants idle longer than the study allows where they are (:mod:`idle`) are timed
        out: with ``on_leave: drop`` dropped out (their order sequence goes to the next participant),
        with keep marked timed out, their place kept (a sign of life brings them back). Returns
        (participant, why, dropped) for each."""
        limits = self.idle_limits
        if not limits.any:
            return []
        moment = now or datetime.now(UTC)
        drop = self.spec.on_leave == "drop"
        out = []
        for row in await self.run.store.idle_candidates():
            where = await self.where(row)
            why = None if where is None else idle_for(limits, where, row.active_at or row.created_at, moment)
            if why is not None and await self.run.store.time_out(row.id, why, drop):
                out.append((row.id, why, drop))
        return out

    async def _by_code(self, code: str | None) -> ParticipantRow | None:
        if not well_formed(code):
            return None
        assert code is not None
        return await self.run.store.by_link(digest(code))

    def _not_started(self, language: str | None = None) -> Visit:
        """A link whose participant has not started: the consent page, or the way to the first game
        (or the first questionnaire: the participant starts when they ask for it)."""
        total = self.run.study.plan.games_per_participant()
        return Visit(None, "consent" if self.spec.consent is not None else "play", 0, total,
                     language=self._language(language))

    async def _visit(self, row: ParticipantRow) -> Visit:
        total = self.run.study.plan.games_per_participant()
        done = await self.run.store.completed_games(row.id)
        lang = self._language(row.language)
        if row.outcome == "withdrawn":
            return Visit(row.id, "withdrawn", done, total, language=lang)
        if row.outcome == "timed_out" and row.state == "dropped":
            return Visit(row.id, "timed_out", done, total, language=lang)
        if row.outcome == "screened_out":
            return Visit(row.id, "screened_out", done, total, None, self.spec.screen_out_code,
                         self.spec.screen_out_url, lang)
        if row.consent == "refused":
            return Visit(row.id, "refused", done, total, language=lang)
        if row.state in ("dropped", "paused"):
            return Visit(row.id, row.state, done, total, language=lang)
        if self.spec.consent is not None and row.consent is None:
            return Visit(row.id, "consent", done, total, language=lang)
        step = await self.current_step(row)
        if step is not None and step.kind == "page":
            return await self._page(row, step, done, total, lang)
        if step is not None and row.place != step.describe():
            await self.run.store.set_place(row.id, step.describe())
        slot = await self.run.store.next_slot(row)
        if row.state == "completed" or slot is None:  # every game completed (the state perhaps not yet updated)
            if row.place != "done":
                await self.run.store.set_place(row.id, "done")
            await self.run.store.mark_finished_page(row.id)
            return Visit(row.id, "done", done, total, None, self.spec.completion_code, self.spec.completion_url, lang)
        return Visit(row.id, "play", done, total, self.run.assignment_of(row, slot.position), language=lang)

    async def _page(self, row: ParticipantRow, step: Step, done: int, total: int, lang: str) -> Visit:
        q = self.run.study.questionnaires
        assert q is not None and step.questionnaire is not None
        order = q.item_order(step.questionnaire, row.id, step.index)
        page = await self.run.store.open_page(row.id, step.index, step.questionnaire, step.position, order)
        if row.place != step.describe():
            await self.run.store.set_place(row.id, step.describe())
        view = q.render(step.questionnaire, lang, page.item_order, len(row.conditions))
        view.update(step=step.index, draft=page.draft)
        return Visit(row.id, "questionnaire", done, total, language=lang, page=view)
