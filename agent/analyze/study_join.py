"""A study's participants and games joined to the transcripts' rows (``--study FILE``).

Each session row gets, from the study's database (matched by session id): ``participant``,
``condition``, ``order`` (the condition's 1-based place in the participant's sequence),
``previous_condition`` (the condition played just before: first-order carry-over; ``(first)``
for the first), ``game_position``, ``repeat`` (with several games per condition), ``attempt``,
``game_completed``, ``participant_state`` and ``sequence``. Turns, chats and LLM calls get the
same columns through their session. Sessions that are not the study's games keep them empty. Two
more tables: ``participants`` (one row per participant: their order, state, how their
participation ended early (screened out, withdrawn, timed out) and games completed, and the online
columns: source, consent and when, when their page closed, when they saw the completion page, when
and why they were dropped; never Prolific's ids: with ``--with-platform-ids``
they go to ``key.csv``, a key file kept apart, so the tables stay pseudonymous) and ``study_games``
(one row per game started, replays of interrupted ones included, with the path of its transcript as
found now). With questionnaires: ``answers``, ``scores`` and ``items`` (answers.py).

The database names each game's transcript relative to its own folder (core/studies/files.py), so
a study folder moved elsewhere still gives its transcripts: :attr:`StudyRows.transcripts`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.analyze.tables import Tables
from agent.core.studies.analysis_plan import AnalysisSpec

FIRST = "(first)"
ONLINE = ("online", "source", "consent", "consent_at", "left_at", "finished_page_at", "dropped_at", "dropped_why")
"""The participants table's online columns (empty for in-lab participants)."""
PLATFORM_IDS = ("prolific_pid", "prolific_study", "prolific_session")
"""Written only with ``--with-platform-ids``, to key.csv (beside the participant's id), never into the tables."""
JOINED = ("participant", "condition", "order", "previous_condition", "game_position", "repeat", "attempt",
          "game_completed", "participant_state", "sequence")
GROUPS = ("condition", "order")
"""What the summary groups a study's sessions by."""


@dataclass
class StudyRows:
    study: str
    plan_sha256: str
    participants: list[dict[str, Any]] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)
    transcripts: list[Path] = field(default_factory=list)
    """Every game's transcript file the database names, resolved against where the database is now."""
    folder: Path | None = None
    """The study's transcript folder (beside its database)."""
    answers: list[dict[str, Any]] = field(default_factory=list)
    """The questionnaires' answers, long (answers.py)."""
    items: list[dict[str, Any]] = field(default_factory=list)
    """The questionnaires' items (the codebook)."""
    keys: list[dict[str, Any]] = field(default_factory=list)
    """``--with-platform-ids``: each participant's Prolific ids (key.csv, kept apart from the tables)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The study, its plan hash and each condition's config hash."""
    people: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    """Each participant's sequence and conditions in their order."""
    design: str = "within"
    conditions: tuple[str, ...] = ()
    analysis: AnalysisSpec | None = None
    """The study file's analysis plan (``--results``)."""
    consent_asked: bool = False
    """An online consent page comes before the first game."""
    invited: int = 0
    """Invitations written ('study invite'); 0 when participants came otherwise."""


async def _read(path: Path, platform_ids: bool) -> StudyRows:
    from agent.analyze.answers import answer_rows, item_rows
    from agent.core.studies.metadata import config_hash
    from agent.core.studies.run import StudyRun
    from agent.games import read_study

    study = read_study(path)
    async with await StudyRun.open(study) as run:
        status = await run.status()
        games = await run.store.games()
        records = {r["id"]: r for r in await run.store.participant_records()}
        invited = await run.store.invites_written()
        files = {g.id: run.transcript_of(g) for g in games}
        folder = run.transcripts_dir
        pages = await run.store.pages()
        stored = await run.store.answers()
    participants = [{"participant": p.id, "number": p.number, "sequence": p.sequence, "order": " > ".join(p.order),
                     **{f"condition_{i}": c for i, c in enumerate(p.order, start=1)},
                     "state": p.state, "ended_early": records.get(p.id, {}).get("outcome"), "games": p.games,
                     "completed": p.completed, "attempts": p.attempts,
                     "replaces": p.replaces, "created_at": p.created_at,
                     **{name: getattr(p, name) for name in ONLINE}}
                    for p in status.participants]
    # Prolific's ids never go into the tables: into a key file of their own (key.csv), when asked for.
    keys = [{"participant": p.id, **{name: records.get(p.id, {}).get(name) for name in PLATFORM_IDS}}
            for p in status.participants] if platform_ids else []
    people = {p.id: (p.sequence, tuple(p.order)) for p in status.participants}
    q = study.questionnaires
    answers = answer_rows(q, study.plan, people, pages, stored) if q is not None else []
    items = item_rows(q, len(study.plan.conditions)) if q is not None else []
    meta = {"study": study.name, "plan_sha256": study.plan.hash, "analysis_sha256": study.analysis_hash,
            "config_sha256": {c.name: config_hash(c.config) for c in study.conditions}}
    sequences = {p.id: p.order for p in status.participants}
    states = {p.id: (p.state, p.sequence) for p in status.participants}
    rows = []
    for g in games:
        order = sequences.get(g.participant, [])
        previous = order[g.order_position - 2] if g.order_position > 1 and len(order) >= g.order_position else FIRST
        state, sequence = states.get(g.participant, (None, None))
        rows.append({"session": g.session_id, "participant": g.participant, "condition": g.condition,
                     "order": g.order_position, "previous_condition": previous, "game_position": g.position,
                     "repeat": g.repeat, "attempt": g.attempt, "game_completed": g.completed,
                     "participant_state": state, "sequence": sequence,
                     "transcript": str(files[g.id]) if files[g.id] is not None else None,
                     "started_at": g.started_at, "ended_at": g.ended_at, "end_reason": g.end_reason})
    transcripts = [f for f in files.values() if f is not None]
    consent = study.online is not None and study.online.consent is not None
    return StudyRows(study.name, study.plan.hash, participants, rows, transcripts, folder, answers, items, keys,
                     meta, people, study.plan.design, study.plan.conditions, study.analysis, consent, invited)


def read_study_rows(path: Path, platform_ids: bool = False) -> StudyRows:
    """The study's participants, games and answers (ConfigError / StoreError with one line
    otherwise); ``platform_ids``: Prolific's ids too, in :attr:`StudyRows.keys`."""
    return asyncio.run(_read(path, platform_ids))


def join_study(tables: Tables, rows: StudyRows) -> int:
    """Add the study's columns to every row of ``tables`` (in place); returns how many sessions
    were the study's games."""
    by_session = {g["session"]: g for g in rows.games}
    matched = 0
    for table in (tables.sessions, tables.turns, tables.chats, tables.llm_calls):
        for row in table:
            game = by_session.get(str(row.get("session")))
            if table is tables.sessions and game is not None:
                matched += 1
            for name in JOINED:
                row[name] = game.get(name) if game is not None else None
    tables.participants = rows.participants
    tables.study_games = rows.games
    tables.answers = rows.answers
    tables.items = rows.items
    tables.meta = rows.meta
    if rows.answers or rows.items:
        from agent.analyze.answers import score_rows

        tables.scores = score_rows(rows.people, rows.answers, tables.sessions, rows.items)
    return matched
