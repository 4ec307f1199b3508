"""Where a participant is in their flow, in words, as ``study status`` and the console's study view show it:
consent, which questionnaire page, which game, done, screened out, withdrawn, timed out.

Pure: the caller gives the participant's row, the current step of their flow (run.py's
:meth:`StudyRun.current_step`), their completed games, and whether a consent page is theirs to answer.
"""

from __future__ import annotations

from agent.core.studies.questionnaires import Step
from agent.core.studies.store import ParticipantRow

MAX_TEXT_CHARS = 200
"""A free-text answer as the status carries it (the console shows it as text, never as markup)."""


def place_of(row: ParticipantRow, step: Step | None, done: int, total: int, consent_pending: bool) -> str:
    """``row``'s place: ``step`` is their flow's current step (None: no questionnaires, or the flow is
    done), ``done`` of ``total`` games completed; ``consent_pending``: a consent page waits for them."""
    if row.outcome == "withdrawn":
        return "withdrawn"
    if row.outcome == "screened_out":
        return "screened out (failed attention checks)"
    if row.outcome == "timed_out":
        return "timed out" if row.state == "dropped" else "timed out (kept: a sign of life brings them back)"
    if row.consent == "refused":
        return "refused consent"
    if row.state == "dropped":
        return "dropped out"
    if consent_pending:
        where = "consent"
    elif step is not None and step.kind == "page":
        where = step.describe()
    elif step is not None:
        where = f"game {step.position} of {total} ({step.condition})"
    elif row.state == "completed" or done >= total:
        where = "done"
    else:
        where = f"game {done + 1} of {total}"
    return f"paused at {where}" if row.state == "paused" else where


def last_texts(answers: list[dict[str, object]], text_items: set[tuple[str, str]]) -> dict[str, str]:
    """Each participant's latest free-text answer (a text item's value, or a choice's "other" text),
    cut to :data:`MAX_TEXT_CHARS`; ``answers`` in the order given (oldest first), ``text_items`` the
    (questionnaire, item) pairs of text kind."""
    out: dict[str, str] = {}
    for a in answers:
        value, other = a.get("value"), a.get("other")
        said = value if (a.get("questionnaire"), a.get("item")) in text_items and isinstance(value, str) else other
        if isinstance(said, str) and said.strip():
            out[str(a["participant"])] = said[:MAX_TEXT_CHARS]
    return out
