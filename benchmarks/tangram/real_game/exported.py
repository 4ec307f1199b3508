"""The online real-game check's data side: the study's export (``python -m agent.analyze --study S
--out DIR``) compared, answer by answer, with what the participants' browsers entered
(answering.Entry), and its data package validated with Frictionless Data's own tool."""

from __future__ import annotations

import asyncio
import csv
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.tangram.real_game.answering import Answered, Entry, Persona

Key = tuple[str, str, str, str]
"""participant, questionnaire, game position ("" off a game), item."""


@dataclass
class Comparison:
    entered: int = 0
    exported: int = 0
    equal: int = 0
    problems: list[str] = field(default_factory=list)


def cell(value: Any) -> str:
    """A value as answers.csv writes it (several choices joined with ';', nothing as empty)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def compare(entries: Sequence[Entry], rows: Iterable[Mapping[str, str]]) -> Comparison:
    """Every entered answer is exported once with its value, "other" text and language, and the
    export has no answer of these participants that was not entered."""
    out = Comparison(entered=len(entries))
    people = {e.participant for e in entries}
    want: dict[Key, Entry] = {(e.participant, e.questionnaire, cell(e.game_position), e.item): e for e in entries}
    seen: set[Key] = set()
    for row in rows:
        if row["participant"] not in people:
            continue
        out.exported += 1
        key = (row["participant"], row["questionnaire"], row.get("game_position") or "", row["item"])
        entry = want.get(key)
        if entry is None:
            out.problems.append(f"exported but not entered: {key} = {row['value']!r}")
            continue
        if key in seen:
            out.problems.append(f"exported twice: {key}")
            continue
        seen.add(key)
        got = (row["value"], row.get("other") or "", row["language"])
        expected = (cell(entry.value), entry.other or "", entry.language)
        if got == expected:
            out.equal += 1
        else:
            out.problems.append(f"{key}: entered {expected}, exported {got}")
    out.problems += [f"entered but not exported: {key}" for key in want if key not in seen]
    return out


async def _run(*cmd: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    text, _ = await asyncio.wait_for(proc.communicate(), 300)
    return int(proc.returncode or 0), text.decode(errors="replace")


async def export_and_check(study: Path, out: Path, entries: Sequence[Entry]) -> tuple[Comparison, str]:
    """Runs the export into ``out``, compares its answers.csv with ``entries`` and validates its
    data package; the comparison and frictionless's verdict ("valid" or what it said)."""
    code, said = await _run(sys.executable, "-m", "agent.analyze", "--study", str(study), "--out", str(out))
    if code != 0:
        return Comparison(entered=len(entries), problems=[f"the export failed ({code}): {said[-2000:]}"]), "not run"
    with (out / "answers.csv").open(encoding="utf-8", newline="") as f:
        result = compare(entries, csv.DictReader(f))
    tool = Path(sys.executable).with_name("frictionless")
    binary = str(tool) if tool.exists() else shutil.which("frictionless")
    if binary is None:
        return result, "frictionless is not installed"
    code, said = await _run(binary, "validate", str(out / "datapackage.json"))
    return result, "valid" if code == 0 else f"INVALID: {said[-3000:]}"


def verdict(personas: Sequence[Persona], results: Sequence[Mapping[str, Any]], answered: Mapping[str, Answered],
            states: Mapping[str, tuple[str, str | None]], comparison: Comparison, validity: str,
            completion_code: str, screen_out_code: str) -> tuple[list[str], bool]:
    """The summary's lines and whether every promise held: each participant saw their code (the
    screen-out code for one failing the attention checks) and ended in the right state, answered in
    their language, found their answers after the reload; the export equals what was entered and its
    data package is valid."""
    lines: list[str] = []
    ok = True
    by_name = {str(r["participant"]): r for r in results}
    for p in personas:
        r = by_name.get(p.name, {})
        done = answered.get(p.name, Answered())
        problems = [str(r["failure"])] if r.get("failure") else []
        want_code = screen_out_code if p.fail_checks else completion_code
        if r.get("completion_code") != want_code:
            problems.append(f"saw code {r.get('completion_code')!r}, not {want_code!r}")
        want_state = ("dropped", "screened_out") if p.fail_checks else ("completed", None)
        state = states.get(p.name)
        if state is None or state[0] != want_state[0] or (p.fail_checks and state[1] != want_state[1]):
            problems.append(f"state {state}, not {want_state}")
        language = p.language or "en"
        others = sorted({e.language for e in done.entries} - {language})
        if others or not done.entries:
            problems.append(f"answered in {others or 'nothing'}, not only {language}")
        if p.reload_page and done.reloads_checked != 1:
            problems.append(f"{done.reloads_checked} reloads checked, not 1")
        ok = ok and not problems
        what = ", ".join(filter(None, [
            f"language {language}", "failed the checks" if p.fail_checks else "",
            f"reloaded on {p.reload_page}: answers back" if p.reload_page and done.reloads_checked else ""]))
        lines.append(f"{p.name} ({what}): {r.get('games_played', 0)} games, {done.pages} pages, "
                     f"{len(done.entries)} answers, code {r.get('completion_code')}, state {state}: "
                     + ("ok" if not problems else "FAILED: " + "; ".join(problems)))
    same = not comparison.problems and comparison.entered == comparison.equal == comparison.exported
    ok = ok and same and validity == "valid"
    lines.append(f"answers: {comparison.entered} entered, {comparison.exported} exported, {comparison.equal} equal "
                 f"(value, other text, language): " + ("ok" if same else "FAILED"))
    lines += [f"  {problem}" for problem in comparison.problems[:20]]
    lines.append(f"data package (frictionless validate): {validity}")
    return lines, ok
