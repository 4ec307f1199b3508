"""The "long" data every test reads, checked once: one row per participant and condition, with columns
``participant`` (str), ``condition`` (str), ``position`` (1-based place in the participant's order) and
``value`` (the outcome, a float; a row without a value is left out)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

COLUMNS = ("participant", "condition", "position", "value")
MAX_ROWS = 1_000_000  # far beyond any user study; a bound on what a caller can hand in


@dataclass(frozen=True)
class Long:
    """Checked long data: ``frame`` holds the rows with a value, sorted by participant and condition;
    ``conditions`` names every condition of the input (sorted), also one whose values are all missing."""

    frame: pd.DataFrame
    conditions: tuple[str, ...]


def check_long(data: pd.DataFrame) -> Long:
    """The rows of ``data`` ready for a test, or a ValueError saying what is wrong with them."""
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame with columns {', '.join(COLUMNS)}, got {type(data).__name__}")
    missing = [c for c in COLUMNS if c not in data.columns]
    if missing:
        raise ValueError(f"the data lacks the column(s) {', '.join(missing)} (it needs {', '.join(COLUMNS)})")
    if len(data) > MAX_ROWS:
        raise ValueError(f"the data has {len(data)} rows; at most {MAX_ROWS} are analysed")
    frame = pd.DataFrame(
        {
            "participant": data["participant"].astype(str),
            "condition": data["condition"].astype(str),
            "position": pd.to_numeric(data["position"], errors="coerce"),
            "value": pd.to_numeric(data["value"], errors="coerce"),
        }
    )
    bad = data["value"].notna() & frame["value"].isna()
    if bad.any():
        first = data["value"][bad].iloc[0]
        raise ValueError(f"value must be a number; row {int(bad.to_numpy().argmax())} has {first!r}")
    duplicated = frame.duplicated(["participant", "condition"], keep=False)
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(
            f"participant {row['participant']} has more than one row for condition {row['condition']}: "
            "the tests expect one value per participant and condition"
        )
    conditions = tuple(sorted(frame["condition"].unique()))
    kept = frame[frame["value"].notna()].sort_values(["participant", "condition"], kind="stable")
    return Long(kept.reset_index(drop=True), conditions)


def require_conditions(long: Long, *names: str) -> None:
    """A ValueError naming a condition that is not in the data."""
    for name in names:
        if name not in long.conditions:
            raise ValueError(f"no condition {name!r} in the data (it has {', '.join(long.conditions) or 'none'})")


def pairs(long: Long, a: str, b: str) -> pd.DataFrame:
    """One row per participant with a value in both ``a`` and ``b``: columns ``a`` and ``b``."""
    require_conditions(long, a, b)
    if a == b:
        raise ValueError(f"a comparison needs two different conditions, got {a!r} twice")
    wide = long.frame.pivot(index="participant", columns="condition", values="value")
    return wide.reindex(columns=[a, b]).dropna().sort_index()


def complete(long: Long) -> pd.DataFrame:
    """Participants (rows) with a value in every condition (columns, sorted)."""
    wide = long.frame.pivot(index="participant", columns="condition", values="value")
    return wide.reindex(columns=list(long.conditions)).dropna().sort_index()


def group(long: Long, condition: str) -> pd.Series:
    """Every value of ``condition`` (between-subject: one per participant)."""
    require_conditions(long, condition)
    return long.frame.loc[long.frame["condition"] == condition, "value"].reset_index(drop=True)
