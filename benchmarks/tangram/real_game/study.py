"""``--study FILE``: the runner drives a study instead of one config.

The study file is copied into the run's folder with its own database there (the study's real one
is never touched) and its conditions' config files named by absolute path; the agent serves it
(``python -m agent --study``, with the console), the participant is started from the command line
while it serves (``python -m agent study next ID``), as in the lab, and each of the participant's
games is a fresh page load played to the game's Finish. The console page is photographed while a
game is live and after each game; the run ends with the study's status table.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import yaml

from benchmarks.tangram.real_game.agent_run import RunnerError

STUDY_CLI_S = 60.0


def study_copy(study: Path, out: Path) -> Path:
    """The study file in ``out`` (its database beside it, its configs by absolute path)."""
    try:
        data = yaml.safe_load(study.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise RunnerError(f"--study {study}: {exc}".splitlines()[0]) from exc
    if not isinstance(data, dict) or not isinstance(data.get("conditions"), dict):
        raise RunnerError(f"--study {study}: not a study file (python -m agent study status --study FILE checks it)")
    for condition in data["conditions"].values():
        config = condition.get("config") if isinstance(condition, dict) else None
        if isinstance(config, str) and (study.parent / config).is_file():
            condition["config"] = str((study.parent / config).resolve())
    data["store"] = "study.db"
    path = out / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


async def study_cli(*args: str, cwd: Path) -> str:
    """``python -m agent study ARGS``; its output, or RunnerError with its message."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "agent", "study", *args, cwd=cwd,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), STUDY_CLI_S)
    if proc.returncode != 0:
        raise RunnerError(f"python -m agent study {' '.join(args)}: {err.decode(errors='replace').strip()}")
    return out.decode(errors="replace").strip()


async def status(study: Path) -> dict[str, Any]:
    data = json.loads(await study_cli("status", "--study", str(study), "--json", cwd=study.parent))
    assert isinstance(data, dict)
    return data


def games_of(status: dict[str, Any], participant: str) -> int:
    """How many games the participant plays in all."""
    for p in status["participants"]:
        if p["id"] == participant:
            return int(p["games"])
    raise RunnerError(f"participant {participant} is not in the study")


class ConsoleCamera:
    """The experimenter console open in its own tab of the run's browser, photographed on request."""

    def __init__(self, page: Any, shots: Path, step_s: float) -> None:
        self.page = page
        self.shots = shots
        self.step_s = step_s

    @classmethod
    async def open(cls, context: Any, url: str, shots: Path, step_s: float) -> ConsoleCamera:
        page = await context.new_page()
        await page.set_viewport_size({"width": 1600, "height": 1200})
        await page.goto(url, timeout=step_s * 1000)
        await page.wait_for_function("document.getElementById('status').dataset.state === 'open'",
                                     timeout=step_s * 1000)
        return cls(page, shots, step_s)

    async def until_progress(self, participant: str, completed: int) -> None:
        """Until the study table shows ``completed`` games done for ``participant``."""
        script = ("([pid, n]) => { const row = document.querySelector(`tr[data-participant=\"${pid}\"]`);"
                  " return !!row && row.children[3].textContent.startsWith(`${n} of`); }")
        await self.page.wait_for_function(script, arg=[participant, completed], timeout=self.step_s * 1000)

    async def shot(self, name: str) -> Path:
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True, timeout=self.step_s * 1000)
        return path


def status_lines(data: dict[str, Any]) -> list[str]:
    """The study's participants table, as ``python -m agent study status`` prints it per participant."""
    lines = [f"study {data['study']} ({data['design']}, plan {data['plan_sha256']}): {data['balance']}"]
    for p in data["participants"]:
        following = f"; next game: {p['next_condition']}" if p["next_condition"] else ""
        lines.append(f"{p['id']} {p['state']}: sequence {p['sequence']} ({', '.join(p['order'])}), "
                     f"{p['completed']} of {p['games']} games completed, {p['attempts']} started{following}")
    return lines


def game_rows(db: Path) -> list[dict[str, Any]]:
    """Every game the study's database holds, in the order started."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM games ORDER BY id")]
    finally:
        conn.close()


def game_lines(rows: list[dict[str, Any]]) -> list[str]:
    head = (f"{'participant':<12} {'game':>4} {'condition':<14} {'order':>5} {'attempt':>7} {'completed':<9}  "
            "how it ended")
    return [head, *(f"{r['participant']:<12} {r['position']:>4} {r['condition']:<14} {r['order_position']:>5} "
                    f"{r['attempt']:>7} {'yes' if r['completed'] else 'no':<9}  {r['end_reason'] or '-'}"
                    for r in rows)]
