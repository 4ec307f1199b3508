"""The study's embedded database: participants, their order of conditions and every game.

SQLite in WAL mode, so a second process (``python -m agent study next P07``) writes while the
serving agent reads and writes; every change is one ``BEGIN IMMEDIATE`` transaction that checks
the rules inside it (one active participant, the game about to start is the participant's next),
so two processes never interleave half-changes, and a process killed at any point leaves the
database as before or after the change, never between. A busy database is waited for
(``BUSY_TIMEOUT_MS``) in aiosqlite's thread, never on the event loop.

Rows are written before the game starts: the ``games`` row (participant, condition, order
position, session id, transcript path) exists before the game's first frame is answered, so a
killed agent finds the game that was started but not ended, and plays that position again on the
same condition (a new attempt; the old one is marked ended, not completed, "replaced").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import aiosqlite
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

from agent.core.studies.migrations import SchemaTooNew, migrate
from agent.core.studies.plan import Plan, Slot
from agent.core.studies.questionnaires import Answer

BUSY_TIMEOUT_MS = 10_000
ParticipantState = Literal["active", "paused", "dropped", "completed"]
MAX_REASON_CHARS = 200
MAX_PARTICIPANTS = 100_000
MAX_PATH_CHARS = 4096
SIDE_FILES = ("-wal", "-shm", "-journal")


class StoreError(Exception):
    """A change the study's rules refuse, or a database that cannot be used; one line."""


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class ParticipantRow:
    id: str
    number: int
    """1-based: the order in which participants were started."""
    sequence: int
    """1-based: which of the plan's order sequences (as every table and line shows it)."""
    conditions: tuple[str, ...]
    state: ParticipantState
    replaces: str | None
    created_at: str
    updated_at: str
    online: bool = False
    """Takes part from their own browser (many at once); in-lab participants are one at a time."""
    source: str | None = None
    """Online: invite (a link 'study invite' wrote) or open (the study's open address)."""
    prolific_pid: str | None = None
    prolific_study: str | None = None
    prolific_session: str | None = None
    consent: str | None = None
    """given or refused; None when not asked (yet)."""
    ticket_position: int | None = None
    """The game the participant's current game credential is for."""
    left_at: str | None = None
    """When their page said it was closing, until they are back."""
    language: str | None = None
    """The language of their pages (None: the study's default)."""
    attention_failures: int = 0
    outcome: str | None = None
    """How a participation ended early: screened_out, withdrawn, timed_out (state dropped); None otherwise."""
    place: str | None = None
    """Where they are in the flow, as the console shows it (e.g. "questionnaire partner (after game 1)")."""
    active_at: str | None = None
    """Their last sign of life in the flow (a page loaded or saved, an AI turn of their game ended)."""


@dataclass(frozen=True)
class GameRow:
    id: int
    participant: str
    position: int
    condition: str
    order_position: int
    repeat: int
    attempt: int
    session_id: str
    transcript: str | None
    started_at: str
    ended_at: str | None
    completed: bool | None
    end_reason: str | None
    ai_turns: int = 0
    """AI turns this attempt ended by finish, as the server saw them."""
    ticket_sha256: str | None = None
    """Online: the hash of the ticket the attempt connected with (one ticket, one game in the engine)."""


async def _participant_row(conn: aiosqlite.Connection, pid: str) -> sqlite3.Row | None:
    """The participant's row inside an open transaction, or None."""
    async with conn.execute("SELECT * FROM participants WHERE id = ?", (pid,)) as cursor:
        return await cursor.fetchone()


async def _known_participant(conn: aiosqlite.Connection, pid: str) -> ParticipantRow:
    """The participant inside an open transaction; StoreError when the study has none of that id."""
    found = await _participant_row(conn, pid)
    if found is None:
        raise StoreError(f"no participant {pid} in this study")
    return _participant(found)


async def _entry(conn: aiosqlite.Connection, table: Literal["invites", "open_entries"],
                 digest: str) -> tuple[sqlite3.Row | None, ParticipantRow | None]:
    """Inside an open transaction: the invitation or open visit whose code hashes to ``digest``, and
    the participant it started already (None, None: no such entry)."""
    async with conn.execute(f"SELECT * FROM {table} WHERE code_sha256 = ?", (digest,)) as cursor:
        found = await cursor.fetchone()
    if found is None or found["participant"] is None:
        return found, None
    return found, await _known_participant(conn, found["participant"])


def _participant(row: sqlite3.Row) -> ParticipantRow:
    return ParticipantRow(row["id"], row["number"], row["sequence"], tuple(json.loads(row["conditions"])),
                          row["state"], row["replaces"], row["created_at"], row["updated_at"], bool(row["online"]),
                          row["source"], row["prolific_pid"], row["prolific_study"], row["prolific_session"],
                          row["consent"], row["ticket_position"], row["left_at"], row["language"],
                          row["attention_failures"], row["outcome"], row["place"], row["active_at"])


@dataclass(frozen=True)
class PageRow:
    """A questionnaire page of a participant's flow, as shown (and submitted)."""

    participant: str
    step: int
    questionnaire: str
    after_game: int
    item_order: tuple[str, ...]
    shown_at: str
    draft: dict[str, Any] | None
    language: str | None
    submitted_at: str | None
    seconds: float | None


def _page(row: sqlite3.Row) -> PageRow:
    return PageRow(row["participant"], row["step"], row["questionnaire"], row["after_game"],
                   tuple(json.loads(row["item_order"])), row["shown_at"],
                   json.loads(row["draft"]) if row["draft"] else None, row["language"], row["submitted_at"],
                   row["seconds"])


@dataclass(frozen=True)
class Submitted:
    """What submitting a page did."""

    seconds: float
    failures: int
    """The participant's failed attention checks so far."""
    screened_out: bool


def _seconds_between(start: str, end: str) -> float:
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    return round((datetime.strptime(end, fmt) - datetime.strptime(start, fmt)).total_seconds(), 3)


@dataclass(frozen=True)
class OnlineEntry:
    """How an online participant came in: the hash of their link's code, and the platform's ids."""

    source: Literal["invite", "open"]
    link_sha256: str
    prolific_pid: str | None = None
    prolific_study: str | None = None
    prolific_session: str | None = None


def _game(row: sqlite3.Row) -> GameRow:
    completed = None if row["completed"] is None else bool(row["completed"])
    return GameRow(row["id"], row["participant"], row["position"], row["condition"], row["order_position"],
                   row["repeat"], row["attempt"], row["session_id"], row["transcript"], row["started_at"],
                   row["ended_at"], completed, row["end_reason"], row["ai_turns"], row["ticket_sha256"])


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _prepare(path: Path, name: str, plan: Plan) -> None:
    """Create or migrate the database and check it holds this plan (in a thread, at open).

    Two processes opening a new database at once (two ``study next`` commands) can meet SQLite's
    "database is locked" at once, without its busy wait: switching to WAL and a reader upgrading
    to a writer are refused rather than waited for. The whole preparation is then tried again,
    with random backoff, for as long as the busy timeout."""
    for attempt in Retrying(retry=retry_if_exception(_locked), stop=stop_after_delay(BUSY_TIMEOUT_MS / 1000),
                            wait=wait_random_exponential(multiplier=0.02, max=0.5), reraise=True):
        with attempt:
            _prepare_once(path, name, plan)


def private(path: Path) -> None:
    """Create ``path`` readable and writable by its owner only (0600), or make it so: the study
    database holds personal data (platform ids, consent). SQLite gives its side files (the WAL, the
    shared-memory index, a rollback journal) the database file's permissions when it creates them;
    side files left by an earlier version are tightened too."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for side in (path, *(path.with_name(path.name + s) for s in SIDE_FILES)):
        with contextlib.suppress(FileNotFoundError):
            if side.stat().st_mode & 0o077:
                side.chmod(0o600)


def _prepare_once(path: Path, name: str, plan: Plan) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    private(path)
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn)
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT name, plan_sha256 FROM study WHERE id = 1").fetchone()
            if row is None:
                conn.execute("INSERT INTO study (id, name, plan_sha256, plan, created_at) VALUES (1, ?, ?, ?, ?)",
                             (name, plan.hash, json.dumps(plan.describe(), sort_keys=True), now()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()
    if row is not None and row[1] != plan.hash:
        raise StoreError(f"{path} holds the study {row[0]!r} with plan {row[1]}, but the study file now gives "
                         f"plan {plan.hash} (its design, conditions, order, quotas, games per condition or seed "
                         "changed): restore the file, or name a new database with 'store:'")


class StudyStore:
    """One connection to the study database; safe to share between the tasks of one event loop."""

    def __init__(self, path: Path, plan: Plan, conn: aiosqlite.Connection) -> None:
        self.path = path
        self.plan = plan
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path, name: str, plan: Plan) -> StudyStore:
        """Create, migrate and check the database; StoreError with one line when it cannot be used."""
        try:
            await asyncio.to_thread(_prepare, path, name, plan)
            conn = await aiosqlite.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except SchemaTooNew as exc:
            raise StoreError(f"study database {path}: {exc}") from exc
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"study database {path} cannot be used: {exc}") from exc
        conn.row_factory = sqlite3.Row
        await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await conn.execute("PRAGMA foreign_keys = ON")
        await conn.execute("PRAGMA secure_delete = ON")  # a withdrawal's rows are overwritten, not just freed
        return cls(path, plan, conn)

    async def close(self) -> None:
        await self._conn.close()

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            await self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                await self._conn.execute("ROLLBACK")
                raise
            await self._conn.execute("COMMIT")

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        # Under the lock: a read between another task's BEGIN and COMMIT on this connection would
        # see that task's rows before they are decided.
        async with self._lock, self._conn.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    async def participants(self) -> list[ParticipantRow]:
        return [_participant(r) for r in await self._rows("SELECT * FROM participants ORDER BY number")]

    async def participant(self, pid: str) -> ParticipantRow | None:
        rows = await self._rows("SELECT * FROM participants WHERE id = ?", (pid,))
        return _participant(rows[0]) if rows else None

    async def active(self) -> ParticipantRow | None:
        """The in-lab participant who is active (online participants are active many at once)."""
        rows = await self._rows("SELECT * FROM participants WHERE state = 'active' AND online = 0")
        return _participant(rows[0]) if rows else None

    async def games(self, participant: str | None = None) -> list[GameRow]:
        if participant is None:
            rows = await self._rows("SELECT * FROM games ORDER BY id")
        else:
            rows = await self._rows("SELECT * FROM games WHERE participant = ? ORDER BY id", (participant,))
        return [_game(r) for r in rows]

    async def events(self) -> list[dict[str, Any]]:
        return [dict(r) for r in await self._rows("SELECT * FROM events ORDER BY id")]

    async def participant_records(self) -> list[dict[str, Any]]:
        """Every participant's row as stored, in order (the online columns too: consent_at,
        finished_page_at, the platform's ids), without the hashes of their link and ticket."""
        rows = await self._rows("SELECT * FROM participants ORDER BY number")
        return [{k: v for k, v in dict(r).items() if not k.endswith("_sha256")} for r in rows]

    @staticmethod
    async def _done(conn: aiosqlite.Connection, pid: str) -> int:
        async with conn.execute("SELECT COUNT(DISTINCT position) FROM games WHERE participant = ? AND completed = 1",
                                (pid,)) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def completed_games(self, pid: str) -> int:
        async with self._lock:
            return await self._done(self._conn, pid)

    async def next_slot(self, row: ParticipantRow) -> Slot | None:
        """The participant's next game (None when every game is completed)."""
        slots = self.plan.slots(row.sequence - 1)
        done = await self.completed_games(row.id)
        return slots[done] if done < len(slots) else None

    async def _log(self, conn: aiosqlite.Connection, participant: str | None, action: str, detail: str = "") -> None:
        await conn.execute("INSERT INTO events (at, participant, action, detail) VALUES (?, ?, ?, ?)",
                           (now(), participant, action, detail or None))

    async def add_participant(self, pid: str) -> ParticipantRow:
        """Start ``pid`` on the sequence the plan gives the next participant (see plan.py)."""
        async with self._write() as conn:
            return await self._insert_participant(conn, lambda number: pid, None)

    async def _insert_participant(self, conn: aiosqlite.Connection, id_of: Callable[[int], str],
                                  entry: OnlineEntry | None) -> ParticipantRow:
        """A new participant (in-lab: ``entry`` None, and nobody else in-lab active) on the sequence
        the plan gives; ``id_of`` makes the id from the participant's number."""
        async with conn.execute("SELECT * FROM participants ORDER BY number") as cursor:
            rows = [_participant(r) for r in await cursor.fetchall()]
        if len(rows) >= MAX_PARTICIPANTS:
            raise StoreError(f"the study has {len(rows)} participants, the most one database keeps")
        pid = id_of(len(rows) + 1)
        if any(r.id == pid for r in rows):
            raise StoreError(f"participant {pid} already exists (state: "
                             f"{next(r.state for r in rows if r.id == pid)}); give the new one another id")
        active = [r for r in rows if r.state == "active" and not r.online]
        if active and entry is None:
            raise StoreError(f"participant {active[0].id} is still active: pause, drop or finish them first "
                             "(python -m agent study pause|drop ID)")
        holders: dict[int, int] = {}
        for r in rows:
            if r.state != "dropped":
                holders[r.sequence - 1] = holders.get(r.sequence - 1, 0) + 1
        sequence = self.plan.choose_sequence(holders)
        if sequence is None:
            quotas = ", ".join(f"{c}: {q}" for c, q in self.plan.quotas)
            raise StoreError(f"every condition has reached its quota ({quotas})")
        taken = {r.replaces for r in rows if r.replaces}
        replaces = next((r.id for r in rows if r.state == "dropped" and r.sequence == sequence + 1
                         and r.id not in taken), None)
        stamp = now()
        row = ParticipantRow(pid, len(rows) + 1, sequence + 1, self.plan.sequences[sequence], "active", replaces,
                             stamp, stamp, entry is not None, entry.source if entry else None,
                             entry.prolific_pid if entry else None, entry.prolific_study if entry else None,
                             entry.prolific_session if entry else None)
        await conn.execute(
            "INSERT INTO participants (id, number, sequence, conditions, state, replaces, created_at, updated_at,"
            " online, source, link_sha256, prolific_pid, prolific_study, prolific_session)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.number, row.sequence, json.dumps(list(row.conditions)), row.state, row.replaces,
             stamp, stamp, int(row.online), row.source, entry.link_sha256 if entry else None, row.prolific_pid,
             row.prolific_study, row.prolific_session))
        await self._log(conn, pid, "next", f"sequence {sequence + 1}: {', '.join(row.conditions)}"
                        + (f" (the sequence of dropped {replaces})" if replaces else "")
                        + (f" ({entry.source}, online)" if entry else ""))
        return row

    async def set_state(self, pid: str, to: ParticipantState, why: str = "") -> ParticipantRow:
        """pause (active -> paused), resume (paused -> active, nobody else active), drop (active or
        paused -> dropped); ``why`` goes into the event log."""
        allowed: dict[str, tuple[str, ...]] = {"paused": ("active",), "active": ("paused",),
                                               "dropped": ("active", "paused")}
        verb = {"paused": "paused", "active": "resumed", "dropped": "dropped"}[to]
        async with self._write() as conn:
            row = await _known_participant(conn, pid)
            if row.state == to:
                raise StoreError(f"participant {pid} is already {row.state}")
            if row.state not in allowed[to]:
                raise StoreError(f"participant {pid} is {row.state} and cannot be {verb}")
            if to == "active" and not row.online:
                async with conn.execute("SELECT id FROM participants WHERE state = 'active' AND online = 0") as cursor:
                    other = await cursor.fetchone()
                if other is not None:
                    raise StoreError(f"participant {other[0]} is active: pause or drop them before resuming {pid}")
            stamp = now()
            await conn.execute("UPDATE participants SET state = ?, updated_at = ? WHERE id = ?", (to, stamp, pid))
            if to == "dropped":  # a game still running for them ends with the drop
                await conn.execute("UPDATE games SET ended_at = ?, completed = 0, end_reason = 'participant dropped'"
                                   " WHERE participant = ? AND ended_at IS NULL", (stamp, pid))
            await self._log(conn, pid, {"paused": "pause", "active": "resume", "dropped": "drop"}[to], why)
        return dataclasses.replace(row, state=to, updated_at=stamp)

    async def start_game(self, pid: str, slot: Slot, session_id: str, transcript: str | None,
                         ticket_sha256: str | None = None) -> GameRow:
        """Record that the game at ``slot`` starts now (before its first frame is answered). An
        attempt at the same slot still open (a killed agent's, a dropped connection's) is ended
        as replaced. ``ticket_sha256``: online, the hash of the ticket the connection came with."""
        async with self._write() as conn:
            found = await _participant_row(conn, pid)
            if found is None or found["state"] != "active":
                state = "gone" if found is None else found["state"]
                raise StoreError(f"participant {pid} is {state}: the game is not part of the study")
            done = await self._done(conn, pid)
            if slot.position != done + 1:
                raise StoreError(f"participant {pid} is at game {done + 1}, not {slot.position}")
            async with conn.execute("SELECT COALESCE(MAX(attempt), 0) FROM games WHERE participant = ? "
                                    "AND position = ?", (pid, slot.position)) as cursor:
                last = await cursor.fetchone()
            attempt = int(last[0]) + 1 if last else 1
            stamp = now()
            await conn.execute("UPDATE games SET ended_at = ?, completed = 0, end_reason = ? WHERE participant = ? "
                               "AND position = ? AND ended_at IS NULL",
                               (stamp, f"replaced by attempt {attempt}", pid, slot.position))
            cursor = await conn.execute(
                "INSERT INTO games (participant, position, condition, order_position, repeat, attempt, session_id,"
                " transcript, started_at, ticket_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (pid, slot.position, slot.condition, slot.order, slot.repeat, attempt, session_id[:MAX_PATH_CHARS],
                 transcript[:MAX_PATH_CHARS] if transcript else None, stamp, ticket_sha256))
            game_id = cursor.lastrowid
            await cursor.close()
        assert game_id is not None
        return GameRow(game_id, pid, slot.position, slot.condition, slot.order, slot.repeat, attempt, session_id,
                       transcript, stamp, None, None, None, 0, ticket_sha256)

    async def end_game(self, game_id: int, completed: bool, reason: str | None) -> bool:
        """Record the end of game ``game_id``; a completed game moves its participant on (and the
        last one completes them). False when the game had already ended (replaced, dropped)."""
        async with self._write() as conn:
            async with conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)) as cursor:
                found = await cursor.fetchone()
            if found is None or found["ended_at"] is not None:
                return False
            stamp = now()
            await conn.execute("UPDATE games SET ended_at = ?, completed = ?, end_reason = ? WHERE id = ?",
                               (stamp, int(completed), (reason or "")[:MAX_REASON_CHARS] or None, game_id))
            pid = found["participant"]
            if completed:
                prow = await _known_participant(conn, pid)
                finished = await self._done(conn, pid) >= len(self.plan.slots(prow.sequence - 1))
                if finished and prow.state in ("active", "paused"):
                    await conn.execute("UPDATE participants SET state = 'completed', updated_at = ? WHERE id = ?",
                                       (stamp, pid))
                    await self._log(conn, pid, "completed")
        return True

    # ------------------------------------------------------------------ online participants

    async def add_invites(self, digests: Sequence[str]) -> list[int]:
        """Keep the hashes of new invitation links' codes; returns their numbers (from 1, across calls)."""
        async with self._write() as conn:
            async with conn.execute("SELECT COALESCE(MAX(number), 0) FROM invites") as cursor:
                last = await cursor.fetchone()
            first = int(last[0]) + 1 if last else 1
            if first - 1 + len(digests) > MAX_PARTICIPANTS:
                raise StoreError(f"a study keeps at most {MAX_PARTICIPANTS} invitations")
            stamp = now()
            await conn.executemany("INSERT INTO invites (number, code_sha256, created_at) VALUES (?, ?, ?)",
                                   [(first + i, d, stamp) for i, d in enumerate(digests)])
            last_number = first + len(digests) - 1
            await self._log(conn, None, "invite", f"{len(digests)} links, numbers {first} to {last_number}")
        return list(range(first, first + len(digests)))

    async def by_link(self, digest: str) -> ParticipantRow | None:
        rows = await self._rows("SELECT * FROM participants WHERE link_sha256 = ?", (digest,))
        return _participant(rows[0]) if rows else None

    async def by_ticket(self, digest: str) -> ParticipantRow | None:
        rows = await self._rows("SELECT * FROM participants WHERE ticket_sha256 = ?", (digest,))
        return _participant(rows[0]) if rows else None

    async def invites_written(self) -> int:
        """How many invitations were written (opened or not): the flow's first count."""
        rows = await self._rows("SELECT COUNT(*) AS n FROM invites")
        return int(rows[0]["n"])

    async def is_invite(self, digest: str) -> bool:
        """Whether an invitation's code hashes to ``digest`` (opened or not); changes nothing."""
        return bool(await self._rows("SELECT 1 FROM invites WHERE code_sha256 = ?", (digest,)))

    async def open_invite(self, digest: str) -> ParticipantRow | None:
        """The participant of the invitation whose code hashes to ``digest``, started (on the plan's
        next sequence) when they consent, or start without a consent page; None for no such
        invitation."""
        async with self._write() as conn:
            invite, started = await _entry(conn, "invites", digest)
            if invite is None or started is not None:
                return started
            number = int(invite["number"])
            row = await self._insert_participant(conn, lambda _: f"L{number:04d}", OnlineEntry("invite", digest))
            await conn.execute("UPDATE invites SET participant = ?, opened_at = ? WHERE number = ?",
                               (row.id, row.created_at, number))
        return row

    async def add_open_entry(self, entry: OnlineEntry) -> None:
        """A visit to the open address: its code and platform ids are kept, and nobody is started
        (a link preview takes nothing) until :meth:`start_open_entry`. The same platform session
        visiting again before it started moves its entry to the new code."""
        async with self._write() as conn:
            async with conn.execute("SELECT COUNT(*) FROM open_entries WHERE participant IS NULL") as cursor:
                found = await cursor.fetchone()
            if found is not None and int(found[0]) >= MAX_PARTICIPANTS:
                raise StoreError("too many visits that have not started yet; try again later")
            if entry.prolific_session is not None:
                cursor = await conn.execute(
                    "UPDATE open_entries SET code_sha256 = ? WHERE prolific_session = ? AND participant IS NULL",
                    (entry.link_sha256, entry.prolific_session))
                moved = cursor.rowcount
                await cursor.close()
                if moved:
                    return
            await conn.execute("INSERT INTO open_entries (code_sha256, prolific_pid, prolific_study, prolific_session,"
                               " created_at) VALUES (?, ?, ?, ?, ?)",
                               (entry.link_sha256, entry.prolific_pid, entry.prolific_study, entry.prolific_session,
                                now()))

    async def is_open_entry(self, digest: str) -> bool:
        """Whether a visit to the open address that has not started a participant has this code."""
        return bool(await self._rows("SELECT 1 FROM open_entries WHERE code_sha256 = ? AND participant IS NULL",
                                     (digest,)))

    async def start_open_entry(self, digest: str, most: int) -> ParticipantRow | None:
        """The open address's visit with code ``digest`` becomes a participant (on the plan's next
        sequence); None for no such visit. StoreError when ``most`` took part already, or when the
        platform's participant took part meanwhile."""
        async with self._write() as conn:
            found, started = await _entry(conn, "open_entries", digest)
            if found is None or started is not None:
                return started
            async with conn.execute("SELECT COUNT(*) FROM participants WHERE source = 'open'") as cursor:
                count = await cursor.fetchone()
            if count is not None and int(count[0]) >= most:
                raise StoreError(f"the study has its {most} participants")
            if found["prolific_pid"] is not None:
                async with conn.execute("SELECT 1 FROM participants WHERE prolific_pid = ? AND (state != 'dropped' "
                                        "OR consent = 'refused')", (found["prolific_pid"],)) as cursor:
                    if await cursor.fetchone() is not None:
                        raise StoreError("you have already taken part in this study")
            entry = OnlineEntry("open", digest, found["prolific_pid"], found["prolific_study"],
                                found["prolific_session"])
            row = await self._insert_participant(conn, lambda number: f"W{number:05d}", entry)
            await conn.execute("UPDATE open_entries SET participant = ? WHERE id = ?", (row.id, found["id"]))
        return row

    async def open_participants(self) -> int:
        rows = await self._rows("SELECT COUNT(*) AS n FROM participants WHERE source = 'open'")
        return int(rows[0]["n"])

    async def by_prolific(self, prolific_pid: str) -> list[ParticipantRow]:
        rows = await self._rows("SELECT * FROM participants WHERE prolific_pid = ? ORDER BY number", (prolific_pid,))
        return [_participant(r) for r in rows]

    async def set_link(self, pid: str, digest: str, why: str = "a new link (the same platform session came back)"
                       ) -> None:
        """A new link code for ``pid`` (the old one stops working)."""
        async with self._write() as conn:
            await _known_participant(conn, pid)
            await conn.execute("UPDATE participants SET link_sha256 = ?, updated_at = ? WHERE id = ?",
                               (digest, now(), pid))
            await self._log(conn, pid, "link", why)

    async def set_consent(self, pid: str, given: bool) -> ParticipantRow:
        """Record the answer to the consent page; a refusal drops the participant (their sequence goes
        to the next one)."""
        async with self._write() as conn:
            row = await _known_participant(conn, pid)
            if row.consent is not None:
                return row
            stamp = now()
            answer = "given" if given else "refused"
            state = row.state if given or row.state not in ("active", "paused") else "dropped"
            await conn.execute("UPDATE participants SET consent = ?, consent_at = ?, state = ?, updated_at = ? "
                               "WHERE id = ?", (answer, stamp, state, stamp, pid))
            await self._log(conn, pid, "consent", answer)
        return dataclasses.replace(row, consent=answer, state=state, updated_at=stamp)

    async def set_ticket(self, pid: str, digest: str, position: int) -> None:
        """The participant's game credential, for their game at ``position``; the previous one stops
        working (a reload or a second browser takes the game over)."""
        async with self._write() as conn:
            await conn.execute("UPDATE participants SET ticket_sha256 = ?, ticket_position = ?, left_at = NULL, "
                               "updated_at = ? WHERE id = ?", (digest, position, now(), pid))

    async def set_left(self, pid: str, left: bool) -> None:
        """Their page said it is closing (``left``), or they are back."""
        async with self._write() as conn:
            await conn.execute("UPDATE participants SET left_at = ? WHERE id = ?", (now() if left else None, pid))
            await self._log(conn, pid, "left" if left else "back")

    async def left_before(self, cutoff: str) -> list[ParticipantRow]:
        """Online participants still in the study whose page closed before ``cutoff`` (a timestamp)."""
        rows = await self._rows("SELECT * FROM participants WHERE online = 1 AND state IN ('active', 'paused') "
                                "AND left_at IS NOT NULL AND left_at < ? ORDER BY number", (cutoff,))
        return [_participant(r) for r in rows]

    async def mark_finished_page(self, pid: str) -> None:
        async with self._write() as conn:
            await conn.execute("UPDATE participants SET finished_page_at = COALESCE(finished_page_at, ?) WHERE id = ?",
                               (now(), pid))

    async def end_open_game(self, pid: str, position: int, completed: bool, reason: str) -> bool:
        """End the open attempt of ``pid``'s game at ``position`` (see :meth:`end_game`); False when
        none is open."""
        rows = await self._rows("SELECT id FROM games WHERE participant = ? AND position = ? AND ended_at IS NULL "
                                "ORDER BY attempt DESC LIMIT 1", (pid, position))
        return bool(rows) and await self.end_game(int(rows[0]["id"]), completed, reason)

    async def count_ai_turns(self, game_id: int, ended: int) -> None:
        """Attempt ``game_id`` has ended ``ended`` AI turns by finish so far (the server's own count)."""
        async with self._write() as conn:
            await conn.execute("UPDATE games SET ai_turns = MAX(ai_turns, ?) WHERE id = ?", (ended, game_id))
            # An AI turn ends after the participant's own (their move or chat asked for it): a sign of life.
            await conn.execute("UPDATE participants SET active_at = ? WHERE id = "
                               "(SELECT participant FROM games WHERE id = ?)", (now(), game_id))

    async def ai_turns(self, pid: str, position: int, ticket_sha256: str) -> int:
        """AI turns the server saw ended in ``pid``'s game at ``position`` played under one ticket
        (one game in the engine, over however many connections it took)."""
        rows = await self._rows("SELECT COALESCE(SUM(ai_turns), 0) AS n FROM games WHERE participant = ? AND "
                                "position = ? AND ticket_sha256 = ?", (pid, position, ticket_sha256))
        return int(rows[0]["n"])

    async def log_event(self, pid: str | None, action: str, detail: str = "") -> None:
        async with self._write() as conn:
            await self._log(conn, pid, action, detail[:MAX_REASON_CHARS * 2])

    async def never_started(self, cutoff: str) -> list[ParticipantRow]:
        """Online participants still in the study, given their sequence before ``cutoff``, who have not
        started a game."""
        rows = await self._rows("SELECT * FROM participants p WHERE online = 1 AND state IN ('active', 'paused') "
                                "AND COALESCE(consent_at, created_at) < ? AND NOT EXISTS "
                                "(SELECT 1 FROM games g WHERE g.participant = p.id) ORDER BY number", (cutoff,))
        return [_participant(r) for r in rows]

    async def set_game_spend(self, game_id: int, usd: float, player: str) -> None:
        """What game ``game_id`` cost in LLM calls (US dollars), and which player played it."""
        async with self._write() as conn:
            await conn.execute("UPDATE games SET spend_usd = COALESCE(spend_usd, 0) + ?, player = ? WHERE id = ?",
                               (usd, player, game_id))

    async def spend(self, pid: str | None = None) -> float:
        """LLM spend recorded so far (US dollars): of participant ``pid``, or of the whole study."""
        if pid is None:
            rows = await self._rows("SELECT COALESCE(SUM(spend_usd), 0) AS s FROM games")
        else:
            rows = await self._rows("SELECT COALESCE(SUM(spend_usd), 0) AS s FROM games WHERE participant = ?", (pid,))
        return float(rows[0]["s"])

    # ------------------------------------------------------------------ idle time-outs

    async def touch(self, pid: str) -> None:
        """A sign of life of ``pid`` in the flow (their page loaded, answered or saved): the idle
        time-outs count from now. A participant timed out but kept (``on_leave: keep``) is back."""
        async with self._write() as conn:
            cursor = await conn.execute("UPDATE participants SET outcome = NULL WHERE id = ? AND state = 'active' "
                                        "AND outcome = 'timed_out'", (pid,))
            back = cursor.rowcount
            await cursor.close()
            await conn.execute("UPDATE participants SET active_at = ? WHERE id = ?", (now(), pid))
            if back:
                await self._log(conn, pid, "back", "after a time-out")

    async def idle_candidates(self) -> list[ParticipantRow]:
        """Online participants in the flow (active, not timed out) whom an idle time-out may concern."""
        rows = await self._rows("SELECT * FROM participants WHERE online = 1 AND state = 'active' "
                                "AND outcome IS NULL ORDER BY number")
        return [_participant(r) for r in rows]

    async def time_out(self, pid: str, why: str, drop: bool) -> bool:
        """``pid`` was idle too long (``why``): marked timed out, and with ``drop`` dropped out (their
        order sequence goes to the next participant; a game still open for them ends, not completed).
        False when they are no longer active or were timed out already (changed meanwhile)."""
        async with self._write() as conn:
            row = await _known_participant(conn, pid)
            if row.state != "active" or row.outcome is not None:
                return False
            stamp = now()
            state = "dropped" if drop else row.state
            await conn.execute("UPDATE participants SET outcome = 'timed_out', state = ?, updated_at = ?, "
                               "ticket_sha256 = CASE WHEN ? THEN NULL ELSE ticket_sha256 END WHERE id = ?",
                               (state, stamp, drop, pid))
            if drop:
                await conn.execute("UPDATE games SET ended_at = ?, completed = 0, end_reason = 'timed out' "
                                   "WHERE participant = ? AND ended_at IS NULL", (stamp, pid))
                await self._log(conn, pid, "drop", f"timed out: {why}"[:MAX_REASON_CHARS])
            else:
                await self._log(conn, pid, "timed_out", why[:MAX_REASON_CHARS])
        return True

    # ------------------------------------------------------------------ questionnaires and withdrawal

    async def set_place(self, pid: str, place: str, language: str | None = None) -> None:
        """Where the participant is in the flow (and the language of their pages, when given)."""
        async with self._write() as conn:
            await conn.execute("UPDATE participants SET place = ?, language = COALESCE(?, language) WHERE id = ?",
                               (place[:MAX_REASON_CHARS], language, pid))

    async def open_page(self, pid: str, step: int, questionnaire: str, after_game: int,
                        item_order: Sequence[str]) -> PageRow:
        """The participant's page ``step``, recorded as shown now if it was not yet (its items' order
        as drawn, the moment it was first shown)."""
        async with self._write() as conn:
            await conn.execute("INSERT OR IGNORE INTO pages (participant, step, questionnaire, after_game, item_order,"
                               " shown_at) VALUES (?, ?, ?, ?, ?, ?)",
                               (pid, step, questionnaire, after_game, json.dumps(list(item_order)), now()))
            async with conn.execute("SELECT * FROM pages WHERE participant = ? AND step = ?", (pid, step)) as cursor:
                found = await cursor.fetchone()
        assert found is not None
        return _page(found)

    async def pages(self, pid: str | None = None) -> list[PageRow]:
        if pid is None:
            rows = await self._rows("SELECT * FROM pages ORDER BY participant, step")
        else:
            rows = await self._rows("SELECT * FROM pages WHERE participant = ? ORDER BY step", (pid,))
        return [_page(r) for r in rows]

    async def submitted_steps(self, pid: str) -> set[int]:
        rows = await self._rows("SELECT step FROM pages WHERE participant = ? AND submitted_at IS NOT NULL", (pid,))
        return {int(r["step"]) for r in rows}

    async def save_draft(self, pid: str, step: int, draft: dict[str, Any]) -> bool:
        """What the participant has entered on page ``step`` so far (not yet checked: the page shows it
        again after a reload); False when the page is not open or was submitted."""
        async with self._write() as conn:
            cursor = await conn.execute("UPDATE pages SET draft = ? WHERE participant = ? AND step = ? AND "
                                        "submitted_at IS NULL", (json.dumps(draft), pid, step))
            changed = cursor.rowcount
            await cursor.close()
        return bool(changed)

    async def submit_page(self, pid: str, step: int, language: str, answers: Sequence[Answer],
                          allowed_failures: int) -> Submitted:
        """Save page ``step``'s checked answers, in one transaction with the checks that the page is the
        participant's open one (shown, not submitted, the participant still in the study). Failed
        attention checks add up; one more than ``allowed_failures`` ends the participation as screened
        out (dropped: their order sequence goes to the next participant). StoreError otherwise."""
        async with self._write() as conn:
            row = await _known_participant(conn, pid)
            if row.state not in ("active", "completed"):
                raise StoreError(f"participant {pid} is {row.state}: no page takes answers")
            async with conn.execute("SELECT * FROM pages WHERE participant = ? AND step = ?", (pid, step)) as cursor:
                found = await cursor.fetchone()
            if found is None or found["submitted_at"] is not None:
                raise StoreError("this page is not the participant's current page (submitted already, or not yet "
                                 "reached)")
            page = _page(found)
            stamp = now()
            seconds = _seconds_between(page.shown_at, stamp)
            await conn.executemany(
                "INSERT INTO answers (participant, step, questionnaire, item, value, other, language, seconds, "
                "submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(pid, step, page.questionnaire, a.item, json.dumps(a.value), a.other, language, seconds, stamp)
                 for a in answers])
            await conn.execute("UPDATE pages SET submitted_at = ?, seconds = ?, language = ?, draft = NULL "
                               "WHERE participant = ? AND step = ?", (stamp, seconds, language, pid, step))
            failures = row.attention_failures + sum(a.failed_check for a in answers)
            out = failures > allowed_failures
            await conn.execute("UPDATE participants SET attention_failures = ?, updated_at = ? WHERE id = ?",
                               (failures, stamp, pid))
            await self._log(conn, pid, "page", f"{page.questionnaire} (step {step}) submitted after {seconds:g} s")
            if out and row.state == "active":
                await conn.execute("UPDATE participants SET state = 'dropped', outcome = 'screened_out', "
                                   "ticket_sha256 = NULL, updated_at = ? WHERE id = ?", (stamp, pid))
                await conn.execute("UPDATE games SET ended_at = ?, completed = 0, end_reason = 'screened out' "
                                   "WHERE participant = ? AND ended_at IS NULL", (stamp, pid))
                await self._log(conn, pid, "screened_out",
                                f"{failures} failed attention checks ({allowed_failures} allowed)")
        return Submitted(seconds, failures, out and row.state == "active")

    async def answers(self, pid: str | None = None) -> list[dict[str, Any]]:
        """Every answer as stored (value decoded), in the order of participants and pages."""
        where, params = ("WHERE a.participant = ?", (pid,)) if pid is not None else ("", ())
        rows = await self._rows(
            "SELECT a.* FROM answers a JOIN participants p ON p.id = a.participant "
            f"{where} ORDER BY p.number, a.step, a.rowid", params)
        return [{**dict(r), "value": json.loads(r["value"]) if r["value"] is not None else None} for r in rows]

    async def free_texts(self, items: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """The answers that may hold free text: of the (questionnaire, item) pairs ``items`` (the text
        items), and every "other" text; in the order of participants and pages (value decoded)."""
        keys = [f"{q}/{i}" for q, i in items]
        marks = ", ".join("?" * len(keys))
        where = f"a.other IS NOT NULL OR (a.questionnaire || '/' || a.item) IN ({marks})" if keys \
            else "a.other IS NOT NULL"
        rows = await self._rows(
            "SELECT a.participant, a.questionnaire, a.item, a.value, a.other FROM answers a JOIN participants p "
            f"ON p.id = a.participant WHERE {where} ORDER BY p.number, a.step, a.rowid", keys)
        return [{**dict(r), "value": json.loads(r["value"]) if r["value"] is not None else None} for r in rows]

    async def withdrawals(self) -> list[dict[str, Any]]:
        return [dict(r) for r in await self._rows("SELECT * FROM withdrawals ORDER BY withdrawn_at")]

    async def withdraw(self, pid: str) -> list[str]:
        """The participant withdrew: their answers, pages, games and event lines are deleted, their
        platform ids and consent cleared; they count as dropped out (their order sequence goes to the
        next participant), and the study keeps one line, who withdrew and when. Returns the stored
        transcript paths of their games (the caller deletes the files). StoreError for no such
        participant or one withdrawn already."""
        async with self._write() as conn:
            row = await _known_participant(conn, pid)
            if row.outcome == "withdrawn":
                raise StoreError(f"participant {pid} has withdrawn already")
            async with conn.execute("SELECT transcript FROM games WHERE participant = ? AND transcript IS NOT NULL",
                                    (pid,)) as cursor:
                transcripts = [str(r[0]) for r in await cursor.fetchall()]
            for table in ("answers", "pages", "games", "events"):
                await conn.execute(f"DELETE FROM {table} WHERE participant = ?", (pid,))
            await conn.execute("DELETE FROM open_entries WHERE participant = ?", (pid,))
            stamp = now()
            await conn.execute(
                "UPDATE participants SET state = 'dropped', outcome = 'withdrawn', prolific_pid = NULL, "
                "prolific_study = NULL, prolific_session = NULL, consent = NULL, consent_at = NULL, "
                "ticket_sha256 = NULL, ticket_position = NULL, left_at = NULL, finished_page_at = NULL, "
                "language = NULL, attention_failures = 0, place = NULL, active_at = NULL, created_at = ?, "
                "updated_at = ? WHERE id = ?",
                (stamp, stamp, pid))
            await conn.execute("INSERT INTO withdrawals (participant, withdrawn_at) VALUES (?, ?)", (pid, stamp))
        async with self._lock:
            # The write-ahead log still holds the pages as they were: moved into the database (whose
            # freed space secure_delete zeroes) and emptied, unless a reader holds it (then at the
            # next checkpoint).
            await self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return transcripts
