"""The study database's schema, as numbered migrations applied in order.

SQLite keeps the schema's version in its own header (``PRAGMA user_version``). Each migration's
statements and the version bump run in one ``BEGIN IMMEDIATE`` transaction, so a process killed
in the middle leaves the database as it was before, and a second process opening the database at
the same moment waits for the first and then finds nothing left to do. A migration is never
edited once released: a change to the schema is a new entry at the end of :data:`MIGRATIONS`.

(A migration library was weighed: yoyo-migrations applies a migration and marks it applied in two
transactions, so a kill between them makes the next start apply it again, and it locks with a row
that a killed process leaves behind until someone runs ``yoyo break-lock``; alembic needs
SQLAlchemy; sqlite-utils' migrations are an early alpha. SQLite's own version slot in one
transaction per step has neither problem.)
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: the study, its participants, their games, and a log of every change
        """CREATE TABLE study (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            name TEXT NOT NULL,
            plan_sha256 TEXT NOT NULL,
            plan TEXT NOT NULL,
            created_at TEXT NOT NULL)""",
        """CREATE TABLE participants (
            id TEXT PRIMARY KEY,
            number INTEGER NOT NULL UNIQUE,
            sequence INTEGER NOT NULL CHECK (sequence >= 1),
            conditions TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'dropped', 'completed')),
            replaces TEXT REFERENCES participants(id),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)""",
        "CREATE UNIQUE INDEX one_active_participant ON participants(state) WHERE state = 'active'",
        """CREATE TABLE games (
            id INTEGER PRIMARY KEY,
            participant TEXT NOT NULL REFERENCES participants(id),
            position INTEGER NOT NULL CHECK (position >= 1),
            condition TEXT NOT NULL,
            order_position INTEGER NOT NULL CHECK (order_position >= 1),
            repeat INTEGER NOT NULL CHECK (repeat >= 1),
            attempt INTEGER NOT NULL CHECK (attempt >= 1),
            session_id TEXT NOT NULL,
            transcript TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            completed INTEGER CHECK (completed IN (0, 1)),
            end_reason TEXT,
            UNIQUE (participant, position, attempt))""",
        "CREATE INDEX games_by_session ON games(session_id)",
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            participant TEXT,
            action TEXT NOT NULL,
            detail TEXT)""",
    ),
    (  # 2: online studies: many participants active at once (in-lab still one), their links, tickets, ids
        "DROP INDEX one_active_participant",
        "ALTER TABLE participants ADD COLUMN online INTEGER NOT NULL DEFAULT 0 CHECK (online IN (0, 1))",
        "CREATE UNIQUE INDEX one_active_in_lab ON participants(state) WHERE state = 'active' AND online = 0",
        "ALTER TABLE participants ADD COLUMN source TEXT CHECK (source IN ('invite', 'open'))",
        "ALTER TABLE participants ADD COLUMN link_sha256 TEXT",
        "CREATE UNIQUE INDEX participants_by_link ON participants(link_sha256) WHERE link_sha256 IS NOT NULL",
        "ALTER TABLE participants ADD COLUMN prolific_pid TEXT",
        "ALTER TABLE participants ADD COLUMN prolific_study TEXT",
        "ALTER TABLE participants ADD COLUMN prolific_session TEXT",
        "CREATE INDEX participants_by_prolific ON participants(prolific_pid) WHERE prolific_pid IS NOT NULL",
        "ALTER TABLE participants ADD COLUMN consent TEXT CHECK (consent IN ('given', 'refused'))",
        "ALTER TABLE participants ADD COLUMN consent_at TEXT",
        "ALTER TABLE participants ADD COLUMN ticket_sha256 TEXT",
        "ALTER TABLE participants ADD COLUMN ticket_position INTEGER",
        "CREATE UNIQUE INDEX participants_by_ticket ON participants(ticket_sha256) WHERE ticket_sha256 IS NOT NULL",
        "ALTER TABLE participants ADD COLUMN left_at TEXT",
        "ALTER TABLE participants ADD COLUMN finished_page_at TEXT",
        "ALTER TABLE games ADD COLUMN spend_usd REAL",
        "ALTER TABLE games ADD COLUMN player TEXT",
        """CREATE TABLE invites (
            number INTEGER PRIMARY KEY CHECK (number >= 1),
            code_sha256 TEXT NOT NULL UNIQUE,
            participant TEXT REFERENCES participants(id),
            created_at TEXT NOT NULL,
            opened_at TEXT)""",
    ),
    (  # 3: what the server saw of each game (its AI turns, the ticket it was played under), and open
       # recruitment's visits that have not started a participant yet (a link preview takes nothing)
        "ALTER TABLE games ADD COLUMN ai_turns INTEGER NOT NULL DEFAULT 0 CHECK (ai_turns >= 0)",
        "ALTER TABLE games ADD COLUMN ticket_sha256 TEXT",
        """CREATE TABLE open_entries (
            id INTEGER PRIMARY KEY,
            code_sha256 TEXT NOT NULL UNIQUE,
            prolific_pid TEXT,
            prolific_study TEXT,
            prolific_session TEXT,
            participant TEXT REFERENCES participants(id),
            created_at TEXT NOT NULL)""",
        "CREATE INDEX open_entries_by_session ON open_entries(prolific_session) WHERE prolific_session IS NOT NULL",
    ),
    (  # 4: questionnaires: each page of a participant's flow as shown and submitted, its answers, how a
       # participation ended early (screened out, withdrawn), and the one line a withdrawal leaves
        "ALTER TABLE participants ADD COLUMN language TEXT",
        "ALTER TABLE participants ADD COLUMN attention_failures INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE participants ADD COLUMN outcome TEXT "
        "CHECK (outcome IN ('screened_out', 'withdrawn', 'timed_out'))",
        "ALTER TABLE participants ADD COLUMN place TEXT",
        """CREATE TABLE pages (
            participant TEXT NOT NULL REFERENCES participants(id),
            step INTEGER NOT NULL CHECK (step >= 1),
            questionnaire TEXT NOT NULL,
            after_game INTEGER NOT NULL CHECK (after_game >= 0),
            item_order TEXT NOT NULL,
            shown_at TEXT NOT NULL,
            draft TEXT,
            language TEXT,
            submitted_at TEXT,
            seconds REAL,
            PRIMARY KEY (participant, step))""",
        """CREATE TABLE answers (
            participant TEXT NOT NULL REFERENCES participants(id),
            step INTEGER NOT NULL CHECK (step >= 1),
            questionnaire TEXT NOT NULL,
            item TEXT NOT NULL,
            value TEXT,
            other TEXT,
            language TEXT NOT NULL,
            seconds REAL NOT NULL,
            submitted_at TEXT NOT NULL,
            PRIMARY KEY (participant, step, item))""",
        """CREATE TABLE withdrawals (
            participant TEXT PRIMARY KEY,
            withdrawn_at TEXT NOT NULL)""",
    ),
    (  # 5: a participant's last sign of life in the flow (a page loaded or saved, an AI turn of their game),
       # which the study's idle time-outs measure from
        "ALTER TABLE participants ADD COLUMN active_at TEXT",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(Exception):
    """The database was made by a newer version of the agent."""


def migrate(conn: sqlite3.Connection) -> int:
    """Bring ``conn``'s database to :data:`SCHEMA_VERSION` (the connection in autocommit mode:
    ``isolation_level=None``); returns the version found before."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(f"its schema is version {found}, this agent knows up to {SCHEMA_VERSION}: "
                               "use the agent version that made it, or a newer one")
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version - 1]:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return found
