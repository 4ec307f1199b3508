"""The results page: one self-contained HTML file (styles and figures inline, nothing fetched), from
the Jinja2 template ``analyze/templates/results.html.j2``; numbers rounded for reading (the CSV files
hold them unrounded)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

TEMPLATE = "results.html.j2"
SIGNIFICANT = 3
P_FLOOR = 0.001


def num(value: Any) -> str:
    """A number for reading: integers as they are, others to three significant digits; empty for none."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e6):
        return str(int(value))
    return f"{value:.{SIGNIFICANT}g}"


def pvalue(value: Any) -> str:
    if value is None:
        return ""
    return f"< {P_FLOOR}" if value < P_FLOOR else f"{value:.3f}"


def render(context: Mapping[str, Any]) -> str:
    env = Environment(loader=PackageLoader("agent.analyze", "templates"), undefined=StrictUndefined,
                      autoescape=select_autoescape(default=True, default_for_string=True), keep_trailing_newline=True)
    env.filters["num"] = num
    env.filters["pvalue"] = pvalue
    return env.get_template(TEMPLATE).render(**context)
