"""A process that drives a study to some state and then waits to be killed (SIGKILL), so the tests
can reopen the database afterwards: ``python -m tests.core.study_child STUDY ACTION...``.

Actions: ``next:ID``, ``pause:ID``, ``resume:ID``, ``drop:ID``, ``start`` (game_started for the
current assignment), ``end`` / ``fail`` (game_ended completed / not completed for the last one
started), ``hold-write`` (a write transaction left open: a participant inserted, not committed).
Prints ``ready`` when there, then sleeps.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
from pathlib import Path

from agent.core.config import GameConfig
from agent.core.studies.run import StartedGame, StudyRun
from agent.core.studies.study_file import Study, load_study


def model_of(game: str) -> type[GameConfig]:
    return GameConfig


def load(path: Path) -> Study:
    return load_study(path, model_of, "tangram")


async def drive(study: Study, actions: list[str]) -> None:
    started: StartedGame | None = None
    run = await StudyRun.open(study)
    for action in actions:
        verb, _, arg = action.partition(":")
        if verb == "next":
            await run.next_participant(arg)
        elif verb in ("pause", "resume", "drop"):
            await getattr(run, verb)(arg)
        elif verb == "start":
            assignment = await run.current()
            assert assignment is not None
            started = await run.game_started(assignment, f"s{time.monotonic_ns()}", Path("t.jsonl"))
        elif verb in ("end", "fail"):
            assert started is not None
            await run.game_ended(started, completed=verb == "end")
        elif verb == "hold-write":
            conn = sqlite3.connect(study.store, isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO participants (id, number, sequence, conditions, state, created_at, updated_at) "
                         "VALUES ('GHOST', 99, 1, ?, 'paused', 'x', 'x')", (json.dumps(["a"]),))
        else:
            raise SystemExit(f"unknown action {action}")
    print("ready", flush=True)
    await asyncio.sleep(120)


if __name__ == "__main__":
    asyncio.run(drive(load(Path(sys.argv[1])), sys.argv[2:]))
