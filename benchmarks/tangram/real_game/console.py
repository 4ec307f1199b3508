"""What the game printed: Godot sends its prints and errors to the page's console."""

from __future__ import annotations

import re

ERROR_LINE = re.compile(r"^\s*(USER SCRIPT ERROR|SCRIPT ERROR|USER ERROR|ERROR|Parse Error|Uncaught)\b", re.IGNORECASE)
"""A line that opens a GDScript or engine error (its ``at:`` lines that follow are not counted again)."""
WARNING_LINE = re.compile(r"^\s*(USER WARNING|WARNING)\b:", re.IGNORECASE)
PUT_BACK_LINE = "Sorry I had some trouble playing"
"""The game's chat line (printed too) when a finish finds the AI's piece overlapping and puts it back."""
NO_AGENT_LINE = "Failed to find an AI Agent to connect to."
MOVING_LINE = re.compile(r"^moving (\w+) this turn$")
"""Printed when the human first presses on a piece in a turn."""
OVERLAPS_LINE = re.compile(r"^\[(.*)\]$")
"""``print(overlaps)``: the list of what a piece touches, printed after a drop and for every
on-board piece while a state is built."""


def count_errors(lines: list[str]) -> int:
    """Errors among console messages (each may hold several lines)."""
    return sum(1 for message in lines for line in message.splitlines() if ERROR_LINE.match(line))


def count_warnings(lines: list[str]) -> int:
    return sum(1 for message in lines for line in message.splitlines() if WARNING_LINE.match(line))


def error_lines(lines: list[str], limit: int = 20) -> list[str]:
    """The first ``limit`` error lines, for the report."""
    found = [line.strip() for message in lines for line in message.splitlines() if ERROR_LINE.match(line)]
    return found[:limit]


def overlaps(line: str) -> list[str] | None:
    """The names in a printed overlap list (``[]``, ``["Red", "BOUNDARY"]``, ``[&"Red"]``), else None."""
    match = OVERLAPS_LINE.match(line.strip())
    if match is None:
        return None
    inner = match.group(1).strip()
    if not inner:
        return []
    names = [part.strip().lstrip("&").strip('"') for part in inner.split(",")]
    return names if all(re.fullmatch(r"\w+", n) for n in names) else None
