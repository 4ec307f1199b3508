"""What LLM calls cost: one price list, and the prices a study's spend caps are counted at.

Two sources, ranked: a config's own ``llm.usd_per_million_input`` / ``usd_per_million_output``
(what the researcher confirmed for their model: a spend cap is counted at these and needs them),
and the shipped list ``prices.yaml`` (published list prices by model name, the longest matching
prefix winning: estimates for ``python -m agent.analyze``, which ``--prices FILE`` replaces).
Nothing here knows a game: a config is anything with ``llm`` and ``uses_llm()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from agent.core.studies.study_file import Study


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    """US dollars per million tokens."""

    def of(self, tokens_in: object, tokens_out: object) -> float:
        """What one call cost (US dollars); a count that is not a whole number costs nothing."""
        count_in = tokens_in if isinstance(tokens_in, int) and not isinstance(tokens_in, bool) else 0
        count_out = tokens_out if isinstance(tokens_out, int) and not isinstance(tokens_out, bool) else 0
        return (count_in * self.input + count_out * self.output) / 1e6


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """Prices by model name from ``path``, or the shipped list; ValueError with one line on a bad file."""
    if path is None:
        text = (resources.files(__package__) / "prices.yaml").read_text(encoding="utf-8")
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read prices {path}: {exc.strerror or exc}") from exc
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"prices {path} are not valid YAML") from exc
    if not isinstance(data, Mapping):
        raise ValueError(f"prices {path} must map model names to {{input: ..., output: ...}}")
    prices = {}
    for model, entry in data.items():
        try:
            prices[str(model)] = Price(float(entry["input"]), float(entry["output"]))
        except (TypeError, KeyError, ValueError) as exc:
            raise ValueError(f"prices {path}: model {model!r} needs numbers 'input' and 'output'") from exc
    return prices


def price_for(model: str | None, prices: Mapping[str, Price]) -> Price | None:
    """The price of the longest model-name prefix listed (dated snapshots take their family's)."""
    if not model:
        return None
    matches = [name for name in prices if model == name or model.startswith(f"{name}-")]
    return prices[max(matches, key=len)] if matches else None


def configured_price(config: Any) -> Price | None:
    """The config's own prices (``llm.usd_per_million_input/output``); None for a player without an
    LLM or a config that sets none."""
    llm = config.llm
    if not config.uses_llm() or llm.usd_per_million_input is None or llm.usd_per_million_output is None:
        return None
    return Price(float(llm.usd_per_million_input), float(llm.usd_per_million_output))


def missing_prices(study: Study) -> str | None:
    """One line when the study caps spend but an LLM condition's config sets no prices; else None."""
    spec = study.online
    if spec is None or (spec.spend_cap_participant_usd is None and spec.spend_cap_study_usd is None):
        return None
    for condition in study.conditions:
        if condition.config.uses_llm() and configured_price(condition.config) is None:
            return (f"study {study.path}: online spend caps need the model's prices: condition {condition.name!r} "
                    "sets no llm.usd_per_million_input and llm.usd_per_million_output")
    return None
