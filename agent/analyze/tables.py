"""Transcript records to tidy rows: one row per session, turn, chat reply and LLM call.

Pure functions over parsed records, so every game's transcripts give the same tables. What a game
records decides what fills in: ``session_start`` (with the core's study metadata), ``turn_start``
/ ``turn_end`` (``turn``, ``outcome``, ``seconds`` and any numeric measure such as
``pieces_on_board``), ``llm`` (``purpose``, ``outcome``, tokens, ``latency_s``/``elapsed_s``),
``chat_reply`` (``request``, ``reply``, ``outcome``, ``seconds``), the chat request itself (any
record with the same ``request`` id and a ``message``), ``guard`` (a model's choice the game's
guard replaced) and ``thinking`` (tangram's "still thinking" line): both counted per turn and per session.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.core.studies.pricing import Price, price_for

MAX_LINE_CHARS = 2_000_000
"""Longer lines are skipped as damaged (a record never gets near this: images are not kept)."""
MAX_TEXT_CHARS = 2000
"""Chat texts are clipped to this in the tables."""
TAG_PREFIX = "tag_"
TURN_FIELDS = {"t", "session", "kind", "turn", "outcome", "seconds"}


@dataclass
class TranscriptFile:
    path: Path
    records: list[dict[str, Any]]
    bad_lines: int = 0


@dataclass
class Tables:
    sessions: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    chats: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    participants: list[dict[str, Any]] = field(default_factory=list)
    """A study's participants (``--study``; see study_join.py), else empty."""
    study_games: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    """A study's questionnaire answers, long (see answers.py), else empty."""
    scores: list[dict[str, Any]] = field(default_factory=list)
    """One row per participant and condition: scale scores and game measures (wide)."""
    items: list[dict[str, Any]] = field(default_factory=list)
    """The questionnaires' items (the codebook's items table)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The study's name, plan hash and conditions' config hashes, for the data package."""
    skipped: list[str] = field(default_factory=list)
    """One line per file or line that could not be used, for the summary."""


def read_transcript(path: Path) -> TranscriptFile:
    """The JSON object records of one JSONL file; damaged lines are counted, not fatal."""
    records: list[dict[str, Any]] = []
    bad = 0
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if len(line) > MAX_LINE_CHARS:
                bad += 1
                continue
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(record, dict) and isinstance(record.get("kind"), str):
                records.append(record)
            else:
                bad += 1
    return TranscriptFile(path, records, bad)


def find_transcripts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl") if p.is_file())


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _clip(value: Any) -> Any:
    return value[:MAX_TEXT_CHARS] if isinstance(value, str) else value


def _turns_without_llm(records: Iterable[Mapping[str, Any]]) -> int:
    """AI turns that began while the model could not be asked: its server down or gone (``llm_server``
    records) or after a spend cap switched the session to the planner (``spend_cap``)."""
    down = capped = False
    turns: set[Any] = set()
    for r in records:
        if r["kind"] == "llm_server":
            down = r.get("state") in ("down", "gone")
        elif r["kind"] == "spend_cap":
            capped = True
        elif r["kind"] == "turn_start" and r.get("turn") is not None and (down or capped):
            turns.add(r["turn"])
    return len(turns)


def session_rows(transcript: TranscriptFile, prices: Mapping[str, Price]) -> Tables:
    """The rows one transcript contributes to each table."""
    records = transcript.records
    out = Tables()
    if not records:
        out.skipped.append(f"{transcript.path.name}: no records")
        return out
    start: dict[str, Any] = next((r for r in records if r["kind"] == "session_start"), {})
    end: dict[str, Any] = next((r for r in reversed(records) if r["kind"] == "session_end"), {})
    session = str(start.get("session") or records[0].get("session") or transcript.path.stem)
    tags: dict[str, Any] = start["tags"] if isinstance(start.get("tags"), dict) else {}
    tag_cols = {f"{TAG_PREFIX}{k}": str(v) for k, v in sorted(tags.items())}
    keys = {"session": session, **tag_cols}

    turns: dict[Any, dict[str, Any]] = {}
    for r in records:
        if r["kind"] == "turn_start" and r.get("turn") is not None:
            turns.setdefault(r["turn"], {**keys, "turn": r["turn"]})["started_t"] = _number(r.get("t"))
        elif r["kind"] == "turn_end" and r.get("turn") is not None:
            row = turns.setdefault(r["turn"], {**keys, "turn": r["turn"]})
            row["outcome"] = r.get("outcome")
            row["seconds"] = _number(r.get("seconds"))
            for name, value in r.items():
                if name not in TURN_FIELDS and _number(value) is not None:
                    row[name] = _number(value)

    llm_rows = []
    for r in records:
        if r["kind"] != "llm":
            continue
        prompt = _number(r.get("prompt_tokens")) or 0.0
        completion = _number(r.get("completion_tokens")) or 0.0
        model = r.get("model") if isinstance(r.get("model"), str) and r.get("model") else start.get("model")
        price = price_for(model, prices)
        cost = (prompt * price.input + completion * price.output) / 1e6 if price else math.nan
        outcome = r.get("outcome") or ("error" if r.get("error") else "ok")
        llm_rows.append({**keys, "turn": r.get("turn"), "request": r.get("request"), "purpose": r.get("purpose"),
                         "model": model, "outcome": outcome, "error": _clip(r.get("error")),
                         "prompt_tokens": prompt, "completion_tokens": completion,
                         "latency_s": _number(r.get("latency_s")), "elapsed_s": _number(r.get("elapsed_s")),
                         "attempts": _number(r.get("attempts")), "image_bytes": _number(r.get("image_bytes")),
                         "est_cost_usd": cost})
        if r.get("turn") in turns:
            row = turns[r["turn"]]
            row["llm_calls"] = row.get("llm_calls", 0) + 1
            row["tokens"] = row.get("tokens", 0.0) + prompt + completion

    guards = [r for r in records if r["kind"] == "guard"]
    for r in guards:
        if r.get("turn") in turns:
            row = turns[r["turn"]]
            row["guard_overrides"] = row.get("guard_overrides", 0) + 1
    # Tangram's "thinking" line (said when a turn's first play is slow): at most one per turn.
    thinking = [r for r in records if r["kind"] == "thinking"]
    for r in thinking:
        if r.get("turn") in turns:
            row = turns[r["turn"]]
            row["thinking_lines"] = row.get("thinking_lines", 0) + 1

    asked = {r["request"]: r for r in records
             if r.get("request") is not None and isinstance(r.get("message"), str) and r["kind"] != "chat_reply"}
    messages = {k: r["message"] for k, r in asked.items()}
    chat_rows = [{**keys, "request": r.get("request"),
                  "turn": r.get("turn", asked.get(r.get("request"), {}).get("turn")),
                  "message": _clip(messages.get(r.get("request"))), "reply": _clip(r.get("reply")),
                  "outcome": r.get("outcome"), "seconds": _number(r.get("seconds"))}
                 for r in records if r["kind"] == "chat_reply"]

    # Plays decided by an LLM that was offered checked candidates (tangram): a named candidate or
    # the model's own move. Decision records without the "candidate" key (other games, older
    # transcripts) count in neither.
    plays = [r for r in records if r["kind"] == "decision" and "candidate" in r and r.get("pose") is not None]
    candidate_plays = sum(1 for r in plays if r.get("candidate"))
    own_plays = sum(1 for r in plays if not r.get("candidate") and str(r.get("source", "")).startswith("llm"))
    for r in plays:
        if r.get("turn") in turns and not r.get("adjust"):
            source = str(r.get("source", ""))
            turns[r["turn"]]["play"] = (f"candidate {r['candidate']}" if r.get("candidate")
                                        else "own" if source.startswith("llm") else source)

    without_llm = _turns_without_llm(records)
    times = [t for t in (_number(r.get("t")) for r in records) if t is not None]
    turn_rows = sorted(turns.values(), key=lambda row: (str(type(row["turn"])), row["turn"]))
    seconds = [row["seconds"] for row in turn_rows if row.get("seconds") is not None]
    ended = [row for row in turn_rows if row.get("outcome") is not None]
    measures = sorted({k for row in turn_rows for k in row if k not in keys and k not in
                       {"turn", "started_t", "outcome", "seconds", "llm_calls", "tokens", "guard_overrides",
                        "thinking_lines", "play"}})
    last = {f"final_{m}": next((row[m] for row in reversed(turn_rows) if row.get(m) is not None), None)
            for m in measures}
    out.sessions.append({
        **keys, "file": transcript.path.name, "game": start.get("game"), "player_kind": start.get("player_kind"),
        "player": start.get("player"), "model": start.get("model"), "agent_version": start.get("agent_version"),
        "revision": start.get("revision"), "config_sha256": start.get("config_sha256"),
        "study": start.get("study"), "plan_sha256": start.get("plan_sha256"),
        "analysis_sha256": start.get("analysis_sha256"),
        "templates_sha256": start.get("templates_sha256"),
        "started_t": min(times) if times else None, "duration_s": (max(times) - min(times)) if times else None,
        "end_reason": end.get("reason"), "turns": len(turn_rows), "turns_ended": len(ended),
        "turn_seconds_mean": sum(seconds) / len(seconds) if seconds else None,
        "chats": len(chat_rows), "llm_calls": len(llm_rows),
        "llm_failures": sum(1 for row in llm_rows if row["outcome"] != "ok"),
        "guard_overrides": len(guards), "thinking_lines": len(thinking), "turns_without_llm": without_llm,
        "prompt_tokens": sum(row["prompt_tokens"] for row in llm_rows),
        "completion_tokens": sum(row["completion_tokens"] for row in llm_rows),
        "est_cost_usd": sum(row["est_cost_usd"] for row in llm_rows) if llm_rows else 0.0,
        "candidate_plays": candidate_plays if plays else None, "own_plays": own_plays if plays else None,
        "bad_lines": transcript.bad_lines, **last,
    })
    out.turns = turn_rows
    out.chats = chat_rows
    out.llm_calls = llm_rows
    if transcript.bad_lines:
        out.skipped.append(f"{transcript.path.name}: {transcript.bad_lines} damaged line(s) skipped")
    return out


def build_tables(transcripts: Iterable[TranscriptFile], prices: Mapping[str, Price]) -> Tables:
    return combine(session_rows(transcript, prices) for transcript in transcripts)


def combine(parts: Iterable[Tables]) -> Tables:
    """Each transcript's rows, one table of each kind."""
    tables = Tables()
    for rows in parts:
        tables.sessions += rows.sessions
        tables.turns += rows.turns
        tables.chats += rows.chats
        tables.llm_calls += rows.llm_calls
        tables.skipped += rows.skipped
    return tables
