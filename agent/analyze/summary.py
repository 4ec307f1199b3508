"""Tables as files and the HTML summary: pandas for the tables, matplotlib for the plots.

The summary is one self-contained HTML file (plots embedded as PNG), so it can be mailed or
archived with the study. Sessions are grouped by each tag that tells them apart (or the tags
named with ``--by``); with no such tag, all sessions form one group.

A connection that never reached a turn (a link preview, a page closed or a reconnect that ended
before the game asked for a turn) is no session of the summary: it is counted on its own line
("connections without a turn"); ``sessions.csv`` keeps its row (``turns`` 0).
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, StrictUndefined, select_autoescape

from agent.analyze.tables import TAG_PREFIX, Tables

if TYPE_CHECKING:
    import pandas as pd

    from agent.analyze.replays import ReplayLink

TABLES = ("sessions", "turns", "chats", "llm_calls")
STUDY_TABLES = ("participants", "study_games", "answers", "scores", "items")
"""Written only with ``--study`` (the last three: a study with questionnaires)."""
FREE_TEXT = ("short_text", "long_text")
WHOLE = ("order", "game_position", "step", "position", "games", "games_completed", "max_chars")
"""Columns of the questionnaire tables that hold whole numbers."""
MAX_TEXT_ROWS = 500
"""Free-text answers shown on the page (answers.csv keeps all)."""
ALL = "all sessions"
MAX_SESSIONS_PLOTTED = 200
"""Per-session bar plots stop here (a page with thousands of bars helps nobody); tables keep all."""


@dataclass(frozen=True)
class Written:
    files: list[Path]
    html: Path


def frames(tables: Tables) -> dict[str, pd.DataFrame]:
    import pandas as pd

    extra = [name for name in STUDY_TABLES if getattr(tables, name)]
    dfs = {name: pd.DataFrame(getattr(tables, name)) for name in (*TABLES, *extra)}
    for name in ("answers", "scores", "items"):
        # Whole numbers that may be missing (a page before the first game has no order): not 1.0.
        if name not in dfs:
            continue
        df = dfs[name]
        for col in WHOLE:
            if col in df.columns:
                df[col] = df[col].astype("Int64")
    return dfs


def played(dfs: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The tables with the sessions that reached at least one turn, and the ids of the others
    (connections without a turn)."""
    sessions = dfs["sessions"]
    if sessions.empty or "turns" not in sessions:
        return dfs, []
    reached = sessions["turns"].fillna(0) > 0
    return {**dfs, "sessions": sessions[reached]}, [str(s) for s in sessions.loc[~reached, "session"]]


def write_tables(dfs: dict[str, pd.DataFrame], out: Path) -> list[Path]:
    """CSV always; Parquet too when pyarrow is installed."""
    try:
        import pyarrow  # noqa: F401 - only asks whether it is there
        parquet = True
    except ImportError:
        parquet = False
    written = []
    for name, df in dfs.items():
        path = out / f"{name}.csv"
        df.to_csv(path, index=False)
        written.append(path)
        if parquet:
            path = out / f"{name}.parquet"
            # Mixed-type columns (a tag that is a number in one file, a word in another) as text.
            safe = df.copy()
            for col in safe.columns:
                if safe[col].dtype == object:
                    safe[col] = safe[col].map(lambda v: v if v is None or isinstance(v, str) else str(v))
            safe.to_parquet(path, index=False)
            written.append(path)
    return written


def group_tags(sessions: pd.DataFrame, wanted: Sequence[str]) -> list[str]:
    """Tag columns to group by: those asked for, else every tag that splits the sessions into groups
    (more than one value, and not one value per session like a participant id)."""
    columns = [c for c in sessions.columns if c.startswith(TAG_PREFIX)]
    if wanted:
        return [f"{TAG_PREFIX}{w}" for w in wanted]
    varying = [c for c in columns if sessions[c].nunique(dropna=True) > 1]
    splitting = [c for c in varying if sessions[c].nunique(dropna=True) < len(sessions)]
    return splitting or varying


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _session_names(sessions: pd.DataFrame) -> pd.Series:
    """Bar labels: a tag naming each session on its own (a participant id) before the session id."""
    for col in (c for c in sessions.columns if c.startswith(TAG_PREFIX)):
        values = sessions[col]
        if values.notna().all() and values.nunique() == len(sessions) > 1:
            return values.astype(str) + " · " + sessions["session"].astype(str).str[:8]
    return sessions["session"].astype(str)


def _labels(df: pd.DataFrame, by: str | None) -> pd.Series:
    import pandas as pd

    if by is None or by not in df.columns:
        return pd.Series([ALL] * len(df), index=df.index)
    return df[by].fillna("(none)").astype(str)


def plots(dfs: dict[str, pd.DataFrame], by: str | None) -> list[dict[str, str]]:
    """The summary's figures for one grouping: title and base64 PNG each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    sessions, turns = dfs["sessions"], dfs["turns"]
    out: list[dict[str, str]] = []
    if sessions.empty:
        return out
    sessions = sessions.assign(_group=_labels(sessions, by))
    groups = sorted(sessions["_group"].unique())
    colours = {g: plt.cm.tab10(i % 10) for i, g in enumerate(groups)}

    if not turns.empty and "seconds" in turns and turns["seconds"].notna().any():
        data = turns.assign(_group=_labels(turns, by)).dropna(subset=["seconds"])
        names = sorted(data["_group"].unique())
        fig, ax = plt.subplots(figsize=(5.6, 3.2))
        ax.boxplot([data.loc[data["_group"] == g, "seconds"] for g in names], tick_labels=names)
        ax.set_ylabel("seconds per AI turn")
        ax.set_title("Turn time")
        out.append({"title": "Turn time", "png": _png(fig)})

    if not sessions.empty:
        shown = sessions.sort_values(["_group", "session"]).head(MAX_SESSIONS_PLOTTED)
        fig, axes = plt.subplots(1, 2, figsize=(11, 0.6 + 0.28 * max(len(shown), 4)))
        colour = [colours[g] for g in shown["_group"]]
        tokens = shown["prompt_tokens"] + shown["completion_tokens"]
        names = _session_names(shown)
        axes[0].barh(names, tokens, color=colour)
        axes[0].set_xlabel("tokens (prompt + completion)")
        axes[1].barh(names, shown["est_cost_usd"].fillna(0), color=colour)
        axes[1].set_xlabel("estimated cost (USD)")
        axes[1].set_yticklabels([])
        for ax in axes:
            ax.invert_yaxis()
        handles = [plt.Rectangle((0, 0), 1, 1, color=colours[g]) for g in groups]
        fig.legend(handles, groups, loc="upper center", ncol=min(len(groups), 5), bbox_to_anchor=(0.5, 1.08))
        fig.suptitle("Tokens and estimated cost per session", y=1.14)
        out.append({"title": "Tokens and estimated cost per session", "png": _png(fig)})

        fig, ax = plt.subplots(figsize=(5.6, 3.2))
        names = sorted(sessions["_group"].unique())
        ax.boxplot([sessions.loc[sessions["_group"] == g, "chats"] for g in names], tick_labels=names)
        ax.set_ylabel("chat replies per session")
        ax.set_title("Chats per session")
        out.append({"title": "Chats per session", "png": _png(fig)})

    measures = [c for c in turns.columns if c == "pieces_on_board"] if not turns.empty else []
    for measure in measures:
        data = turns.dropna(subset=[measure]).assign(_group=_labels(turns, by))
        if data.empty:
            continue
        fig, ax = plt.subplots(figsize=(5.6, 3.2))
        for _, rows in data.groupby("session"):
            rows = rows.sort_values("turn")
            ax.plot(rows["turn"], rows[measure], marker="o", alpha=0.8, color=colours.get(rows["_group"].iloc[0]))
        lines = [plt.Line2D([0], [0], color=colours[g]) for g in groups]
        ax.legend(lines, groups, fontsize=8)
        ax.set_xlabel("AI turn")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(measure.replace("_", " "))
        ax.set_title("Pieces placed over turns" if measure == "pieces_on_board" else measure)
        out.append({"title": "Pieces placed over turns", "png": _png(fig)})
    return out


def group_summary(dfs: dict[str, pd.DataFrame], by: str | None) -> pd.DataFrame:
    """One row per group: sessions, turns, turn time, chats, tokens and cost."""
    import pandas as pd

    sessions, turns = dfs["sessions"], dfs["turns"]
    if sessions.empty:
        return pd.DataFrame()
    sessions = sessions.assign(_group=_labels(sessions, by))
    turns = turns.assign(_group=_labels(turns, by)) if not turns.empty else turns
    rows = []
    for group, rows_s in sessions.groupby("_group"):
        t = turns[turns["_group"] == group] if not turns.empty else turns
        sec = t["seconds"].dropna() if "seconds" in t else pd.Series(dtype=float)
        row = {"group": group, "sessions": len(rows_s), "AI turns": int(rows_s["turns"].sum()),
               "turn time mean (s)": sec.mean() if len(sec) else math.nan,
               "turn time p95 (s)": sec.quantile(0.95) if len(sec) else math.nan,
               "chats per session": rows_s["chats"].mean(),
               "LLM calls": int(rows_s["llm_calls"].sum()), "LLM failures": int(rows_s["llm_failures"].sum()),
               "guard overrides": int(rows_s["guard_overrides"].sum()) if "guard_overrides" in rows_s else 0,
               "thinking lines": int(rows_s["thinking_lines"].sum()) if "thinking_lines" in rows_s else 0,
               "tokens per session": (rows_s["prompt_tokens"] + rows_s["completion_tokens"]).mean(),
               "est. cost per session (USD)": rows_s["est_cost_usd"].mean()}
        if "candidate_plays" in rows_s and rows_s["candidate_plays"].notna().any():
            row["candidate plays"] = int(rows_s["candidate_plays"].fillna(0).sum())
            row["own plays"] = int(rows_s["own_plays"].fillna(0).sum())
        if "final_pieces_on_board" in rows_s:
            row["pieces on board at the end (mean)"] = rows_s["final_pieces_on_board"].mean()
        rows.append(row)
    return pd.DataFrame(rows)


def _html_table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, na_rep="–", float_format=lambda v: f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}",
                      classes="data", border=0, escape=True)


def render_html(dfs: dict[str, pd.DataFrame], tables: Tables, by: Sequence[str], source: Path,
                files: Sequence[Path], replays: Sequence[ReplayLink] = (), without_turn: Sequence[str] = ()) -> str:
    """``dfs``: the sessions that reached a turn (:func:`played`); ``without_turn``: the others' ids."""
    groupings: list[str | None] = [*by] or [None]
    sections = []
    for tag in groupings:
        title = f"By {tag.removeprefix(TAG_PREFIX).replace('_', ' ')}" if tag else "All sessions"
        sections.append({"title": title, "table": _html_table(group_summary(dfs, tag)), "plots": plots(dfs, tag)})
    sessions = dfs["sessions"]
    shown = [c for c in ("session", "participant", "condition", "order", "previous_condition", "game_completed",
                         *[c for c in sessions.columns if c.startswith(TAG_PREFIX)], "game",
                         "player_kind", "model", "turns", "turns_ended", "turn_seconds_mean", "chats", "llm_calls",
                         "llm_failures", "guard_overrides", "thinking_lines", "candidate_plays", "own_plays",
                         "est_cost_usd", "final_pieces_on_board", "end_reason",
                         "config_sha256", "templates_sha256", "agent_version") if c in sessions.columns]
    scales, texts = questionnaire_tables(dfs)
    template = (resources.files("agent.analyze") / "templates" / "summary.html.j2").read_text(encoding="utf-8")
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True), undefined=StrictUndefined)
    return env.from_string(template).render(
        source=str(source), n_sessions=len(sessions), sections=sections,
        sessions_table=_html_table(sessions[shown]) if not sessions.empty else "",
        skipped=tables.skipped, files=[f.name for f in files],
        replays=sorted(replays, key=lambda link: (link.label, link.href)), without_turn=list(without_turn),
        scales_table=scales, texts_table=texts)


def questionnaire_tables(dfs: dict[str, pd.DataFrame]) -> tuple[str, str]:
    """The questionnaires on the page, as HTML (escaped: a participant's free text shows as text,
    never as markup): each scale's mean per condition, and the free-text answers."""
    import pandas as pd

    scales = ""
    scores = dfs.get("scores", pd.DataFrame())
    columns = [c for c in scores.columns if c.startswith("score_")]
    if columns:
        means = scores.groupby("condition")[columns].agg(["mean", "count"])
        means.columns = [f"{c.removeprefix('score_')} ({stat})" for c, stat in means.columns]
        scales = _html_table(means.reset_index())
    texts = ""
    answers = dfs.get("answers", pd.DataFrame())
    if not answers.empty:
        free = answers[answers["kind"].isin(FREE_TEXT) | answers["other"].notna()]
        free = free[free["value"].notna()][["participant", "condition", "questionnaire", "item", "value", "other"]]
        if not free.empty:
            texts = _html_table(free.head(MAX_TEXT_ROWS))
    return scales, texts


def write_summary(tables: Tables, out: Path, by: Sequence[str], source: Path,
                  replays: Sequence[ReplayLink] = (), columns: Sequence[str] = ()) -> Written:
    """``columns``: group by these session columns (a study's condition and order) besides the tags
    asked for with ``by``; without either, by every tag that varies."""
    from agent.analyze.package import write_package

    out.mkdir(parents=True, exist_ok=True)
    dfs = frames(tables)
    files = write_tables(dfs, out)
    files.append(write_package(dfs, out, tables.meta))
    dfs, without_turn = played(dfs)
    sessions = dfs["sessions"]
    present = [c for c in columns if c in sessions.columns and sessions[c].notna().any()]
    tags = [*present, *group_tags(sessions, by)] if by or not present else present
    tags = tags if not sessions.empty else []
    html = out / "summary.html"
    text = render_html(dfs, tables, tags, source, files, replays, without_turn)
    html.write_text(text, encoding="utf-8")
    return Written(files, html)
