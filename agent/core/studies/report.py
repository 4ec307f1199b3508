"""A study's status as the tables a person reads (``python -m agent study status``, a game's pilot)."""

from __future__ import annotations

from agent.core.studies.run import ParticipantStatus, StudyStatus

__all__ = ["format_status", "participant_line"]


def participant_line(p: ParticipantStatus) -> str:
    following = f"; next game: {p.next_condition} ({p.completed + 1} of {p.games})" if p.next_condition else ""
    took = f" taken over from dropped {p.replaces}" if p.replaces else ""
    return (f"{p.id} {p.state}: sequence {p.sequence} ({', '.join(p.order)}){took}, "
            f"{p.completed} of {p.games} games completed{following}")


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
