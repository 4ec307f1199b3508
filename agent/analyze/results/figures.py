"""One figure per outcome: its values per condition, each participant's own line across the
conditions (within-subject; between-subject: the points side by side), and each condition's median.

SVG text, the same bytes for the same data: no date in its metadata, a fixed hash salt for its ids,
text kept as text (no glyph paths), no random jitter.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

SALT = "agent-results"
WIDTH_IN = 5.2
HEIGHT_IN = 3.4
MAX_LINES = 2000
"""Participants drawn at most (a bound on the file's size; the tables hold them all)."""


def outcome_figure(frame: pd.DataFrame, outcome: str, conditions: Sequence[str], label: str, within: bool) -> str:
    """The outcome's figure as an ``<svg>`` element (the XML declaration and DOCTYPE left out, to sit inline)."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.hashsalt": SALT, "svg.fonttype": "none", "font.size": 9.0,
                                "axes.spines.top": False, "axes.spines.right": False}):
        fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN))
        ax = fig.add_subplot()
        place = {c: i for i, c in enumerate(conditions)}
        people = sorted(frame["participant"].unique())[:MAX_LINES]
        for n, pid in enumerate(people):
            mine = frame[frame["participant"] == pid]
            mine = mine.assign(x=mine["condition"].map(place)).sort_values("x")
            if within:
                ax.plot(mine["x"], mine["value"], color="#8aa6c1", alpha=0.55, linewidth=0.9, marker="o",
                        markersize=2.5)
            else:
                spread = ((n % 9) - 4) * 0.03  # side by side, the same every time
                ax.plot(mine["x"] + spread, mine["value"], linestyle="none", color="#8aa6c1", marker="o",
                        markersize=3)
        for c in conditions:
            values = frame.loc[frame["condition"] == c, "value"]
            if len(values):
                ax.hlines(float(values.median()), place[c] - 0.22, place[c] + 0.22, color="#222", linewidth=2.2)
        ax.set_xticks(range(len(conditions)), list(conditions))
        ax.set_xlim(-0.5, len(conditions) - 0.5)
        ax.set_ylabel(label)
        ax.set_title(f"{outcome}: a line per participant, a bar at each median" if within
                     else f"{outcome}: a point per participant, a bar at each median", fontsize=9)
        fig.tight_layout()
        buffer = StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]
