"""The tables as a Frictionless Data package: ``datapackage.json`` beside the CSV files.

The package is the codebook: every table is a resource with a table schema (every column, its type
and what it holds), the items' codebook is a table of its own (``items``), and the package carries
the study, its plan hash and each condition's config hash. Standard tools read and check it
(``frictionless validate datapackage.json``). The key file (``key.csv``, ``--with-platform-ids``)
is left out on purpose: it is kept apart from the data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.analyze.answers import SCORE_PREFIX

if TYPE_CHECKING:
    import pandas as pd

PACKAGE = "datapackage.json"
TABLE_TITLES = {
    "sessions": "One row per session (a connection of a game): its measures, costs and the study's columns.",
    "turns": "One row per AI turn of every session.",
    "chats": "One row per chat message the agent answered.",
    "llm_calls": "One row per call to a language model.",
    "participants": "One row per participant of the study (pseudonymous: no platform ids).",
    "study_games": "One row per game started (replays of interrupted ones included).",
    "answers": "One row per questionnaire answer (long).",
    "scores": "One row per participant and condition: scale scores beside that condition's game measures (wide).",
    "items": "The codebook of the questionnaires: one row per item.",
}
COLUMNS = {
    "session": "The session's id (one connection of a game).",
    "participant": "The participant's pseudonymous id in the study.",
    "condition": "The study condition (none: not a study game, or a page before the first or after the last game).",
    "order": "The condition's 1-based place in the participant's order of conditions.",
    "previous_condition": "The condition played just before ('(first)' for the first).",
    "game_position": "The 1-based place of the game among the participant's games.",
    "repeat": "Which game of this condition (several games per condition).",
    "attempt": "1, or more when the game at this place was started again after an interruption.",
    "game_completed": "The game was played to its end.",
    "participant_state": "The participant's state: active, paused, dropped or completed.",
    "sequence": "The plan's 1-based order sequence the participant got.",
    "turn": "The AI turn's number in its session.",
    "file": "The transcript's file name.",
    "game": "The game played.",
    "player_kind": "The kind of AI player.",
    "player": "The AI player.",
    "model": "The language model.",
    "agent_version": "The agent's version.",
    "revision": "The agent's source revision.",
    "config_sha256": "16 hex digits of the SHA-256 of the effective game config.",
    "study": "The study's name.",
    "plan_sha256": "16 hex digits of the SHA-256 of the study's plan.",
    "templates_sha256": "16 hex digits of the SHA-256 of the prompt templates.",
    "analysis_sha256": "16 hex digits of the SHA-256 of the study's analysis plan (empty: none declared).",
    "turns_without_llm": "AI turns begun during an LLM outage or after a spend cap (the planner played them).",
    "started_t": "When it started (seconds, transcript clock).",
    "duration_s": "Seconds from its first to its last record (wide table: summed over the condition's games).",
    "end_reason": "Why it ended.",
    "turns": "AI turns.",
    "turns_ended": "AI turns that ended.",
    "turn_seconds_mean": "Mean seconds of an AI turn.",
    "chats": "Chat replies (wide table: summed over the condition's games).",
    "llm_calls": "Calls to a language model.",
    "llm_failures": "Calls to a language model that failed.",
    "guard_overrides": "Model choices the game's guard replaced.",
    "thinking_lines": "'Still thinking' lines said.",
    "prompt_tokens": "Prompt tokens.",
    "completion_tokens": "Completion tokens.",
    "est_cost_usd": "Estimated LLM cost, US dollars (list prices).",
    "candidate_plays": "Plays that took a checked candidate.",
    "own_plays": "Plays of the model's own.",
    "bad_lines": "Damaged transcript lines skipped.",
    "outcome": "How it ended.",
    "seconds": "Seconds it took.",
    "step": "The page's 1-based place in the participant's flow.",
    "questionnaire": "The questionnaire's name in the study file.",
    "when": "Where in the flow: before_first, after_each or after_last.",
    "item": "The item's id in the study file (see the items table).",
    "kind": "The item's kind: likert, slider, single, multiple, short_text, long_text or number.",
    "value": "The answer as given (a Likert point, 0-100, a number, a text, an option's value; several "
             "choices joined with ';'; a partner-choice item: the partner's place). Empty: left out.",
    "other": "The text of an 'other' choice.",
    "partner_condition": "A partner-choice item: the condition of the partner chosen (their place in 'value').",
    "scale": "The scale the item counts towards.",
    "scored": "The value as its scale counts it (reverse-keyed items flipped).",
    "failed_check": "An attention check: the answer was not the correct one.",
    "language": "The language the page was answered in.",
    "seconds_on_page": "Seconds from the page first shown to its submission.",
    "games": "The condition's games played (the participants table: the games the participant plays in all).",
    "games_completed": "The condition's games played to their end.",
    "pieces_placed": "Pieces on the board at the end of the game (summed over the condition's games).",
    "ai_turns": "AI turns (summed over the condition's games).",
    "llm_cost_usd": "Estimated LLM cost of the condition's games, every attempt, US dollars.",
    "item_order": "fixed (as listed) or random (drawn per participant and page).",
    "position": "The item's place in the questionnaire as listed.",
    "required": "An answer is required.",
    "reverse": "Reverse-keyed (flipped in its scale's score).",
    "attention_check": "An attention check (has a correct answer).",
    "correct": "An attention check's correct answer.",
    "min": "The lowest value.",
    "max": "The highest value.",
    "max_chars": "The most characters of a text answer.",
    "number": "The participant's 1-based number (in the order they started).",
    "state": "active, paused, dropped or completed.",
    "ended_early": "How the participation ended early: screened_out, withdrawn or timed_out (empty: it did not).",
    "completed": "Games completed.",
    "attempts": "Games started, replays included.",
    "replaces": "The dropped participant whose sequence this one took.",
    "created_at": "When the participant started (UTC).",
    "online": "Took part from their own browser.",
    "source": "Online: invite or open.",
    "consent": "given or refused.",
    "consent_at": "When the consent page was answered.",
    "left_at": "When their page said it was closing.",
    "finished_page_at": "When they first saw the completion page.",
    "dropped_at": "When they were dropped out.",
    "dropped_why": "Why they were dropped out.",
    "transcript": "The transcript's path as found now.",
    "started_at": "When the game started (UTC).",
    "ended_at": "When the game ended (UTC).",
    "request": "The chat or LLM request's id.",
    "message": "The participant's chat message.",
    "reply": "The agent's reply.",
    "purpose": "What the call was for.",
    "error": "The error, if any.",
    "latency_s": "Seconds to the first token.",
    "elapsed_s": "Seconds the call took.",
    "image_bytes": "Bytes of images sent.",
    "play": "How the turn's play was chosen.",
    "tokens": "Tokens of the turn's calls.",
}


def describe(column: str) -> str:
    """What ``column`` holds (every column, the game's own measures and tags included)."""
    if column in COLUMNS:
        return COLUMNS[column]
    if column.startswith(SCORE_PREFIX):
        return (f"The score of scale {column.removeprefix(SCORE_PREFIX)!r}: the mean of its items' scored values "
                "on the pages after this condition's games.")
    if column.startswith("tag_"):
        return f"The session's tag {column.removeprefix('tag_')!r}."
    if column.startswith("final_"):
        return f"The measure {column.removeprefix('final_')!r} at the session's last AI turn."
    if column.startswith("condition_"):
        return f"The participant's condition at place {column.removeprefix('condition_')} of their order."
    if column.startswith("text_"):
        return f"The item's text in {column.removeprefix('text_')}."
    if column.startswith("labels_"):
        return f"What the answers mean in {column.removeprefix('labels_')} ('value: label' joined with ' | ')."
    return f"The turn's measure {column!r}, as the game recorded it."


def _type(series: pd.Series) -> str:
    import pandas as pd

    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    if pd.api.types.is_integer_dtype(series):
        return "integer"
    if pd.api.types.is_float_dtype(series):
        return "number"
    return "string"


def write_package(dfs: Mapping[str, pd.DataFrame], out: Path, meta: Mapping[str, Any]) -> Path:
    """``datapackage.json`` in ``out`` describing the CSV files of ``dfs`` (written already by
    summary.write_tables); ``meta``: the study, plan and config hashes (empty without a study)."""
    resources = []
    for name, df in dfs.items():
        if not len(df.columns):
            continue  # an empty table without columns (no chats at all): its CSV holds nothing to describe
        fields = [{"name": str(c), "type": _type(df[c]), "description": describe(str(c))} for c in df.columns]
        resources.append({"name": name.replace("_", "-"), "path": f"{name}.csv", "profile": "tabular-data-resource",
                          "format": "csv", "mediatype": "text/csv", "encoding": "utf-8",
                          "description": TABLE_TITLES.get(name, name), "schema": {"fields": fields}})
    package: dict[str, Any] = {"profile": "tabular-data-package",
                               "name": re.sub(r"[^a-z0-9._-]+", "-", str(meta.get("study") or "transcripts").lower()),
                               "resources": resources, **{k: v for k, v in meta.items() if k != "study"}}
    if meta.get("study"):
        package["title"] = f"Study {meta['study']}"
    path = out / PACKAGE
    path.write_text(json.dumps(package, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
