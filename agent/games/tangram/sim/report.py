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
from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape

from agent.games.tangram.sim.client import TurnResult
from agent.games.tangram.sim.runner import GameResult, agent_notes

_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Tangram simulator report</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;background:#fafafa}
h1{font-size:22px} h2{font-size:18px;margin-top:36px;border-bottom:2px solid #ccc}
table{border-collapse:collapse} td,th{border:1px solid #ddd;padding:6px 8px;vertical-align:top;text-align:left}
.summary td:first-child{font-weight:600;white-space:nowrap}
.round{display:grid;grid-template-columns:300px 300px 1fr;gap:16px;margin:14px 0;padding:10px;background:#fff;border:1px solid #e3e3e3}
.round img{width:281px;height:270px;border:1px solid #999;display:block}
.who{font-weight:600;margin:4px 0}
.bad{color:#b00020;font-weight:600} .ok{color:#1b7f2a;font-weight:600} .muted{color:#777}
.chat p{margin:3px 0} .chat .human{color:#0b4f9c} .chat .agent{color:#6a1b9a} .chat .game{color:#8a6d00}
pre{white-space:pre-wrap;font-size:12px;background:#f3f3f3;padding:6px;margin:4px 0;max-height:220px;overflow:auto}
</style></head><body>
<h1>Tangram simulator report</h1>
<table class="summary">
{% for key, value in summary_rows %}<tr><td>{{ key }}</td><td>{{ value }}</td></tr>
{% endfor %}</table>
{% for g in games %}
<h2 id="game-{{ g.index }}">Game {{ g.index }}: {{ g.objective }}</h2>
<p>human: {{ g.human }} &middot; seed {{ g.seed }} &middot; figure score: {{ g.figure_score }}
&middot; transcript: <a href="{{ g.json }}">{{ g.json }}</a>
{% if g.error %}<br><span class="bad">game error: {{ g.error }}</span>{% endif %}</p>
{% if g.violations %}<p class="bad">protocol violations ({{ g.violations|length }}):</p><ul>
{% for v in g.violations %}<li>turn {{ v.turn }}, {{ '%.2f'|format(v.at) }} s: <b>{{ v.kind }}</b> {{ v.detail }}</li>{% endfor %}
</ul>{% endif %}
{% for r in g.rounds %}
<div class="round">
 <div><div class="who">Round {{ r.round }} &middot; human</div>
  {% if r.human_img %}<img src="{{ r.human_img }}" alt="board after the human's move in round {{ r.round }}">{% endif %}
  <div>{{ r.human_move }}</div></div>
 <div><div class="who">Round {{ r.round }} &middot; AI</div>
  {% if r.ai_img %}<img src="{{ r.ai_img }}" alt="board after the AI's turn in round {{ r.round }}">{% endif %}
  <div class="{{ r.ai_class }}">{{ r.ai_outcome }}</div></div>
 <div>
  {% if r.plays %}<div class="who">AI plays</div><ol>{% for p in r.plays %}<li>{{ p }}</li>{% endfor %}</ol>{% endif %}
  {% if r.chat %}<div class="who">Chat</div><div class="chat">{% for c in r.chat %}
   <p class="{{ c.speaker }}"><b>{{ c.speaker }}</b> <span class="muted">{{ '%.1f'|format(c.at) }} s</span>: {{ c.text }}</p>{% endfor %}</div>{% endif %}
  {% if r.notes %}<div class="who">Agent reasoning</div>{% for n in r.notes %}
   <pre>{{ n }}</pre>{% endfor %}{% endif %}
 </div>
</div>
{% endfor %}
{% endfor %}
</body></html>
"""


def _env() -> Environment:
    return Environment(autoescape=select_autoescape(default=True, default_for_string=True))


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
        notes = agent_notes(result)
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
            })
        games.append({"index": result.index, "objective": result.objective, "human": result.human,
                      "seed": result.seed, "figure_score": result.figure_score, "error": result.error,
                      "json": json_name, "violations": result.game.violations, "rounds": rounds})
    rows = [(k, json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in summary.items()]
    html = _env().from_string(_TEMPLATE).render(summary_rows=rows, games=games)
    index = directory / "index.html"
    index.write_text(html, encoding="utf-8")
    return index
