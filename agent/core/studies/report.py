"""A study's status as the tables a person reads (``python -m agent study status``, a game's pilot)."""

from __future__ import annotations

from agent.core.studies.run import ParticipantStatus, StudyStatus

__all__ = ["format_status", "participant_line", "participant_notes", "when"]


def when(stamp: str | None) -> str:
    """A stored time (``2026-11-29T09:23:10.722512Z``) to the second: ``2026-11-29 09:23:10Z``."""
    return f"{stamp[:19].replace('T', ' ')}Z" if stamp else "-"


def participant_notes(p: ParticipantStatus) -> list[str]:
    """Who consented, whose page closed, who was dropped and why, and when (what applies)."""
    notes = []
    if p.online or p.consent is not None:
        notes.append(f"consent {p.consent} {when(p.consent_at)}" if p.consent else "consent -")
    if p.left_at is not None:
        notes.append(f"page closed {when(p.left_at)}, not back")
    if p.finished_page_at is not None:
        notes.append(f"saw the completion page {when(p.finished_page_at)}")
    if p.state == "dropped":
        notes.append(f"dropped {when(p.dropped_at)}" + (f": {p.dropped_why}" if p.dropped_why else ""))
    return notes


def participant_line(p: ParticipantStatus) -> str:
    following = f"; next game: {p.next_condition} ({p.completed + 1} of {p.games})" if p.next_condition else ""
    took = f" taken over from dropped {p.replaces}" if p.replaces else ""
    notes = "".join(f"; {n}" for n in participant_notes(p))
    # The place says more than the rest of the line at a page, consent, or an early end (a game, done
    # and dropped out are said already).
    plain = p.place in ("", "done", "dropped out") or p.place.startswith(("game ", "paused at game "))
    at = "" if plain else f"; at: {p.place}"
    return (f"{p.id} {p.state}: sequence {p.sequence} ({', '.join(p.order)}){took}, "
            f"{p.completed} of {p.games} games completed{following}{at}{notes}")


def format_status(status: StudyStatus) -> str:
    """The status as the tables a person reads."""
    c = status.counts
    lines = [f"study {status.study} ({status.design}, plan {status.plan_sha256}, {status.store})",
             f"participants: {sum(c.values())} ({c['active']} active, {c['paused']} paused, "
             f"{c['completed']} completed, {c['dropped']} dropped out)",
             status.balance, "", "sequence  order" + " " * 30 + "participants  completed  dropped"]
    for s in status.sequences:
        order = ", ".join(s.order)
        lines.append(f"{s.sequence:>8}  {order:<35}{s.participants:>12}  {s.completed:>9}  {s.dropped:>7}")
    lines += ["", "condition             participants  games completed  games started"]
    lines += [f"{b.condition:<20}  {b.participants:>12}  {b.games_completed:>15}  {b.games_started:>13}"
              for b in status.by_condition]
    if status.participants:
        lines += ["", *(participant_line(p) for p in status.participants)]
    return "\n".join(lines)
