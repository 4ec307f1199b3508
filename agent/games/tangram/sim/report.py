"""The run written to a folder a researcher can open: ``index.html`` plus data files.

Layout of ``DIR``::

    index.html          the visual report: summary, then per game every turn's board image,
                        who moved what, the chat and the agent's reasoning
    summary.json        the summary printed by the runner
    game-N.json         game N's transcript as the simulator saw it (frames, plays, chat, violations)
    img/game-N-rR-human.png, img/game-N-rR-ai.png   the board after each turn

The page references the images as relative files, so the folder can be zipped or served as is.
Every text from the agent goes through Jinja2's autoescape.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from agent.games.tangram.sim.client import TurnResult
from agent.games.tangram.sim.runner import (
    GameResult,
    agent_notes,
    per_game_rows,
    per_objective_rows,
    summary_lines,
)

MAX_PROMPT_CHARS = 20_000
"""A prompt shown in the report is clipped here (the full text is in the agent's transcript)."""



def _env() -> Environment:
    return Environment(loader=PackageLoader("agent.games.tangram.sim", "templates"), undefined=StrictUndefined,
                       autoescape=select_autoescape(default=True, default_for_string=True))


def _cell(value: Any, link: str | None = None) -> dict[str, Any]:
    if value is None:
        return {"text": "–", "num": False, "link": link}
    if isinstance(value, float):
        return {"text": f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}", "num": True, "link": link}
    return {"text": str(value), "num": isinstance(value, int), "link": link}


def _table(rows: list[dict[str, Any]], links: dict[str, str] | None = None) -> dict[str, Any]:
    """Rows of dicts as columns and cells; ``links`` maps a column to a format for its link."""
    columns = [c for c in (rows[0] if rows else {}) if any(r.get(c) is not None for r in rows) or c != "error"]
    return {"columns": columns,
            "rows": [[_cell(r.get(c), (links or {}).get(c, "").format(**r) or None) for c in columns] for r in rows]}


def _clip(text: str) -> str:
    return text if len(text) <= MAX_PROMPT_CHARS else text[:MAX_PROMPT_CHARS] + "\n... (clipped; see the transcript)"


def _seen_images(rec: dict[str, Any], result: GameResult, directory: Path) -> list[str]:
    """The pictures an LLM call sent, exactly as sent, copied into the report (when the agent kept
    them: ``transcripts.images``, which an in-process run turns on)."""
    out: list[str] = []
    images = rec.get("images")
    if result.agent_dir is None or not isinstance(images, list):
        return out
    root = result.agent_dir.resolve()
    for ref in images:
        name = ref.get("file") if isinstance(ref, dict) else None
        if not isinstance(name, str):
            continue
        source = (root / name).resolve()
        if not source.is_relative_to(root) or not source.is_file():
            continue  # a record naming a file elsewhere is not followed
        target = f"img/llm/{source.name}"
        (directory / "img" / "llm").mkdir(parents=True, exist_ok=True)
        if not (directory / target).exists():
            shutil.copyfile(source, directory / target)
        out.append(target)
    return out


def _llm_calls(result: GameResult, directory: Path) -> dict[int, list[dict[str, Any]]]:
    """Each AI turn's LLM calls: the prompt (system prompt by its hash), the pictures as the model
    saw them, and the reply, for folding."""
    systems = {rec.get("sha256"): rec.get("text", "") for rec in result.agent_records or []
               if rec.get("kind") == "system_prompt"}
    calls: dict[int, list[dict[str, Any]]] = {}
    for index, records in agent_notes(result, kinds=("llm",)).items():
        for rec in records:
            outcome = rec.get("outcome") or ("error" if rec.get("error") else "ok")
            seconds = rec.get("elapsed_s") if rec.get("elapsed_s") is not None else rec.get("latency_s")
            label = f"{rec.get('purpose', '?')}, {outcome}" + (f", {seconds:.2f} s" if seconds is not None else "")
            if rec.get("prompt_tokens") or rec.get("completion_tokens"):
                label += f", {rec.get('prompt_tokens') or 0}+{rec.get('completion_tokens') or 0} tokens"
            messages = rec.get("messages") or rec.get("request") or []
            calls.setdefault(index, []).append({
                "label": label,
                "system": _clip(str(systems.get(rec.get("system_sha256"), ""))),
                "messages": [{"role": str(m.get("role", "?")), "text": _clip(str(m.get("text", "")))}
                             for m in messages if isinstance(m, dict)],
                "reply": _clip(str(rec.get("text") or rec.get("error") or "(no reply)")),
                "images": _seen_images(rec, result, directory), "purpose": rec.get("purpose")})
    return calls


def _fmt_move(move: tuple[str, float, float, float] | None) -> str:
    if move is None:
        return "no move"
    piece, x, y, rot = move
    return f"moved {piece} to ({x:.1f}, {y:.1f}) at {rot:g}°"


def _fmt_play(p: Any) -> str:
    text = f"{p.shape} → ({p.x:.2f}, {p.y:.2f}) at {p.rotation:g}°"
    if p.replaced:
        text += f" (put {p.replaced} back: one piece per turn)"
    text += f"; collides with {', '.join(p.collisions)}" if p.collisions else "; no collision"
    return text


def _outcome(t: TurnResult) -> tuple[str, str]:
    if t.ended_by == "finish":
        if t.undone:
            return f"finish, but undone by the game ({t.piece} overlapped {', '.join(t.collisions)})", "bad"
        return ("finish" + (f": moved {t.piece}" if t.piece else ": passed"), "ok")
    if t.ended_by == "error":
        return f"error frame: {t.error_message}", "bad"
    if t.ended_by == "timeout":
        return "the turn never ended (timed out)", "bad"
    return f"turn ended: {t.ended_by}", "bad"


def _note_text(rec: dict[str, Any]) -> str:
    if rec.get("kind") == "salvage":
        return (f"[salvaged: {rec.get('salvage')}] the model said {rec.get('said')}; played {rec.get('played')}, "
                f"because {rec.get('why')}")
    if rec.get("kind") == "reask":
        what = "asked again" if rec.get("sent") else "no time to ask again"
        return f"[re-ask: {rec.get('problem')}] {rec.get('detail')}: {what}"
    parts = []
    if rec.get("source"):
        parts.append(f"[{rec['source']}{' adjust' if rec.get('adjust') else ''}]")
    if rec.get("pose"):
        parts.append(f"pose {json.dumps(rec['pose'])}")
    if rec.get("chat"):
        parts.append(f"says: {rec['chat']}")
    if rec.get("reasoning"):
        parts.append(f"\n{rec['reasoning']}")
    return " ".join(parts)


def write_report(directory: Path, summary: dict[str, Any], results: list[GameResult]) -> Path:
    """Write the folder; returns the path of ``index.html``."""
    directory = Path(directory)
    img_dir = directory / "img"
    img_dir.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    games = []
    for result in results:
        json_name = f"game-{result.index}.json"
        data = result.to_dict()
        if result.agent_records is not None:
            data["agent_transcript"] = result.agent_records
        (directory / json_name).write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
        images: dict[tuple[int, str], str] = {}
        for snap in result.snapshots:
            name = f"img/game-{result.index}-r{snap.round:02d}-{snap.who}.png"
            (directory / name).write_bytes(snap.png)
            images[(snap.round, snap.who)] = name
        notes = agent_notes(result, kinds=("decision", "salvage", "reask"))
        llm_calls = _llm_calls(result, directory)
        rounds = []
        for i, turn in enumerate(result.turns):
            rnd = i + 1
            human = result.human_turns[i] if i < len(result.human_turns) else None
            outcome, css = _outcome(turn)
            record = result.game.turns[i]
            start = result.game.turns[i - 1].ended_at if i else 0.0
            last = i == len(result.turns) - 1  # late replies belong to the last round
            end = record.ended_at if record.ended_at is not None and not last else float("inf")
            chat = [c for c in result.game.chat_log if (start or 0.0) <= c.at <= end]
            rounds.append({
                "round": rnd,
                "human_move": _fmt_move(human.move if human else None),
                "human_img": images.get((rnd, "human")),
                "ai_img": images.get((rnd, "ai")),
                "ai_outcome": outcome, "ai_class": css,
                "plays": [_fmt_play(p) for p in turn.plays],
                "chat": chat,
                "notes": [_note_text(n) for n in notes.get(turn.index, [])],
                "llm": llm_calls.get(turn.index, []),
                "model_img": next((c["images"][0] for c in llm_calls.get(turn.index, [])
                                   if c["purpose"] == "play" and c["images"]), None),
            })
        games.append({"index": result.index, "objective": result.objective, "human": result.human,
                      "seed": result.seed, "figure_score": result.figure_score, "error": result.error,
                      "json": json_name, "violations": result.game.violations, "rounds": rounds})
    tables = [("Per objective", _table(per_objective_rows(results))),
              ("Per game", _table(per_game_rows(results), links={"game": "#game-{game}"}))]
    html = _env().get_template("report.html.j2").render(summary_rows=summary_lines(summary), games=games,
                                                         tables=tables)
    index = directory / "index.html"
    index.write_text(html, encoding="utf-8")
    return index
